"""Mask secrets before anything is written to disk (audit lines, logs).

Two nets: values stored under a secret-sounding key (token, key, password, secret,
credential, auth) are masked whole; inside any string, text that looks like a secret
(API keys of well-known services, bearer tokens, private-key blocks even when cut short,
JWTs, Slack webhooks, passwords in URLs, ``password=...``, netrc's ``password VALUE``,
mysql's ``-pVALUE``) and any literal secret Co knows from its settings is masked.

A secret is found by its shape wherever it stands: no word boundary is needed before it
(``token%3Dghp_…``, ``backup_ghp_…``, ``v2xoxp-…``; a prefix that also ends ordinary
words, like ``sk-`` in ``task-list``, then needs a random payload), and the text is also
read as a program would decode it: JSON and C escapes, URL encoding, base64, and a line
break inside a token joined. What is found in a decoded reading is masked where it is
spelled. Over-masking is accepted; leaking is not. Mask before cutting text short: a cut
can remove the part of a secret that makes it recognisable. docs/policy.md lists the
forms masked and those that are not.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

MASK = "[REDACTED]"
SECRET_KEY_WORDS = ("token", "key", "password", "passwd", "secret", "credential", "auth")

# Each family by its documented shape (the prefix the issuer puts on every token it makes
# and the characters that follow), not by a list of the prefixes seen so far. With each
# pattern, the literal text every match contains: a pattern runs only on text holding one
# of them (a long tool output is then scanned a few times by a fast substring search,
# instead of trying every pattern at every character).
_PATTERNS: list[tuple[str, tuple[str, ...]]] = [
    # private key blocks (PEM / OpenSSH), possibly cut short at the end
    (
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
        ("PRIVATE KEY",),
    ),
    # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-...), ...
    (r"(sk|pk|rk)-(?P<body>[A-Za-z0-9_\-]{16,})", ("sk-", "pk-", "rk-")),
    (r"(sk|rk|pk)_(live|test)_(?P<body>[A-Za-z0-9]{10,})", ("_live_", "_test_")),  # Stripe
    (r"whsec_[A-Za-z0-9]{16,}", ("whsec_",)),  # Stripe webhook signing secrets
    # AWS access key ids and the other unique-id prefixes AWS documents
    (
        r"(AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}(?![0-9A-Za-z])",
        (
            "AKIA",
            "ASIA",
            "ABIA",
            "ACCA",
            "AGPA",
            "AIDA",
            "AIPA",
            "ANPA",
            "ANVA",
            "APKA",
            "AROA",
            "ASCA",
        ),
    ),
    (r"gh[pousr]_[A-Za-z0-9]{20,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),  # GitHub
    (r"github_pat_[A-Za-z0-9_]{20,}", ("github_pat_",)),
    # GitLab: every token kind is "gl<kind>-" (glpat, gldt, glrt, glptt, glft, glsoat, glimt,
    # glagent, gloas, glcbt, glffct, glwt, ...), routable ones with ".01.crc" after the
    # payload; a kind not known yet still has that shape and a random payload (a digit or a
    # capital in it, unlike "glossary-entry-of-a-page"); GR1348941 runner registration
    (
        r"gl(?:pat|dt|rt|rtr|ptt|ft|soat|imt|agent|oas|cbt|ffct|wt|tst|idt)-[A-Za-z0-9_\-.]{16,}",
        ("gl",),
    ),
    (r"gl[a-z]{2,7}-(?=[A-Za-z0-9_\-.]*[A-Z0-9])(?P<body>[A-Za-z0-9_\-.]{20,})", ("gl",)),
    (r"GR1348941[A-Za-z0-9_\-]{16,}", ("GR1348941",)),
    # Slack: every "xox?-" form (xoxb, xoxp, xoxa, xoxr, xoxs, xoxo, xoxe, xoxc, xoxd) and the
    # rotating "xoxe.xoxp-..." ones; app-level "xapp-"
    (r"xox[a-z](?:\.xox[a-z])*-[A-Za-z0-9\-._%+/=]{8,}", ("xox",)),
    (r"xapp-[A-Za-z0-9\-]{8,}", ("xapp-",)),
    (  # webhooks
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
        ("hooks.slack.com",),
    ),
    (r"AIza[0-9A-Za-z_\-]{30,}", ("AIza",)),  # Google API keys
    (r"ya29\.[0-9A-Za-z_\-]{16,}", ("ya29.",)),  # Google OAuth access tokens
    (r"1//0[0-9A-Za-z_\-]{20,}", ("1//0",)),  # Google refresh tokens
    (r"GOCSPX-[0-9A-Za-z_\-]{20,}", ("GOCSPX-",)),  # Google OAuth client secrets
    (r"hf_(?P<body>[A-Za-z0-9]{20,})", ("hf_",)),  # Hugging Face user tokens
    (r"api_org_(?P<body>[A-Za-z0-9]{20,})", ("api_org_",)),  # Hugging Face organisation tokens
    (r"npm_(?P<body>[A-Za-z0-9]{30,})", ("npm_",)),
    (r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", ("eyJ",)),  # JWT
    # "Bearer x", "token x", "Basic x" in any case: the triggers are looked for in lower case
    (r"(?i:bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{12,}", ("bearer", "token", "basic")),
]
_COMPILED = [(re.compile(p), triggers, "(?i" in p) for p, triggers in _PATTERNS]
# the end of a private key whose beginning was cut off: the base64 lines before the END
# line are found by walking back from it (a regex would retry at every character: slow)
_KEY_END_RE = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_SPACE = frozenset(" \t\r\n")
_ESCAPED_SPACE = ("\\n", "\\r", "\\t")
# password=..., api_key: "...", --token ..., in free text (keeps the name, masks the value)
_ASSIGNMENT_RE = re.compile(
    r"(?i)(\b[\w.\-]*(?:token|api[_\-]?key|apikey|password|passwd|pwd|secret|credential|auth)[\w.\-]*"
    r"(?:\"|')?\s*(?:=|:)\s*)(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)"
)
_FLAG_RE = re.compile(
    r"(?i)((?:^|\s)--?[\w\-]*(?:token|api[_\-]?key|apikey|password|passwd|secret|credential|auth)[\w\-]*\s+)"
    r"(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)"
)
# what a value named like a secret is named with (the two patterns above look for these)
_NAMED_WORDS = ("token", "api", "key", "pass", "pwd", "secret", "credential", "auth")
# netrc and similar: "machine host login me password VALUE"; mysql's "-pVALUE"
_WORD_RE = re.compile(r"(?i)(\b(?:password|passwd|passphrase)[ \t]+)([^\s\"']+)")
_MYSQL_RE = re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n;|&]*?\s-p)([^\s\-]\S*)")
# A URL's userinfo (RFC 3986): "scheme://user:PASSWORD@host", the user may be empty
# (redis://:PASSWORD@host); the password runs to the last "@" before a space or a quote,
# so one holding an unencoded "@", "/" or ":" is masked whole.
_URL_PASSWORD_RE = re.compile(r"(?i)([a-z][a-z0-9+.\-]*://[^\s:/?#@\"'<>`]*:)([^\s\"'<>`]*)(@)")
_MIN_KNOWN = 6  # shorter "secrets" from settings would mask ordinary words

# The same text as something will read it: a secret is masked wherever it is recognised in
# one of these (what it is found as is mapped back to the characters that spell it).
# JSON and C escapes (\u0067, \x67, \", \/, \n), URL encoding (%3D, %2F), and a line break
# inside a token (a hard-wrapped line, a backslash continuation, an escaped \n).
_DECODE_RE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\"\\/'nrt])|%[0-9A-Fa-f]{2}")
_TOKEN_CHARS = r"[A-Za-z0-9_\-+/=.%:@]"
_BREAK_RE = re.compile(rf"(?<={_TOKEN_CHARS})(?:\\?\r?\n|\\r\\n|\\n|\\r)[ \t]*(?={_TOKEN_CHARS})")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
# base64 (standard or URL-safe) long enough to hold a secret; decoded, it is searched too
_BASE64_RUN_RE = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_BASE64_MAX = 1 << 20  # longer runs (images, archives) are not decoded


def _looks_random(body: str) -> bool:
    """Whether a token's payload is random rather than words (``risk-assessment-report``):
    digits and letters of both cases, or a long run of hex."""
    has_digit = any(c.isdigit() for c in body)
    if has_digit and any(c.isupper() for c in body) and any(c.islower() for c in body):
        return True
    hexdigits = sum(c in "0123456789abcdefABCDEF" for c in body)
    return has_digit and hexdigits >= 32 and hexdigits == sum(c.isalnum() for c in body)


def _inside_word(text: str, start: int) -> bool:
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


@lru_cache(maxsize=1024)
def is_secret_key(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_KEY_WORDS)


Span = tuple[int, int]


class _View:
    """Text as a reader would decode it, and where each of its characters came from (found
    only when a secret was, so a view that holds none costs one substitution)."""

    def __init__(self, source: str, pattern: re.Pattern[str], read: Any) -> None:
        self.source, self.pattern, self.read = source, pattern, read
        self.text = pattern.sub(read, source)
        self._origin: list[tuple[int, int]] | None = None

    def where(self, index: int) -> int:
        """The original index of the view's character at ``index`` (or of its end)."""
        if index >= len(self.text):
            return len(self.source)
        if self._origin is None:
            self._origin = self._changes()
        found = bisect.bisect_right(self._origin, (index, len(self.source) + 1)) - 1
        if found < 0:
            return index
        view_at, original_at = self._origin[found]
        return original_at + (index - view_at)

    def _changes(self) -> list[tuple[int, int]]:
        """(view index, original index) before and after each replaced piece."""
        origin: list[tuple[int, int]] = []
        shift = 0
        for match in self.pattern.finditer(self.source):
            at = match.start() + shift
            size = len(self.read if isinstance(self.read, str) else self.read(match))
            origin += ((at, match.start()), (at + size, match.end()))
            shift += size - (match.end() - match.start())
        return origin

    def span(self, span: Span) -> Span:
        return self.where(span[0]), self.where(span[1])


class _Chain(_View):
    """A view of a view: indices go back through both."""

    def __init__(self, outer: _View, pattern: re.Pattern[str], read: Any) -> None:
        super().__init__(outer.text, pattern, read)
        self.outer = outer

    def where(self, index: int) -> int:
        return self.outer.where(super().where(index))


def _decode(match: re.Match[str]) -> str:
    code = match.group()
    if code[0] == "%":
        return chr(int(code[1:], 16))
    if code[1] in "ux":
        return chr(int(code[2:], 16))
    return _SIMPLE_ESCAPES.get(code[1], code[1])


def _views(text: str) -> list[_View]:
    """The ways of reading ``text`` besides as it is: decoded (JSON and C escapes, URL
    encoding), and each with the line breaks inside a token joined (a secret split over
    two lines)."""
    views: list[_View] = []
    decoded: _View | None = None
    if ("\\" in text or "%" in text) and _DECODE_RE.search(text):
        decoded = _View(text, _DECODE_RE, _decode)
        views.append(decoded)
    if ("\n" in text or "\\" in text) and _BREAK_RE.search(text):
        views.append(_View(text, _BREAK_RE, ""))
    if decoded is not None and "\n" in decoded.text and _BREAK_RE.search(decoded.text):
        views.append(_Chain(decoded, _BREAK_RE, ""))
    return views


class Redactor:
    """Masks secrets in JSON-like values; ``known`` are literal secrets (from settings)."""

    def __init__(self, known: Iterable[str] = ()) -> None:
        self.known = sorted(
            {k for k in known if isinstance(k, str) and len(k) >= _MIN_KNOWN}, key=len, reverse=True
        )
        # tool names, keys and reasons come back on every call: each is masked once
        self.text = lru_cache(maxsize=4096)(self._text)  # type: ignore[method-assign]

    def text(self, value: str) -> str:
        """``value`` with every secret in it masked."""
        return self._text(value)

    def _text(self, value: str) -> str:
        spans = self.spans(value)
        if not spans:
            return value
        out: list[str] = []
        done = 0
        for start, end in _merged(spans):
            out += (value[done:start], MASK)
            done = end
        out.append(value[done:])
        return "".join(out)

    def spans(self, value: str) -> list[Span]:
        """Where the secrets are in ``value``: found as it is, decoded (JSON and C escapes,
        URL encoding, base64) and with the line breaks inside a token joined."""
        spans = self._found(value)
        for view in _views(value):
            spans += [view.span(s) for s in self._found(view.text)]
            spans += [view.span(s) for s in self._in_base64(view.text)]
        spans += self._in_base64(value)
        return [s for s in spans if s[1] > s[0]]

    def _in_base64(self, value: str) -> list[Span]:
        """Runs of base64 that decode to text holding a secret (masked whole)."""
        if len(value) < 24:
            return []
        spans = []
        for match in _BASE64_RUN_RE.finditer(value):
            run = match.group()
            if len(run) > _BASE64_MAX:
                continue
            for decoded in _decodings(run):
                if self._found(decoded):
                    spans.append(match.span())
                    break
        return spans

    def _found(self, value: str) -> list[Span]:
        """Where secrets are in ``value`` read as it is."""
        spans: list[Span] = []
        for secret in self.known:
            start = value.find(secret)
            while start >= 0:
                spans.append((start, start + len(secret)))
                start = value.find(secret, start + len(secret))
        for regex, triggers, any_case in _COMPILED:
            text = value.lower() if any_case else value
            if not any(trigger in text for trigger in triggers):
                continue
            for match in regex.finditer(value):
                body = match.groupdict().get("body")
                if body is not None and _inside_word(value, match.start()):
                    if not _looks_random(body):
                        continue
                spans.append(match.span())
        if "PRIVATE KEY" in value:
            spans += _key_tails(value)
        if "://" in value:
            spans += [m.span(2) for m in _URL_PASSWORD_RE.finditer(value)]
        lowered = value.lower()
        if any(word in lowered for word in _NAMED_WORDS):
            spans += [m.span(2) for m in _ASSIGNMENT_RE.finditer(value)]
            spans += [m.span(2) for m in _FLAG_RE.finditer(value)]
        if "pass" in lowered:
            spans += [m.span(2) for m in _WORD_RE.finditer(value)]
        if "mysql" in lowered or "mariadb" in lowered:
            spans += [m.span(2) for m in _MYSQL_RE.finditer(value)]
        return spans

    def value(self, value: Any, key: str | None = None) -> Any:
        """A JSON-like value with secrets masked; a secret-sounding ``key`` masks it whole."""
        if key is not None and is_secret_key(key) and value not in (None, "", [], {}):
            if not isinstance(value, bool):
                return MASK
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {str(k): self.value(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple, set)):
            return [self.value(v) for v in value]
        return self.text(repr(value))


def _merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _decodings(run: str) -> list[str]:
    """A base64 run decoded as text, standard and URL-safe (empty if it decodes to neither)."""
    body = run.rstrip("=")
    body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    padded = body + "=" * (-len(body) % 4)
    out = []
    for altchars in (b"+/", b"-_"):
        try:
            data = base64.b64decode(padded, altchars=altchars, validate=True)
        except (binascii.Error, ValueError):
            continue
        out.append(data.decode("latin-1"))
    return out


def _key_tails(value: str) -> list[Span]:
    """Each private-key END line and the base64 runs right before it: the last one
    whatever its length, those before it of 16 characters or more (key lines, also when
    the line breaks became spaces or escapes), so the words before the key stay."""
    spans, done = [], 0
    for match in _KEY_END_RE.finditer(value):
        start, first = match.start(), True
        while True:
            end = _before_space(value, start, done)
            run = end
            while run > done and value[run - 1] in _BASE64:
                run -= 1
            if run == end or (not first and end - run < 16):
                break
            start, first = run, False
        spans.append((start, match.end()))
        done = match.end()
    return spans


def _before_space(value: str, index: int, done: int) -> int:
    """Where the white space (real or escaped, ``\\n``) that ends at ``index`` begins."""
    while index > done:
        if value[index - 1] in _SPACE:
            index -= 1
        elif index - 2 >= done and value[index - 2 : index] in _ESCAPED_SPACE:
            index -= 2
        else:
            break
    return index


def settings_secrets(settings: Any) -> list[str]:
    """Literal secret values held in settings: SecretStr fields and secret-sounding keys,
    also inside nested models and mappings (e.g. an MCP server's env and headers)."""
    found: list[str] = []
    try:
        sections = settings.all_sections()
    except AttributeError:
        return found
    for model in sections.values():
        _collect(model, "", found)
    return [f for f in found if f]


def _collect(value: Any, name: str, found: list[str]) -> None:
    from pydantic import BaseModel, SecretStr

    if isinstance(value, SecretStr):
        found.append(value.get_secret_value())
    elif isinstance(value, str):
        if name and is_secret_key(name):
            found.append(value)
    elif isinstance(value, BaseModel):
        for key in type(value).model_fields:
            _collect(getattr(value, key, None), key, found)
        for key, item in (value.__pydantic_extra__ or {}).items():
            _collect(item, str(key), found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect(item, str(key), found)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, name, found)
