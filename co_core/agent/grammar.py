"""A llama.cpp grammar (GBNF) for "plain text, or one well-formed call of an offered tool".

With it, a model served by llama.cpp cannot name a tool that was not offered, leave out a
required argument, or write an argument of the wrong type: the tokens that would do so
are never sampled. A call is written ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``;
anything not starting with ``<`` is a plain answer.

The JSON schemas pydantic writes for tool parameters are covered (objects with required
and optional properties, strings, numbers, booleans, enums, arrays, ``X | None``,
``$ref``); anything else is any JSON value, and pydantic still validates the call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from co_core.agent.bm25 import STOP

CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"

BASE = r"""
ws ::= [ ]?
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
integer ::= "-"? ([0-9] | [1-9] [0-9] | [1-9] [0-9] [0-9] | [1-9] [0-9] [0-9] [0-9] | [1-9] [0-9] [0-9] [0-9] [0-9] | [1-9] [0-9] [0-9] [0-9] [0-9] [0-9])
number ::= integer ("." [0-9] [0-9]?[0-9]?[0-9]?[0-9]?[0-9]?)?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
text ::= [^<] [^\x00]*
""".strip()
# Integers of up to six digits: a small model's 1234567890 page number is not a page.


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return json.dumps(text, ensure_ascii=False)


def json_literal(value: Any) -> str:
    """The GBNF literal matching ``value`` written as JSON."""
    return literal(json.dumps(value, ensure_ascii=False))


STARTS_AFTER = " \t\n'\"`(:"
ENDS_BEFORE = " \t\n'\"`),:;?!"
TRAILING = ".,:;?!"  # a copy does not end with the sentence's punctuation


def copy_rules(text: str, name: str = "copy") -> dict[str, str]:
    """Rules whose ``name`` matches a JSON string holding a run of ``text`` that starts and
    ends at word edges, not on a small word ("my", "the", "to"): an argument a small model
    can only copy from the user's words."""
    text = text.strip().rstrip(TRAILING).rstrip()
    n = len(text)
    if not n:
        return {name: "string"}

    def small_word(word: re.Match[str] | None) -> bool:
        return word is not None and word.group(0).lower() in STOP

    def end(j: int) -> bool:
        if text[j - 1].isspace() or text[j - 1] in TRAILING:
            return False
        if small_word(re.search(r"\w+$", text[:j])):
            return False  # "the wifi" but not "wifi for the"
        if j == n:
            return True
        nxt = text[j]
        return nxt in ENDS_BEFORE or (nxt == "." and (j + 1 == n or text[j + 1].isspace()))

    rules: dict[str, str] = {}
    for i in range(n - 1, -1, -1):
        piece = literal(json.dumps(text[i], ensure_ascii=False)[1:-1])
        if i + 1 == n:
            rules[f"{name}-{i}"] = piece  # the text's last character: an end either way
        elif end(i + 1):
            rules[f"{name}-{i}"] = f"{piece} {name}-{i + 1} | {piece}"
        else:
            rules[f"{name}-{i}"] = f"{piece} {name}-{i + 1}"
    edges = [
        i for i in range(n) if not text[i].isspace() and (i == 0 or text[i - 1] in STARTS_AFTER)
    ]
    starts = [i for i in edges if not small_word(re.match(r"\w+", text[i:]))] or edges
    rules[name] = '"\\"" ( ' + " | ".join(f"{name}-{i}" for i in starts) + ' ) "\\""'
    return rules


@dataclass
class _Rules:
    defs: Mapping[str, Any]
    rules: dict[str, str] = field(default_factory=dict)
    copy: bool = False  # strings are copied from the user's words (rule ``copy``)
    required_only: bool = False  # optional properties are left out (their defaults apply)
    _resolving: set[str] = field(default_factory=set)

    def add(self, name: str, body: str) -> str:
        base, n = name, 2
        while name in self.rules and self.rules[name] != body:
            name, n = f"{base}-{n}", n + 1
        self.rules[name] = body
        return name

    def value(self, schema: Any, name: str) -> str:
        """An expression matching ``schema`` (helper rules are added as needed)."""
        if not isinstance(schema, Mapping) or not schema:
            return "value"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            key = ref.rpartition("/")[2]
            target = self.defs.get(key)
            if target is None or key in self._resolving:
                return "value"
            self._resolving.add(key)
            try:
                return self.value(target, f"{name}-{_rule_name(key)}")
            finally:
                self._resolving.discard(key)
        if "const" in schema:
            return json_literal(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return "(" + " | ".join(json_literal(v) for v in schema["enum"]) + ")"
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                alts = [self.value(o, f"{name}-{i}") for i, o in enumerate(options)]
                return "(" + " | ".join(dict.fromkeys(alts)) + ")"
        kind = schema.get("type")
        if isinstance(kind, list):
            alts = [self.value({**schema, "type": k}, f"{name}-{k}") for k in kind]
            return "(" + " | ".join(dict.fromkeys(alts)) + ")"
        if kind == "string" and self.copy:
            return "copy"
        if kind in ("string", "integer", "number", "boolean", "null"):
            return str(kind)
        if kind == "array":
            item = self.value(schema.get("items"), f"{name}-item")
            return self.add(name, f'"[" ws ( {item} ( ws "," ws {item} )* )? ws "]"')
        if kind == "object" or "properties" in schema:
            return self.object(schema, name)
        return "value"

    def object(self, schema: Mapping[str, Any], name: str) -> str:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return "object"
        required = set(schema.get("required") or ())
        keys = [k for k in props if k in required or not self.required_only]
        if not keys:
            return '"{" ws "}"'

        pairs = [
            f'{literal(json.dumps(k))} ws ":" ws {self.value(props[k], f"{name}-{_rule_name(k)}")}'
            for k in keys
        ]
        # after-i: properties i.. when one was written already; first-i: when none was.
        after = [""] * (len(keys) + 1)
        first = [""] * (len(keys) + 1)
        for i in range(len(keys) - 1, -1, -1):
            later = after[i + 1]
            if keys[i] in required:
                after[i] = self.add(f"{name}-a{i}", f'ws "," ws {pairs[i]} {later}'.rstrip())
                first[i] = self.add(f"{name}-f{i}", f"{pairs[i]} {later}".rstrip())
            else:
                after[i] = self.add(f"{name}-a{i}", f'( ws "," ws {pairs[i]} )? {later}'.rstrip())
                rest = first[i + 1] or '""'
                first[i] = self.add(
                    f"{name}-f{i}", f"{pairs[i]} {later} | {rest}".replace("  ", " ")
                )
        return self.add(name, f'"{{" ws {first[0]} ws "}}"')


def _rule_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower() or "x"


def tool_call_grammar(
    tools: Sequence[tuple[str, Any]], *, text: bool = True, copy_from: str | None = None
) -> str:
    """The grammar of one answer: plain text (if ``text``) or one call of ``tools``.

    ``tools`` are (name, JSON schema of the parameters) pairs. With ``copy_from`` (the
    user's words), a call has only its required arguments and every string argument is a
    run of those words: what a tiny model can fill in reliably.
    """
    rules = _Rules({}, copy=copy_from is not None, required_only=copy_from is not None)
    if copy_from is not None:
        rules.rules.update(copy_rules(copy_from))
    alts = []
    for name, schema in tools:
        rules.defs = (schema or {}).get("$defs", {}) if isinstance(schema, Mapping) else {}
        args = rules.value(
            schema or {"type": "object", "properties": {}}, f"args-{_rule_name(name)}"
        )
        if args == "object" and not (schema or {}).get("properties"):
            args = '"{" ws "}"'
        alts.append(f'{literal(json.dumps(name))} ws "," ws "\\"arguments\\"" ws ":" ws {args}')
    body = " | ".join(alts)
    call = (
        f'{literal(CALL_OPEN)} ws "{{" ws "\\"name\\"" ws ":" ws ( {body} ) ws "}}" ws '
        f"{literal(CALL_CLOSE)}"
    )
    choices = "call | text" if text and tools else "text" if not tools else "call"
    lines = [f"root ::= {choices}"]
    if tools:
        lines.append(f"call ::= {call}")
    lines += [f"{k} ::= {v}" for k, v in rules.rules.items()]
    return "\n".join(lines) + "\n" + BASE + "\n"


def parse_call(text: str, known: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The call in an answer the grammar shaped, or None for plain text."""
    body = text.strip()
    if not body.startswith(CALL_OPEN):
        return None
    inner = body[len(CALL_OPEN) :]
    if inner.endswith(CALL_CLOSE):
        inner = inner[: -len(CALL_CLOSE)]
    try:
        data = json.loads(inner)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("name") not in known:
        return None
    args = data.get("arguments", {})
    return str(data["name"]), args if isinstance(args, dict) else {}
