"""What each argument of a forced call may be: values copied from the user's words, by role.

When Co makes a small model call a tool (co_core.steering.guide), the model still writes
the call, but every value it may write comes from the user's words
(co_core.steering.runs), chosen by what the tool declares each argument is (its roles,
co_core.kernel.tools):

- a ``target`` is a file name the words give, when they give one; else a short run of the
  words (a note's name, a channel), limited to the names the tool's resolver accepts
  (co_core.steering.known);
- a ``query`` is a short run of the words;
- a ``text`` is a literal part of the words (quoted, or after a colon), else a run of
  them; for a tool that runs, also a command the words write (a program and its flags,
  on the file they name: "Run sha256sum on blob.txt" is ``sha256sum blob.txt``) or an
  expression ("7919 * 104729");
- a ``content`` is a literal part, never a run: a file's whole new content is given whole;
- a ``number`` is a number the words write; an ``option`` keeps its default.

An optional argument is given only when the words give a value for it. A tool that
requires none of its arguments but takes a text and a target gets the target when the
words name a file (``run_python`` runs the script named), else the text. The result is
a JSON schema of the arguments: Co's constrained model sends it to the server as the only
shape the call may take (co_core.agent.local.constrained).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from co_core.agent.tools.bm25 import FILE_NAME, words
from co_core.kernel.tools import Does, Role
from co_core.steering.runs import (
    MAX_SPANS,
    Source,
    commands,
    copy_spans,
    expressions,
    file_names,
    numbers_in,
)

TEXTS: tuple[Role, ...] = ("text", "content")


def plain(schema: Any) -> Any:
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


@dataclass(frozen=True)
class Reading:
    """The user's words as one forced call of one tool may copy them."""

    source: Source
    words: str
    tool_words: frozenset[str]
    roles: Mapping[str, Role]
    does: Does
    props: Mapping[str, Any]  # each argument's schema (``X | None`` as ``X``, refs followed)
    required: frozenset[str]
    avoid: tuple[str, ...] = ()
    resolves: bool = False  # the tool has a resolver, which finds the names it takes

    @classmethod
    def of(
        cls,
        schema: Mapping[str, Any],
        *,
        name: str,
        description: str,
        roles: Mapping[str, Role],
        does: Does,
        words_: str,
        avoid: Sequence[str] = (),
        plugin: str = "",
        resolves: bool = False,
    ) -> Reading:
        defs = schema.get("$defs") or {}
        raw = schema.get("properties") or {}
        props = {k: plain(_target(plain(v), defs)) for k, v in raw.items()}
        told = frozenset(words(f"{name} {plugin} {description} {' '.join(props)}"))
        required = frozenset(schema.get("required") or ())
        source = Source.of(words_)
        return cls(source, words_, told, roles, does, props, required, tuple(avoid), resolves)

    # -- what the words give ----------------------------------------------------------------

    def _string(self, key: str) -> bool:
        return self.props.get(key, {}).get("type") == "string"

    @property
    def texts(self) -> list[str]:
        """The arguments that take the user's text (which then takes the literal parts)."""
        return [k for k, r in self.roles.items() if r in TEXTS and self._string(k)]

    def taken(self) -> tuple[str, ...]:
        """The one value an argument can have (a resolver found one name): not another's."""
        found = []
        for key in self.props:
            values = self.props[key].get("enum")
            if isinstance(values, list) and len(values) == 1 and isinstance(values[0], str):
                found.append(values[0])
        return tuple(found)

    def masked(self) -> str:
        """The words as a name, a query or a run of text may copy them."""
        source = self.source if self.texts else Source(self.source.text, ())
        return source.masked(self.tool_words, (*self.avoid, *self.taken()))

    def runs(self) -> list[str] | None:
        """The runs a name may be (None: too many to list); with several literal parts, a
        whole one may be a name too ("... to my note 'Inbox'")."""
        spans = copy_spans(self.source.text, masked=self.masked())
        if spans is None:
            return None
        whole = self.source.literals() if self.texts and len(self.source.parts) > 1 else []
        return list(dict.fromkeys([*spans, *whole]))

    def files(self) -> list[str]:
        return file_names(self.source)

    def _program(self) -> list[str]:
        """What a tool that runs may run: the literal parts, else the expressions the words
        write ("7919 * 104729"), else the commands they write without quotes (a program
        and its flags); a command that names no file is run on each file the words name,
        unless the tool takes the file as its target (a program run on nothing reads an
        empty input: "Use `wc -l`" on server.log is ``wc -l server.log``)."""
        heads = self.source.literals()
        if not heads:
            found = expressions(self.source.text)
            if found:
                return found
            heads = commands(self.masked())
        files = self.files()
        if files and not any(r == "target" for r in self.roles.values()):
            whole = [h for h in heads if FILE_NAME.search(h)]
            heads = whole + [f"{h} {f}" for h in heads if h not in whole for f in files]
        return list(dict.fromkeys(heads))

    def values(self, key: str) -> list[Any] | None:
        """What ``key`` may be in the call: the values the words give ([]: none), or None
        (any value of its type: too many runs to list, or a number the words do not give
        for an argument the call requires)."""
        role, prop = self.roles.get(key, "option"), self.props.get(key, {})
        listed = prop.get("enum")
        if isinstance(listed, list) and not listed:  # a resolver accepts none of the words
            return []
        if isinstance(listed, list) and listed:  # the names a resolver accepts, or the tool's
            said = self.words.lower()
            named = [
                v for v in listed if re.search(rf"(?<!\w){re.escape(str(v).lower())}(?!\w)", said)
            ]
            return named or list(listed)
        kind = prop.get("type")
        if role == "option" or kind not in ("string", "integer", "number"):
            return []
        if kind != "string":
            found = numbers_in(self.words)
            return [
                float(n) if "." in n else int(n) for n in found if kind == "number" or "." not in n
            ]
        literals = self.source.literals()
        if role == "text" and self.does == "runs":
            return self._program() or self.runs()
        if role in TEXTS and (literals or role == "content"):
            return literals
        if role == "target" and self.files() and key == self.first_target():
            return self.files()  # the file the call works on; other targets are in it
        runs = self.runs()
        alone = role in TEXTS and "target" not in self.roles.values()
        if self.does == "writes" and runs and not self.resolves and (role == "target" or alone):
            return whole_runs(runs)  # a name (or the one text) no resolver checks: whole
        return runs

    def first_target(self) -> str | None:
        return next((k for k, r in self.roles.items() if r == "target" and self._string(k)), None)

    def needed(self) -> set[str]:
        """The arguments the call must give: the schema's; when it requires none but takes
        one text and a target, the target if the words name a file, else the text."""
        return self._choice()[0]

    def _choice(self) -> tuple[set[str], set[str]]:
        """The arguments the call needs, and those it must leave out (the text or the
        target that was not chosen)."""
        if self.required:
            return set(self.required), set()
        texts = self.texts
        targets = [k for k, r in self.roles.items() if r == "target" and self._string(k)]
        if len(texts) != 1 or not targets:
            return ({texts[0]} if len(texts) == 1 else set()), set()
        if self.files():
            return {targets[0]}, set(texts)
        return {texts[0]}, {targets[0]}

    # -- the schema -------------------------------------------------------------------------

    def schema(self) -> dict[str, Any] | None:
        """The arguments' JSON schema, every value one the words give; None when a value
        the call needs is one the words do not give (the call cannot be made as asked)."""
        needed, left_out = self._choice()
        props: dict[str, Any] = {}
        for key, prop in self.props.items():
            if key in left_out:
                continue
            values = self.values(key)
            if values is None:  # any value of its type
                props[key] = {"type": prop.get("type", "string")}
            elif values:
                props[key] = {"type": prop.get("type", "string"), "enum": values}
            elif key in needed and self.roles.get(key, "option") == "option":
                props[key] = dict(prop)  # a required option: the model picks one
            elif key in needed:
                return None
        return {"type": "object", "properties": props, "required": sorted(needed)}

    def missing(self) -> list[str]:
        """The arguments the call needs that the words give no value for."""
        needed = self.needed()
        return [
            k
            for k in self.props
            if k in needed and self.roles.get(k, "option") != "option" and self.values(k) == []
        ]


def whole_runs(runs: Sequence[str]) -> list[str]:
    """The runs that are no part of a longer one: the name a write gives is the whole run
    ("Add a recipe for Tasmitas soup: ..." names "Tasmitas soup", never "Tasmitas" or
    "soup"; a tiny model offered all three wrote the shortest)."""
    return [
        r
        for r in runs
        if not any(o != r and re.search(rf"(?<!\w){re.escape(r)}(?!\w)", o) for o in runs)
    ]


def _target(schema: Any, defs: Mapping[str, Any]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    if isinstance(ref, str):
        return defs.get(ref.rpartition("/")[2], {})
    return schema if isinstance(schema, Mapping) else {}


def spans_left(reading: Reading) -> bool:
    """Do the words still give the tool's names a run to copy besides the values to avoid
    (a search that found nothing is made again only with other words)?"""
    return bool(copy_spans(reading.source.text, masked=reading.masked()))


__all__ = ["MAX_SPANS", "Reading", "plain", "spans_left"]
