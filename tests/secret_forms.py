"""Secrets in every setting a user meets them, and the parts of each that must not be stored.

``FORMS`` puts one secret into a setting: after ``%3D`` or a letter (no word boundary),
URL-encoded, JSON-escaped (twice, or every character as ``\\uXXXX``), base64, split over two
lines, inside a URL's password, in an error message... ``tells`` are the runs of the
secret whose presence anywhere in a file would give it away. The shapes are every
documented shape of each family (``test_redact.FAMILIES``).
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable, Iterator
from urllib.parse import quote

from test_redact import FAMILIES

TELL = 12  # characters: a run of a secret this long, found anywhere, is a leak


def _half(text: str, joint: str) -> str:
    cut = len(text) // 2
    return text[:cut] + joint + text[cut:]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


FORMS: dict[str, Callable[[str], str]] = {
    "plain": lambda s: f"use {s} now",
    "after _": lambda s: f"backup_{s}",
    "after a letter": lambda s: f"v{s}",
    "after a digit": lambda s: f"v2{s}",
    "after %3D": lambda s: f"token%3D{s}",
    "after %20": lambda s: f"x%20{s}",
    "between %22": lambda s: f"%22{s}%22",
    "url-encoded": lambda s: quote(s, safe=""),
    "in a query": lambda s: f"https://api.example.com/v1?key={quote(s, safe='')}&page=2",
    "as a URL's password": lambda s: f"https://me:{quote(s, safe='')}@example.com/x",
    "as a raw URL password": lambda s: f"https://me:{s}@example.com/x",
    "json-escaped twice": lambda s: json.dumps({"config": json.dumps({"value": s})}),
    "json \\u-escaped": lambda s: '{"v": "' + "".join(f"\\u{ord(c):04x}" for c in s) + '"}',
    "json \\/": lambda s: json.dumps(s).replace("/", "\\/"),
    "base64": lambda s: _b64(s),
    "base64 of a line": lambda s: _b64(f"export TOKEN={s}\n"),
    "base64 url-safe": lambda s: base64.urlsafe_b64encode(f"k: {s}".encode()).decode(),
    "split by a newline": lambda s: _half(s, "\n"),
    "split by CRLF": lambda s: _half(s, "\r\n"),
    "split by a continuation": lambda s: _half(s, "\\\n"),
    "split by an escaped newline": lambda s: _half(s, "\\n"),
    "split and indented": lambda s: _half(s, "\n    "),
    "in an error message": lambda s: f"Error: invalid credentials {s!r} (HTTP 401)",
    "in a key": lambda s: f"shell:exec:echo {s}\\nls",
}


def value_of(shape: str) -> str:
    """The secret proper in a shape (a header's token, a URL's password)."""
    if "://" in shape and "@" in shape:
        return "hunter2"
    return shape.split()[-1]


def tells(shape: str) -> list[str]:
    """Runs of the secret that must appear nowhere: every run of ``TELL`` characters of its
    value (all of it when shorter), and for a URL its password's telling part."""
    value = value_of(shape)
    if value == "hunter2":
        return ["hunter2"]
    if len(value) <= TELL:
        return [value]
    return [value[i : i + TELL] for i in range(len(value) - TELL + 1)]


def shapes() -> Iterator[tuple[str, str]]:
    for family, found in FAMILIES.items():
        for i, shape in enumerate(found):
            yield f"{family}-{i}", shape


def cases() -> Iterator[tuple[str, str, str]]:
    """(name, form, text): every shape in every form."""
    for name, shape in shapes():
        for form, put in FORMS.items():
            yield name, form, put(shape)


def leaked(data: str | bytes, shape: str) -> str | None:
    """The first run of ``shape``'s secret found in ``data``, or None."""
    for tell in tells(shape):
        needle = tell.encode() if isinstance(data, bytes) else tell
        if needle in data:  # type: ignore[operator]
            return tell
    return None


def sample(count: int, seed: int) -> list[tuple[str, str, str]]:
    """A seeded random pick of the cases (for runs too slow to take them all)."""
    everything = list(cases())
    return random.Random(seed).sample(everything, min(count, len(everything)))
