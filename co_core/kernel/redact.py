"""Mask secrets before anything is written to disk (audit lines, logs).

Two nets: values stored under a secret-sounding key (token, key, password, secret,
credential, auth) are masked whole; inside any string, text that looks like a secret
(API keys of well-known services, bearer tokens, private-key blocks even when cut short,
JWTs, Slack webhooks, passwords in URLs, ``password=...``, netrc's ``password VALUE``,
mysql's ``-pVALUE``) and any literal secret Co knows from its settings is masked.
Over-masking is accepted; leaking is not. Mask before cutting text short: a cut can
remove the part of a secret that makes it recognisable.
"""

from __future__ import annotations

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
    (r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{16,}", ("sk-", "pk-", "rk-")),
    (r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{10,}", ("_live_", "_test_")),  # Stripe keys
    (r"\bwhsec_[A-Za-z0-9]{16,}", ("whsec_",)),  # Stripe webhook signing secrets
    # AWS access key ids and the other unique-id prefixes AWS documents
    (
        r"\b(AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[0-9A-Z]{16}\b",
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
    (r"\bgh[pousr]_[A-Za-z0-9]{20,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),  # GitHub
    (r"\bgithub_pat_[A-Za-z0-9_]{20,}", ("github_pat_",)),
    # GitLab: every token kind is "gl<kind>-" (glpat, gldt, glrt, glptt, glft, glsoat, glimt,
    # glagent, gloas, glcbt, glffct, glwt, ...), routable ones with ".01.crc" after the
    # payload; a kind not known yet still has that shape and a random payload (a digit or a
    # capital in it, unlike "glossary-entry-of-a-page"); GR1348941 runner registration
    (
        r"\bgl(?:pat|dt|rt|rtr|ptt|ft|soat|imt|agent|oas|cbt|ffct|wt|tst|idt)-[A-Za-z0-9_\-.]{16,}",
        ("gl",),
    ),
    (r"\bgl[a-z]{2,7}-(?=[A-Za-z0-9_\-.]*[A-Z0-9])[A-Za-z0-9_\-.]{20,}", ("gl",)),
    (r"\bGR1348941[A-Za-z0-9_\-]{16,}", ("GR1348941",)),
    # Slack: every "xox?-" form (xoxb, xoxp, xoxa, xoxr, xoxs, xoxo, xoxe, xoxc, xoxd) and the
    # rotating "xoxe.xoxp-..." ones; app-level "xapp-"
    (r"\bxox[a-z](?:\.xox[a-z])*-[A-Za-z0-9\-._%+/=]{8,}", ("xox",)),
    (r"\bxapp-[A-Za-z0-9\-]{8,}", ("xapp-",)),
    (  # webhooks
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",
        ("hooks.slack.com",),
    ),
    (r"\bAIza[0-9A-Za-z_\-]{30,}", ("AIza",)),  # Google API keys
    (r"\bya29\.[0-9A-Za-z_\-]{16,}", ("ya29.",)),  # Google OAuth access tokens
    (r"\b1//0[0-9A-Za-z_\-]{20,}", ("1//0",)),  # Google refresh tokens
    (r"\bGOCSPX-[0-9A-Za-z_\-]{20,}", ("GOCSPX-",)),  # Google OAuth client secrets
    (r"\bhf_[A-Za-z0-9]{20,}", ("hf_",)),  # Hugging Face user tokens
    (r"\bapi_org_[A-Za-z0-9]{20,}", ("api_org_",)),  # Hugging Face organisation tokens
    (r"\bnpm_[A-Za-z0-9]{30,}", ("npm_",)),
    (r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", ("eyJ",)),  # JWT
    # "Bearer x", "token x", "Basic x" in any case: the triggers are looked for in lower case
    (r"\b(?i:bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{12,}", ("bearer", "token", "basic")),
]
_COMPILED = [(re.compile(p), triggers, "(?i" in p) for p, triggers in _PATTERNS]
# the end of a private key whose beginning was cut off: the base64 lines before the END
# line are found by walking back from it (a regex would retry at every character: slow)
_KEY_END_RE = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_SPACE = frozenset(" \t\r\n")
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
_URL_PASSWORD_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/?#@\"'<>`]*:)([^\s\"'<>`]*)(@)")
_MIN_KNOWN = 6  # shorter "secrets" from settings would mask ordinary words


@lru_cache(maxsize=1024)
def is_secret_key(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_KEY_WORDS)


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
        for secret in self.known:
            value = value.replace(secret, MASK)
        for regex, triggers, any_case in _COMPILED:
            text = value.lower() if any_case else value
            if any(trigger in text for trigger in triggers):
                value = regex.sub(MASK, value)
        if "PRIVATE KEY" in value:
            value = _mask_key_tails(value)
        if "://" in value:
            value = _URL_PASSWORD_RE.sub(lambda m: m.group(1) + MASK + m.group(3), value)
        lowered = value.lower()
        if any(word in lowered for word in _NAMED_WORDS):
            value = _ASSIGNMENT_RE.sub(
                lambda m: m.group(1) + (m.group(2) if m.group(2) == MASK else MASK), value
            )
            value = _FLAG_RE.sub(lambda m: m.group(1) + MASK, value)
        if "pass" in lowered:
            value = _WORD_RE.sub(lambda m: m.group(1) + MASK, value)
        if "mysql" in lowered or "mariadb" in lowered:
            value = _MYSQL_RE.sub(lambda m: m.group(1) + MASK, value)
        return value

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


def _mask_key_tails(value: str) -> str:
    """Mask each private-key END line and the base64 runs right before it: the last one
    whatever its length, those before it of 16 characters or more (key lines, also when
    the line breaks became spaces), so the words before the key stay."""
    out, done = [], 0
    for match in _KEY_END_RE.finditer(value):
        start, first = match.start(), True
        while True:
            end = start
            while end > done and value[end - 1] in _SPACE:
                end -= 1
            run = end
            while run > done and value[run - 1] in _BASE64:
                run -= 1
            if run == end or (not first and end - run < 16):
                break
            start, first = run, False
        out.append(value[done:start])
        out.append(MASK)
        done = match.end()
    out.append(value[done:])
    return "".join(out)


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
