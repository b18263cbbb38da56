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

from co_core.agent.local.copying import (
    CODE_KEYS,
    COMMAND_KEYS,
    MAX_SPANS,
    PAYLOAD_KEYS,
    TRAILING,
    Source,
    copy_rules,
    copy_spans,
    expressions,
    inner_literal,
)
from co_core.agent.tools.bm25 import FILE_NAME, words
from co_core.agent.tools.intent import SMALL

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
# An answer in words: no call written as text, no code block to ramble on in.
WORDS_ONLY = "root ::= [^<`\\x00]+\n"


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    return json.dumps(text, ensure_ascii=False)


def json_literal(value: Any) -> str:
    """The GBNF literal matching ``value`` written as JSON."""
    return literal(json.dumps(value, ensure_ascii=False))


PATH_KEYS = frozenset({"path", "file", "filename", "file_path", "filepath"})
_PROGRAM = re.compile(r"[A-Za-z][\w.+-]*")  # a program's name, as a command starts
_FLAG = re.compile(r"--?[A-Za-z0-9][\w=.-]*")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, as JSON writes them ("8088", "2.5"; the "05" of
    "2024-05-01" is 5: JSON has no leading zeros)."""
    found = (m.group(0).rstrip(".") for m in _NUMBER.finditer(text))
    return list(dict.fromkeys(json.dumps(float(n) if "." in n else int(n)) for n in found))


def _plain(schema: Any) -> Any:
    """``X | None`` as ``X``: in a copied call an optional value is left out, never null."""
    if isinstance(schema, Mapping):
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list):
                rest = [
                    o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")
                ]
                if len(rest) == 1:
                    merged = {k: v for k, v in schema.items() if k != key}
                    return {**merged, **rest[0]}
        kind = schema.get("type")
        if isinstance(kind, list) and "null" in kind and len(kind) == 2:
            return {**schema, "type": next(k for k in kind if k != "null")}
    return schema


@dataclass
class _Rules:
    defs: Mapping[str, Any]
    rules: dict[str, str] = field(default_factory=dict)
    # The user's words, when every value must come from them: strings are runs of the
    # words (rule ``copy``), numbers are numbers they contain, enum values ones they name;
    # an optional property is there only when the words can supply it.
    words: str | None = None
    _resolving: set[str] = field(default_factory=set)
    # The forced call's tool: its words (never copied into a name) and whether it has a
    # payload (which takes the literal parts: co_core.agent.local.copying).
    tool: str = ""
    tool_words: frozenset[str] = frozenset()
    payload: bool = False
    avoid: tuple[str, ...] = ()  # values of a call that failed: not copied again
    taken: tuple[str, ...] = ()  # the one value an argument can have: not another's
    source: Source = field(default_factory=lambda: Source("", ()))  # the words, read once

    @property
    def copy(self) -> bool:
        return self.words is not None

    def for_tool(self, name: str, description: str, schema: Any) -> None:
        self.source = Source.of(self.words or "")
        self.tool = name
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        keys = " ".join(props) if isinstance(props, Mapping) else ""
        self.tool_words = frozenset(words(f"{name} {description} {keys}"))
        self.payload = isinstance(props, Mapping) and any(
            k in PAYLOAD_KEYS and self._is_string(v) for k, v in props.items()
        )
        self.taken = ()
        for prop in props.values() if isinstance(props, Mapping) else ():
            values = self.listed(prop) and _plain(self._target(_plain(prop)))["enum"]
            if values and len(values) == 1 and isinstance(values[0], str):
                self.taken += (values[0],)

    def _is_string(self, schema: Any) -> bool:
        target = _plain(self._target(_plain(schema)))
        return isinstance(target, Mapping) and target.get("type") == "string"

    def literals(self, key: str, schema: Any) -> list[str]:
        """A payload's values when the words hold literal parts: each whole part. Code
        with none is an expression the words write ("Berechne 7919 * 104729 mit
        Python" is ``7919 * 104729``), when they write one."""
        if not self.copy or key not in PAYLOAD_KEYS or not self._is_string(schema):
            return []
        found = self.source.literals()
        if not found and key in CODE_KEYS:
            return expressions(self.source.text)
        return found

    def masked(self) -> str:
        """The words as a forced call's other strings may copy them."""
        source = self.source
        if not self.payload:
            source = Source(source.text, ())  # no payload: quoted text is theirs to copy
        return source.masked(self.tool_words, (*self.avoid, *self.taken))

    def whole(self) -> list[str]:
        """With several literal parts, a whole one may be a name ("... to my note 'Inbox'")."""
        return self.source.literals() if self.payload and len(self.source.parts) > 1 else []

    def string_rule(self) -> str:
        """The rule of a copied string that is not the payload (the general ``copy`` when
        the masks leave no run)."""
        name = f"copy-{_rule_name(self.tool)}"
        if name in self.rules:
            return name
        found = copy_rules(self.source.text, name, masked=self.masked())
        whole = self.whole()
        if not found and not whole:
            return "copy"
        runs = [f"{name}-runs"] if found else []
        if found:
            found[f"{name}-runs"] = found.pop(name)
            self.rules.update(found)
        self.rules[name] = " | ".join([*runs, *(json_literal(w) for w in whole)])
        return name

    def string_spans(self) -> list[str] | None:
        """:meth:`string_rule`'s values, listed."""
        spans = copy_spans(self.source.text, masked=self.masked()) or []
        whole = self.whole()
        if not spans and not whole:
            return copy_spans(self.words or "")
        return list(dict.fromkeys([*spans, *whole]))

    def required(self, props: Mapping[str, Any], required: set[str]) -> set[str]:
        """The properties a copied call must give: the schema's; when it requires none but
        takes a payload or a file, the file's path if the words name a file, else the
        payload (``run_python``: the script named, or code)."""
        if not self.copy or required:
            return required
        payload = [k for k, v in props.items() if k in PAYLOAD_KEYS and self._is_string(v)]
        if len(payload) != 1:
            return required
        paths = [k for k, v in props.items() if k.lower() in PATH_KEYS and self.files(k, v)]
        if paths:
            return {paths[0]} if len(paths) == 1 else required  # run_python: the file named
        return {payload[0]}

    def _target(self, schema: Any) -> Any:
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if isinstance(ref, str):
            return self.defs.get(ref.rpartition("/")[2], {})
        return schema

    def supplied(self, schema: Any, key: str = "") -> bool:
        """Can the user's words give a value of ``schema`` (an optional property ``key``)?
        A file's path only when they name a file."""
        if key.lower() in PATH_KEYS:
            return bool(self.files(key, schema))
        schema = _plain(self._target(_plain(schema)))
        if not isinstance(schema, Mapping) or self.words is None:
            return False
        if isinstance(schema.get("enum"), list):
            return bool(self._named(schema["enum"]))
        kind = schema.get("type")
        if kind == "string":
            return True
        if kind in ("integer", "number"):
            return bool(self._numbers(kind))
        return False

    def _named(self, values: list[Any]) -> list[Any]:
        said = (self.words or "").lower()
        return [v for v in values if re.search(rf"(?<!\w){re.escape(str(v).lower())}(?!\w)", said)]

    def _numbers(self, kind: str) -> list[str]:
        found = numbers_in(self.words or "")
        return [n for n in found if kind == "number" or "." not in n]

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
        if self.copy:
            schema = _plain(schema)
        if "const" in schema:
            return json_literal(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            values = (self._named(schema["enum"]) if self.copy else None) or schema["enum"]
            return "(" + " | ".join(json_literal(v) for v in values) + ")"
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
            return self.string_rule()
        if kind in ("integer", "number") and self.copy and self._numbers(kind):
            return "(" + " | ".join(literal(n) for n in self._numbers(kind)) + ")"
        if kind in ("string", "integer", "number", "boolean", "null"):
            return str(kind)
        if kind == "array":
            item = self.value(schema.get("items"), f"{name}-item")
            return self.add(name, f'"[" ws ( {item} ( ws "," ws {item} )* )? ws "]"')
        if kind == "object" or "properties" in schema:
            return self.object(schema, name)
        return "value"

    def command_rule(self) -> str:
        """A copied command: a literal part (or, with none, a run of the words); when the
        words name files, a command that names none is followed by one of them (a
        program run on nothing reads an empty input: "sha256sum" of "the hash of
        blob.txt" is ``sha256sum blob.txt``)."""
        name = f"cmd-{_rule_name(self.tool)}"
        if name in self.rules:
            return name
        whole, bare = self._command_heads()
        if not whole and not bare:
            return "copy"
        files = [inner_literal(f) for f in self.file_names()]
        alts = [inner_literal(h) for h in whole]
        if bare:
            tail = f' " " ( {" | ".join(files)} )' if files else ""
            alts.append(f"( {' | '.join(inner_literal(h) for h in bare)} ){tail}")
        self.rules[name] = f'"\\"" ( {" | ".join(alts)} ) "\\""'
        return name

    def _command_heads(self) -> tuple[list[str], list[str]]:
        """The commands the words give: those naming a file already (whole), and those
        that need one of the named files after them (bare; all, when none is named). A
        quoted command is one literal part; unquoted, a command is a program's name and
        the flags after it ("Run sha256sum on blob.txt", "mit sha256sum den Hash": not
        "sha256sum den Hash")."""
        files = self.file_names()
        heads = self.source.literals() or self._unquoted_commands()
        whole = [h for h in heads if files and FILE_NAME.search(h)]
        return whole, [h for h in heads if h not in whole]

    def _unquoted_commands(self) -> list[str]:
        """Each word that may be a program (not masked, not a small word, not a file),
        alone and with each run of flags after it."""
        tokens = [t.rstrip(TRAILING) for t in self.masked().split()]
        found: list[str] = []
        for i, program in enumerate(tokens):
            if not _PROGRAM.fullmatch(program) or program.lower() in SMALL:
                continue
            if FILE_NAME.fullmatch(program) and not program.endswith((".sh", ".py")):
                continue  # a file, not a program
            found.append(program)
            for flag in tokens[i + 1 :]:
                if not _FLAG.fullmatch(flag):
                    break
                found.append(f"{found[-1]} {flag}")
        return list(dict.fromkeys(found))

    def command_spans(self) -> list[str] | None:
        """:meth:`command_rule`'s values, listed."""
        whole, bare = self._command_heads()
        files = self.file_names()
        if not whole and not bare:
            return copy_spans(self.words or "")
        found = [*whole, *(f"{h} {f}" for h in bare for f in files)] if files else bare
        return found if len(found) <= MAX_SPANS else None

    def file_names(self) -> list[str]:
        return list(dict.fromkeys(FILE_NAME.findall(self.words or "")))

    def listed(self, schema: Any) -> bool:
        """Does ``schema`` list its values (an ``enum``: the names a resolver accepts,
        co_core.agent.steering.known)? Then those are what a copied value may be."""
        target = _plain(self._target(_plain(schema)))
        return isinstance(target, Mapping) and isinstance(target.get("enum"), list)

    def property(self, key: str, schema: Any, name: str) -> str:
        if self.copy and self.listed(schema):
            return self.value(schema, name)
        if self.copy and key in COMMAND_KEYS and self._is_string(schema):
            return self.command_rule()
        found = self.files(key, schema) or self.literals(key, schema)
        if found:
            return "(" + " | ".join(json_literal(f) for f in found) + ")"
        return self.value(schema, name)

    def files(self, key: str, schema: Any) -> list[str]:
        """The file names the user wrote, when a copied ``key`` is a file's path: "notes.txt"
        of "Read notes.txt: which room?", never "which room"."""
        if self.words is None or key.lower() not in PATH_KEYS:
            return []
        target = _plain(self._target(_plain(schema)))
        if not isinstance(target, Mapping) or target.get("type") != "string":
            return []
        return self.file_names()

    def object(self, schema: Mapping[str, Any], name: str) -> str:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return "object"
        required = self.required(props, set(schema.get("required") or ()))
        keys = [k for k in props if k in required or not self.copy or self.supplied(props[k], k)]
        if not keys:
            return '"{" ws "}"'

        pairs = [
            f'{literal(json.dumps(k))} ws ":" ws {self.property(k, props[k], f"{name}-{_rule_name(k)}")}'
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


def runs_left(words: str, name: str, description: str, schema: Any, avoid: Sequence[str]) -> bool:
    """Do ``words`` still give the tool's names a run to copy besides the ``avoid``-ed
    values (a search that found nothing is made again only with other words)?"""
    rules = _Rules((schema or {}).get("$defs", {}) if isinstance(schema, Mapping) else {})
    rules.words, rules.avoid = words, tuple(avoid)
    rules.for_tool(name, description, schema)
    return bool(copy_spans(rules.source.text, masked=rules.masked()))


def _rule_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower() or "x"


def tool_call_grammar(
    tools: Sequence[tuple[str, Any]],
    *,
    text: bool = True,
    copy_from: str | None = None,
    about: Mapping[str, str] | None = None,
    avoid: Sequence[str] = (),
) -> str:
    """The grammar of one answer: plain text (if ``text``) or one call of ``tools``.

    ``tools`` are (name, JSON schema of the parameters) pairs. With ``copy_from`` (the
    user's words), every argument comes from those words: a string is a run of them, a
    number one they contain, an enum value one they name; an optional argument may be
    given only when the words can supply it (``run_python``'s code, ``list_notes``'s
    folder), else its default applies; which run goes where follows the words
    (co_core.agent.local.copying; ``about`` holds the tools' descriptions). That is what a
    tiny model can fill in reliably.
    """
    rules = _Rules({}, words=copy_from, avoid=tuple(avoid))
    if copy_from is not None:
        rules.rules.update(copy_rules(copy_from) or {"copy": "string"})
    alts = []
    for name, schema in tools:
        rules.defs = (schema or {}).get("$defs", {}) if isinstance(schema, Mapping) else {}
        rules.for_tool(name, (about or {}).get(name, ""), schema)
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


# -- the same constraint as a JSON schema (Ollama's ``response_format``) --------------------


def _copied_schema(schema: Any, rules: _Rules) -> Any:
    """``schema`` with every value taken from the user's words (as :func:`tool_call_grammar`
    does with ``copy_from``): strings an ``enum`` of runs of the words, numbers the ones
    they contain, optional properties only when the words can supply them."""
    schema = _plain(rules._target(_plain(schema)))
    if not isinstance(schema, Mapping):
        return schema
    kind = schema.get("type")
    if isinstance(schema.get("enum"), list):
        return {**schema, "enum": rules._named(schema["enum"]) or schema["enum"]}
    if kind == "string":
        spans = rules.string_spans()
        return {"type": "string", "enum": spans} if spans else {"type": "string"}
    if kind in ("integer", "number") and rules._numbers(kind):
        return {"type": kind, "enum": [json.loads(n) for n in rules._numbers(kind)]}
    if kind == "array":
        return {**schema, "items": _copied_schema(schema.get("items"), rules)}
    props = schema.get("properties")
    if isinstance(props, Mapping):
        required = rules.required(props, set(schema.get("required") or ()))
        kept = {
            k: {"type": "string", "enum": fixed}
            if not rules.listed(v)
            and (
                fixed := (rules.command_spans() if k in COMMAND_KEYS else None)
                or rules.files(k, v)
                or rules.literals(k, v)
            )
            else _copied_schema(v, rules)
            for k, v in props.items()
            if k in required or rules.supplied(v, k)
        }
        return {"type": "object", "properties": kept, "required": sorted(required)}
    return schema


def call_schema(
    tools: Sequence[tuple[str, Any]],
    *,
    text: bool = True,
    copy_from: str | None = None,
    about: Mapping[str, str] | None = None,
    avoid: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``response_format`` of one answer: ``{"answer": ...}`` (if ``text``) or one call
    ``{"name": ..., "arguments": ...}`` of ``tools``, as a JSON schema."""
    options: list[dict[str, Any]] = []
    for name, schema in tools:
        rules = _Rules((schema or {}).get("$defs", {}) if isinstance(schema, Mapping) else {})
        rules.words, rules.avoid = copy_from, tuple(avoid)
        rules.for_tool(name, (about or {}).get(name, ""), schema)
        args = _copied_schema(schema, rules) if copy_from is not None else schema
        args = {k: v for k, v in (args or {"type": "object"}).items() if k != "$defs"}
        if copy_from is None and isinstance(schema, Mapping) and schema.get("$defs"):
            args["$defs"] = schema["$defs"]
        options.append(
            {
                "type": "object",
                "properties": {"name": {"const": name}, "arguments": args},
                "required": ["name", "arguments"],
            }
        )
    if text:
        options.append(
            {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
        )
    body = options[0] if len(options) == 1 else {"anyOf": options}
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": body}}


def parse_json_call(text: str, known: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | str | None:
    """What an answer shaped by :func:`call_schema` holds: a call, an answer's text, or
    None when it is not such JSON (then the text is the answer as it stands)."""
    try:
        data = json.loads(text.strip())
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("answer"), str) and "name" not in data:
        return str(data["answer"])
    if data.get("name") in known:
        args = data.get("arguments", {})
        return str(data["name"]), args if isinstance(args, dict) else {}
    return None
