"""One setting of a config file, changed in place: ``port = 41234`` becomes ``port = 8088``.

"Set the port in config.ini to 8088" names a setting and a value, not the text to
replace; ``set_value`` finds the line that sets it and changes only its value, so the
rest of the file (comments, order, spacing, the other settings) stays byte for byte.

A setting's line is ``key = value`` or ``key: value`` (INI, TOML, YAML, ``.env``,
properties), with the key quoted or not and ``export`` before it (``.env``), or
``"key": value,`` (JSON). Keys compare in any case, with ``-``, ``_`` and spaces alike
("max connections" is ``max_connections``). When several lines set the key (``port`` in
``[server]`` and in ``[database]``), ``server.port`` picks the one under the section
``[server]``; without a section the change is refused, naming the places.

The new value is written as the old one was: quoted the same way if it was quoted (JSON
escapes inside double quotes; a value holding ``'`` gets double quotes), bare if it was
bare; a comment or a JSON comma after it stays. In YAML a bare value stays bare only
when every YAML parser reads it as that text, number or boolean (``8088``, ``true`` where
a boolean was, ``eu-west-1``); anything else is double-quoted, so the parser reads one
value (``a: b``, ``yes`` where a string was, ``010``, ``[x]``).

A value is one line of visible text: a line break of any kind (``\n``, ``\r``, and the
U+0085, U+2028, U+2029, vertical tab and form feed that YAML or Python read as one), a
control character and a character a reader cannot see (bidi overrides, zero-width
characters) are refused: they could add a setting nobody approved.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from co_core import escaped, unseen

_SETTING = re.compile(
    r"""^(?P<lead>\s*(?:export\s+)?)
    (?P<quote>["']?)(?P<key>[^\s"'=:#;\[\]{}]+(?:\s+[^\s"'=:#;\[\]{}]+)*?)(?P=quote)
    (?P<sep>\s*[:=][ \t]*)(?P<rest>.*?)(?P<end>\r?)$""",
    re.VERBOSE,
)
_SECTION = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(?:[#;].*)?$")


class NotSet(ValueError):
    """The key cannot be changed as asked: the reason, in words."""


@dataclass(frozen=True)
class Change:
    """What :func:`set_value` did: the new text, and the line before and after (1-based)."""

    text: str
    line: int
    before: str
    after: str


def _plain(key: str) -> str:
    return re.sub(r"[\s_-]+", "", key.strip().strip("\"'")).lower()


def _split_value(rest: str) -> tuple[str, str]:
    """``rest`` of a setting's line as (value, what follows it: a comment, a comma)."""
    if rest[:1] in ('"', "'"):
        quote, i = rest[0], 1
        while i < len(rest):
            if rest[i] == "\\" and quote == '"':
                i += 2
                continue
            if rest[i] == quote:
                return rest[: i + 1], rest[i + 1 :]
            i += 1
        return rest, ""
    comment = re.search(r"\s+[#;]|,\s*$|,\s+[#;]|\s*$", rest)
    cut = comment.start() if comment else len(rest)
    return rest[:cut], rest[cut:]


_BARE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")  # JSON/TOML bare
# What YAML 1.1 and 1.2 parsers (PyYAML, ruamel.yaml) read alike when it stands bare: a
# decimal without leading zeros, a word starting with a letter (never one of the words
# YAML 1.1 reads as a boolean or null), and true/false where a boolean was.
_YAML_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
_YAML_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]*")
_YAML_SPECIAL = frozenset("y n yes no on off true false null ~".split())


def _yaml_bare(value: str, old: str) -> bool:
    """Whether ``value`` may stand bare in YAML where ``old`` stood bare."""
    if _YAML_NUMBER.fullmatch(value):
        return True
    if value.lower() in _YAML_SPECIAL:
        return value.lower() in ("true", "false") and old.lower() in ("true", "false")
    return _YAML_WORD.fullmatch(value) is not None


def _written(value: str, old: str, typed: bool = False, yaml: bool = False) -> str:
    """``value`` as the old value was written (quoted the same way, or bare; in a
    ``typed`` file, JSON or TOML, text is quoted even where a number was; in YAML a bare
    value that a parser could read otherwise is double-quoted)."""
    if typed and not _BARE.fullmatch(value):
        return json.dumps(value, ensure_ascii=False)
    if yaml and old[:1] not in ('"', "'") and not _yaml_bare(value, old):
        return json.dumps(value, ensure_ascii=False)
    if old[:1] == '"' and old[-1:] == '"' and len(old) >= 2:
        return json.dumps(value, ensure_ascii=False)
    if old[:1] == "'" and old[-1:] == "'" and len(old) >= 2:
        # a quote inside: double quotes, which TOML, YAML and JSON read alike
        return json.dumps(value, ensure_ascii=False) if "'" in value else f"'{value}'"
    return value


@dataclass(frozen=True)
class _Found:
    index: int
    section: str
    match: re.Match[str]


def _settings(lines: list[str], key: str) -> list[_Found]:
    found, section = [], ""
    for index, line in enumerate(lines):
        head = _SECTION.match(line)
        if head is not None:
            section = head.group(1).strip().strip("\"'")
            continue
        setting = _SETTING.match(line)
        if setting is not None and _plain(setting.group("key")) == key:
            found.append(_Found(index, section, setting))
    return found


def find(text: str, key: str) -> int:
    """The index of the one line of ``text`` that sets ``key`` (or ``section.key``);
    NotSet when none or several do."""
    return _one(text.split("\n"), key).index


def set_value(
    text: str, key: str, value: str, *, typed: bool = False, yaml: bool = False
) -> Change:
    """``text`` with the setting ``key`` (or ``section.key``) set to ``value``; ``typed``:
    the file is JSON or TOML, where text must be quoted; ``yaml``: a YAML file."""
    _check_one_line(value)
    lines = text.split("\n")
    one = _one(lines, key)
    line, match = lines[one.index], one.match
    old, after = _split_value(match.group("rest"))
    written = _written(value, old, typed, yaml)
    lines[one.index] = line[: match.start("rest")] + written + after + match.group("end")
    return Change("\n".join(lines), one.index + 1, line.rstrip("\r"), lines[one.index].rstrip("\r"))


def _check_one_line(value: str) -> None:
    """NotSet for a value that is not one line of visible text (see the module's doc)."""
    odd = next((ch for ch in value if ch != "\t" and unseen(ch)), None)
    if odd is None:
        return
    if len(value.splitlines()) > 1 or odd in "\n\r":
        raise NotSet(f"the value must be one line (it holds a line break, {escaped(odd)})")
    raise NotSet(
        f"the value holds {escaped(odd)}, a character a reader cannot see; "
        "give the value in visible characters"
    )


def _one(lines: list[str], key: str) -> _Found:
    found = _settings(lines, _plain(key))
    if not found and "." in key.strip("."):
        section, _, name = key.strip(".").rpartition(".")
        found = [f for f in _settings(lines, _plain(name)) if _plain(f.section) == _plain(section)]
    elif len(found) > 1 and "." in key:
        section = key.rpartition(".")[0]
        found = [f for f in found if _plain(f.section) == _plain(section)] or found
    if not found:
        raise NotSet(f"no line sets {key!r}")
    if len(found) > 1:
        places = ", ".join(
            f"line {f.index + 1}" + (f" in [{f.section}]" if f.section else "") for f in found
        )
        sections = [f.section for f in found if f.section]
        hint = f"; name one as section.key, e.g. {sections[0]}.{key}" if sections else ""
        raise NotSet(f"{key!r} is set in {len(found)} places ({places}){hint}")
    return found[0]
