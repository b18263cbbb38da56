"""Which tool the user's words ask for, decided before a steered model answers.

The tools are ranked by BM25 over their names and descriptions (never their parameter
names) against the user's words (co_core.steering.intent). Then, in this order:

- nothing clear (the best score under ``CLEAR_MATCH``; a tool's score counts the share
  of its name the words say, so "read notes.txt" is ``read_file``, not
  ``read_drive_file``): the model answers freely, with the tools it may use;
- the best tool's plugin is not set up: Co answers with how to set it up, when the words
  ask for something ("Busy day ahead, hope you're well" asks nothing of ``free_busy``)
  and no tool that works matches nearly as well (``SETUP_MARGIN``);
- the best tool needs more whole texts than the words give (its ``content`` arguments:
  a file's new content, the text an edit searches for and the one it puts instead, each
  quoted or after a colon; "change the port in config.ini to 8088" gives none): the
  best tool of the same effect that fits takes its place (a tool that sets one value) if
  it matches a quarter as well (``FIT_MARGIN``), else Co asks for the text;
- the best tools score about the same (within ``CLOSE``): when exactly one of them
  has the effect the words ask for by a verb ("Use `wc -l`" asks to run), the model
  must call that one; else Co does not pick: the model calls one of those it may use;
- the best tool writes, sends or executes and the user's words do not ask for that
  effect with a verb, in a clause about what the tool handles: Co asks, naming the tool
  and the verb that would ask for it;
- the best tool writes, sends or runs, and the words give no value for an argument it
  needs (no file named, no text): Co asks for it, in one sentence, naming it;
- otherwise the model must call that tool, its values copied from the user's words.

When no tool matches clearly and the words ask Co to do something in the world ("turn on
the light") or about facts only a live source knows (the weather), Co says it has no
tool for that, rather than letting a tiny model invent an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from co_core.agent.tools.bm25 import words
from co_core.steering.contracts import CHANGES, Contract, Described, contract_of
from co_core.steering.intent import VERB_OF, Intent
from co_core.steering.lexicon import EFFECT_VERBS
from co_core.steering.runs import Source
from co_core.steering.values import Reading

CLEAR_MATCH = 2.5  # the best tool's score for the words to count as asking for it
CLOSE = 0.8  # a tool scoring this share of the best one matches about as well
SETUP_MARGIN = 0.6  # a usable tool this close to a tool not set up: no setup answer
FIT_MARGIN = 0.25  # a tool of the same effect that fits, instead of one that cannot
EFFECT_WEIGHT = 1.5  # a tool that does what the words' verb asks for ranks this much higher

DOES = {
    "write": "changes files or notes",
    "send": "sends something to other people",
    "exec": "runs a program",
    None: "may change something (its effect is not declared)",
}
DEFAULT_VERB = {"write": "change", "send": "send", "exec": "run", None: "do"}


class Tools(Described, Protocol):
    """What routing needs to know about the tools (the toolbox)."""

    def rank_all(self, query: dict[str, float]) -> list[tuple[str, float]]: ...
    def blocked_call(self, name: str) -> str | None: ...
    def effect(self, name: str) -> str | None: ...
    def doc_words(self, name: str) -> set[str]: ...


@dataclass(frozen=True)
class Route:
    """What Co does with a steered model's first request of a turn."""

    kind: Literal["call", "among", "ask", "setup", "free", "decline"]
    tools: tuple[str, ...] = ()  # the tool to call ("call"), the candidates ("among")
    answer: str = ""  # Co's own answer ("ask", "setup", "decline")
    why: str = ""  # for the benchmark's probe and /context


def coverage(intent: Intent, doc: set[str]) -> float:
    """The share of the user's words (quotes and file names aside) the tool's text holds."""
    if not intent.words:
        return 1.0  # only a file name or quoted text: that is the whole request
    return sum(w in doc for w in intent.words) / len(intent.words)


def sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def ask_first(tool: str, effect: str | None) -> str:
    """Co's question when the best tool has an effect the user did not ask for."""
    verbs = EFFECT_VERBS.get(effect, frozenset()) if effect else frozenset()  # type: ignore[call-overload]
    own = [w for w in words(tool) if VERB_OF.get(w) and w in verbs]
    verb = own[0] if own else DEFAULT_VERB.get(effect, "do")
    return (
        f"That sounds like a job for {tool}, which {DOES.get(effect, DOES[None])}: shall I? "
        f'I do that only when you ask for it in so many words: say, for example, "{verb} ..." '
        "with what you want."
    )


def _names(keys: list[str]) -> str:
    shown = [k.replace("_", " ") for k in keys]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def ask_back(tool: Contract, missing: list[str]) -> str:
    """Co's question when the words do not give what the tool needs: what is missing, as
    the tool names it, and how to give it."""
    whole = [k for k in missing if tool.roles.get(k) in ("content", "text")]
    how = " (put the text in quotes)" if whole else ""
    return (
        f"I can do that with {tool.name}, but your words do not say the {_names(missing)}: "
        f"what should it be{how}?"
    )


def decline(intent: Intent) -> str | None:
    """Co's answer when no tool matches and the words ask for an act in the world or for a
    fact only a live source has: one sentence, never a guess."""
    if intent.facts:
        return (
            f"I have no tool that knows the {intent.facts[0]}, so I cannot tell you: I would "
            "only be guessing."
        )
    if intent.actions:
        return f'None of my tools can do that ("{intent.actions[0]}"), so I cannot do it here.'
    return None


def named(tool: str, query: dict[str, float]) -> float:
    """The share of the tool's name the words say: ``read_drive_file`` for "read notes.txt"
    has "drive" unsaid, ``read_file`` none (a tool's name is what it is)."""
    parts = set(words(tool))
    return sum(w in query for w in parts) / len(parts) if parts else 1.0


def ranked(intent: Intent, tools: Tools) -> list[tuple[str, float]]:
    """BM25 scores, each times the share of the tool's name the words say, and more for a
    tool whose declared effect the words ask for with a verb ("Put 'x' on my list": the
    tool that adds to it, not the one that lists it)."""
    scored = [
        (
            name,
            score
            * (1 + named(name, intent.query))
            / 2
            * (EFFECT_WEIGHT if tools.effect(name) in intent.effects else 1.0),
        )
        for name, score in tools.rank_all(intent.query)
    ]
    return sorted(scored, key=lambda item: -item[1])


def about(tools: Tools, name: str) -> list[str]:
    """What a tool handles, as its words say: its name's and its plugin's ("a note",
    "the pantry")."""
    spec = tools.spec(name)
    return [*words(name), *(words(spec.plugin) if spec is not None else [])]


def fits(tool: Contract, given: int) -> bool:
    """Can the words give the tool the whole texts it needs? Its ``content`` arguments
    (quoted, or after a colon) each one of the ``given`` literal parts; one ``text`` may
    also be a run of the words ("a note Groceries with milk and eggs"), a file's new
    content never ("Mets le port de config.ini à 8088" gives none: a run of it would
    replace the whole file)."""
    whole = len(tool.with_role("content", required=True))
    texts = len(tool.with_role("text", required=True))
    return whole <= given and whole + texts <= given + (1 if texts else 0)


def route(intent: Intent, tools: Tools) -> Route:
    scored = ranked(intent, tools)
    if not scored or scored[0][1] < CLEAR_MATCH:
        top3 = ", ".join(f"{n} {s:.1f}" for n, s in scored[:3])
        refused = decline(intent)
        if refused is not None:
            return Route("decline", answer=refused, why=f"no tool for it ({top3})")
        return Route("free", why=f"no tool matches clearly ({top3})")
    best, top = scored[0]
    contracts: dict[str, Contract] = {}

    def contract(name: str) -> Contract:
        if name not in contracts:
            contracts[name] = contract_of(tools, name)
        return contracts[name]

    def usable(name: str) -> bool:
        return tools.blocked_call(name) is None and intent.asks(
            tools.effect(name), about(tools, name), verb=words(name)[0] if words(name) else ""
        )

    if not usable(best):
        # A tool the model may call, nearly as good: better than Co answering in its place.
        near = [n for n, score in scored if score >= top * SETUP_MARGIN and usable(n)]
        if not near and intent.question and not intent.effects:  # a question reads
            near = [n for n, score in scored if score >= CLEAR_MATCH and usable(n)][:1]
        if near:
            best, top = near[0], dict(scored)[near[0]]
        elif not intent.request:
            return Route("free", why=f"{best} not usable, and nothing was asked")
        elif tools.blocked_call(best) is not None:
            rivals = [name for name, score in scored if score >= top * CLOSE]
            blocked = {tools.blocked_call(name) for name in rivals}
            if None in blocked or len(blocked) > 1:
                return Route("free", why="close tools of plugins not set up")
            return Route("setup", (best,), sentence(str(blocked.pop())), "not set up")
        elif tools.effect(best) in intent.effects:
            return Route("free", why=f"{tools.effect(best)} asked, but not of what {best} handles")
        else:
            effect = tools.effect(best)
            return Route("ask", (best,), ask_first(best, effect), f"{effect} not asked for")
    given = len(Source.of(intent.text).parts)  # the texts the words give whole

    def fit(name: str) -> bool:
        return fits(contract(name), given)

    if not fit(best):  # "change the port to 8088" is no edit of a text: a tool that fits
        effect = tools.effect(best)
        instead = [
            n
            for n, score in scored
            if score >= top * FIT_MARGIN and tools.effect(n) == effect and usable(n) and fit(n)
        ]
        if not instead:
            tool = contract(best)
            texts = tool.with_role("content", required=True) or tool.with_role("text")
            return Route("ask", (best,), ask_back(tool, texts), f"{best} needs texts not given")
        best, top = instead[0], dict(scored)[instead[0]]

    def lacking(name: str) -> list[str]:
        """What a tool that writes, sends or runs needs and the words do not give."""
        tool = contract(name)
        if tool.does not in CHANGES:
            return []
        reading = Reading.of(
            tool.schema,
            name=name,
            description=tool.description,
            roles=tool.roles,
            does=tool.does,
            words_=intent.text,
            plugin=tool.spec.plugin if tool.spec is not None else "",
            resolves=tool.spec is not None and tool.spec.resolve is not None,
        )
        return reading.missing()

    close = tuple(n for n, score in scored if score >= top * CLOSE and usable(n) and fit(n))
    doing = [n for n in close if tools.effect(n) in intent.effects]
    able = [n for n in doing if not lacking(n)]
    if doing and not able:  # what was asked needs values the words do not give: ask
        return Route("ask", (doing[0],), ask_back(contract(doing[0]), lacking(doing[0])),
                     f"{doing[0]} needs {lacking(doing[0])}")  # fmt: skip
    close = tuple(n for n in close if n not in doing or n in able)
    why = ""
    if len(close) > 1 and len(able) == 1:  # "Use `wc -l`": the one that does what was asked
        best, why = able[0], f"close scores; {able[0]} does what was asked"
    elif len(close) > 1:
        return Route("among", close, why="close scores")
    elif close:
        best = close[0]
    missing = lacking(best)
    if missing:
        return Route("ask", (best,), ask_back(contract(best), missing), f"{best} needs {missing}")
    if not why:
        why = f"score {top:.1f}, coverage {coverage(intent, tools.doc_words(best)):.0%}"
    return Route("call", (best,), why=why)
