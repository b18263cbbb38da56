"""The steering's words, as data: which verbs ask for which effect, which words say
nothing, which name a text or a name.

Tools declare what they do (``does``: writes, sends, runs...); a user writes in English,
French, German or Spanish, and every word is first read in English
(co_core.agent.tools.lexicon.in_english, whose tables hold the other languages). Then:

- :data:`EFFECT_VERBS`: the English verbs that explicitly ask for a write, a send or an
  execution. Only base forms (the imperative, the infinitive) and ``-ing`` forms count:
  "I created a note yesterday" asks for nothing.
- :data:`ACTION_VERBS`: verbs that ask Co to act in the world ("turn on the light"),
  which no tool's effect covers unless a tool says it does that.
- :data:`LIVE_FACTS`: words for facts that only a live source knows (the weather, the
  news): a question about them no tool covers can only be guessed.

Adding a language is adding a table to co_core.agent.tools.lexicon; nothing else names a
word.
"""

from __future__ import annotations

from typing import Literal

Effect = Literal["write", "send", "exec"]

EFFECT_VERBS: dict[Effect, frozenset[str]] = {
    "write": frozenset(
        """create make write rewrite overwrite add append prepend insert put save store edit
        change modify update set replace rename move delete remove erase fix correct label
        tag archive mark tick jot copy paste fill clear empty""".split()
    ),
    "send": frozenset("send post reply respond forward share publish draft notify invite".split()),
    "exec": frozenset("run execute exec launch invoke eval evaluate compute calculate".split()),
}

# English forms of a verb that do not follow base + "ing" / base - "e" + "ing".
IRREGULAR_ING = {
    "run": "running",
    "put": "putting",
    "set": "setting",
    "jot": "jotting",
    "tick": "ticking",
    "tag": "tagging",
    "exec": "execing",
}

# Other words for what tools' names say, counted a little when the user says them
# ("show me the files" asks to list them, "look through my notes" to search them).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "open": ("read",),
    "view": ("read", "list"),
    "show": ("read", "list"),
    "display": ("read", "list"),
    "see": ("read", "list"),
    "tell": ("read",),
    "check": ("read", "search"),
    "look": ("search", "read"),
    "find": ("search",),
    "lookup": ("search",),
    "locate": ("search",),
    "browse": ("list",),
    "enumerate": ("list",),
    "add": ("append",),
    "task": ("todo",),
    "favorite": ("bookmark",),
    "put": ("append", "write"),
    "insert": ("append",),
    "jot": ("append", "create"),
    "make": ("create",),
    "new": ("create",),
    "save": ("write",),
    "store": ("write",),
    "change": ("edit",),
    "modify": ("edit",),
    "update": ("edit",),
    "set": ("edit",),
    "replace": ("edit",),
    "fix": ("edit",),
    "correct": ("edit",),
    "execute": ("run",),
    "exec": ("run",),
    "launch": ("run",),
    "invoke": ("run",),
    "compute": ("run",),
    "calculate": ("run",),
    "directory": ("folder",),
    "dir": ("folder",),
    "doc": ("document", "file"),
    "mail": ("email",),
    "inbox": ("email",),
    "unread": ("email",),
    "agenda": ("calendar",),
    "dm": ("message",),
}
SYNONYM_WEIGHT = 0.6
# Words that make a sentence a request, besides a question and the verbs above (in English;
# other languages' words are looked up through TRANSLATIONS first).
REQUEST_WORDS = frozenset(
    """please can could would will need want like let give show tell read list search find
    check look open get fetch help bitte kannst könntest brauche möchte gib sag peux
    pouvez voudrais besoin donne dis puedes podrías necesito quiero dame dime
    remind remember rappelle souviens erinnere erinnern recuérdame recuerda""".split()
)
# What a file name and a command in backticks are, in the words tools describe themselves
# with: a clause naming "notes.txt" is about a file.
FILE_WORD = "file"
COMMAND_WORD = "command"

# Words that end a clause: a verb asks for something about the words of its own clause.
CLAUSE_BREAKS = frozenset("but mais aber pero".split())

# Words that make a command in backticks the means of the request ("use `wc -l`").
USE = frozenset("use using utilise utiliser utilisez avec nimm nutze verwende usa usar".split())

# A word just before a verb that says it is not asked for ("don't delete", "ne supprime")...
NEGATIONS = frozenset(
    """not don't dont never no without ne n pas jamais sans nicht nie kein keine keinen
    ohne nunca sin""".split()
)
# ... or that makes it a noun or a participle ("the draft", "is set", "does config.ini set").
NOT_A_REQUEST = frozenset(
    """the a an my your our their his her its this that these those some any every each
    which what whose is are was were be been being has have had does did it's s
    le la les l un une des du de d mon ma mes ton ta tes son sa ses notre nos votre vos
    leur leurs ce cet cette est été
    der die das den dem des ein eine einen einem einer eines mein meine meinen meinem
    meiner dein deine deinen sein seine ihr ihre ist sind wurde wurden
    el los las una unos unas mi mis tu tus su sus es fue""".split()
)

# Words that introduce a name ("a note named Shopping"), or name a text rather than give
# one ("with the text:", "la ligne"): never part of a copied name.
NAMING = frozenset("named called titled text content line message body words code command".split())

# Verbs that ask Co to act in the world: done only by a tool that does it.
ACTION_VERBS = frozenset(
    """turn switch dim brighten lock unlock close book order buy pay call ring dial play
    pause stop restart""".split()
)
# Facts that only a live source knows; a question about them no tool covers is declined.
LIVE_FACTS = frozenset("weather forecast rain snow news headline stock traffic score".split())

# Words a copied value neither starts nor ends on ("the wifi", not "wifi for the"): the
# determiners above, prepositions and question words.
SMALL_WORDS = NOT_A_REQUEST | frozenset(
    """à au aux avec dans pour par sur en et ou mit im in an am auf für von vom zu zum zur
    und oder ins al del con para por y o
    something anything nothing everything someone somebody stuff thing new another
    quelque chose rien nouveau nouvelle etwas nichts neue neuen neues algo nada nuevo nueva
    hinzu dazu ab aus ein weg down up out off
    dieser diese dieses diesem diesen este esta estos estas ese esa
    i me you we us je j moi toi nous vous m t il elle qu ich mir mich du dir dich wir uns yo te nos
    ai as avons avez ont habe hast hat haben habt he has ha hemos han
    quel quelle quels quelles qui quoi quand où comment combien pourquoi
    welche welcher welches welchen wer wen wem was wann wo wie warum
    qué cuál cuáles quién quiénes cuándo dónde cómo cuánto""".split()
)
