"""Mask secrets before anything is written to disk (audit lines, logs).

Two nets: values stored under a secret-sounding key (token, key, password, secret,
credential, auth) are masked whole; inside any string, text that looks like a secret
(API keys of well-known services, bearer tokens, private-key blocks, JWTs, passwords in
URLs, ``password=...``) and any literal secret Co knows from its settings is masked.
Over-masking is accepted; leaking is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

MASK = "[REDACTED]"
SECRET_KEY_WORDS = ("token", "key", "password", "passwd", "secret", "credential", "auth")

_PATTERNS = [
    # private key blocks (PEM / OpenSSH), possibly truncated
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    r"\b(sk|pk|rk)-(ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic, ...
    r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{10,}",  # Stripe
    r"\b(AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_\-]{16,}",  # GitLab
    r"\bxox[abposr]-[A-Za-z0-9\-]{8,}",  # Slack
    r"\bxapp-[A-Za-z0-9\-]{8,}",
    r"\bAIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"\bya29\.[0-9A-Za-z_\-]{16,}",  # Google OAuth access tokens
    r"\b1//0[0-9A-Za-z_\-]{20,}",  # Google refresh tokens
    r"\bhf_[A-Za-z0-9]{20,}",  # Hugging Face
    r"\bnpm_[A-Za-z0-9]{30,}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
    r"\b(?i:bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{12,}",
]
_SECRET_RE = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))
# A literal that every match of _SECRET_RE contains: most strings have none, and finding
# that out costs a third of running the patterns (tests/test_redact.py keeps them in step)
_SECRET_HINT = re.compile(
    r"-----BEGIN|[spr]k[-_]|A(?:KIA|SIA|GPA|IDA|ROA)|gh[pousr]_|github_pat_|glpat-|xox|xapp-"
    r"|AIza|ya29\.|1//0|hf_|npm_|eyJ|(?i:bearer|token|basic)"
)
# password=..., api_key: "...", --token ..., in free text (keeps the name, masks the value)
_ASSIGNMENT_RE = re.compile(
    r"(?i)(\b[\w.\-]*(?:token|api[_\-]?key|apikey|password|passwd|pwd|secret|credential|auth)[\w.\-]*"
    r"(?:\"|')?\s*(?:=|:)\s*)(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)"
)
_FLAG_RE = re.compile(
    r"(?i)((?:^|\s)--?[\w\-]*(?:token|api[_\-]?key|apikey|password|passwd|secret|credential|auth)[\w\-]*\s+)"
    r"(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)"
)
_URL_PASSWORD_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]+:)([^\s/@]+)(@)")
_MIN_KNOWN = 6  # shorter "secrets" from settings would mask ordinary words
_MEMO_MAX_ITEMS, _MEMO_MAX_CHARS = 4096, 512  # tool names, keys, reasons repeat every call


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
        self._memo: dict[str, str] = {}  # short strings already masked (same input, same output)

    def text(self, value: str) -> str:
        if len(value) > _MEMO_MAX_CHARS:
            return self._mask(value)
        done = self._memo.get(value)
        if done is None:
            if len(self._memo) >= _MEMO_MAX_ITEMS:
                self._memo.clear()
            done = self._memo[value] = self._mask(value)
        return done

    def _mask(self, value: str) -> str:
        for secret in self.known:
            value = value.replace(secret, MASK)
        if _SECRET_HINT.search(value):
            value = _SECRET_RE.sub(MASK, value)
        # The passes below need a literal character to match at all: skip them without it.
        if "@" in value and "://" in value:
            value = _URL_PASSWORD_RE.sub(lambda m: m.group(1) + MASK + m.group(3), value)
        if "=" in value or ":" in value:
            value = _ASSIGNMENT_RE.sub(
                lambda m: m.group(1) + (m.group(2) if m.group(2) == MASK else MASK), value
            )
        if "-" in value:
            value = _FLAG_RE.sub(lambda m: m.group(1) + MASK, value)
        return value

    def value(self, value: Any, key: str | None = None) -> Any:
        kind = type(value)  # the common types first: every audit line and span passes here
        if kind is str:
            if key is not None and value and is_secret_key(key):
                return MASK
            done = self._memo.get(value)  # text() without the call, for strings seen before
            return done if done is not None else self.text(value)
        if key is not None and is_secret_key(key) and value not in (None, "", [], {}):
            if not isinstance(value, bool):
                return MASK
        if value is None or kind is int or kind is bool or kind is float:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {str(k): self.value(v, str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple, set)):
            return [self.value(v) for v in value]
        if isinstance(value, (bool, int, float)):
            return value
        return self.text(repr(value))


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
