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

_PATTERNS = [
    # private key blocks (PEM / OpenSSH), possibly cut short at either end
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    r"(?:[A-Za-z0-9+/=]{16,}\s+)+(?:[A-Za-z0-9+/=]+\s*)?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
    r"\b(sk|pk|rk)-(ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic, ...
    r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{10,}",  # Stripe
    r"\b(AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_\-]{16,}",  # GitLab
    r"\bxox[abposr]-[A-Za-z0-9\-]{8,}",  # Slack
    r"\bxapp-[A-Za-z0-9\-]{8,}",
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+",  # webhooks
    r"\bAIza[0-9A-Za-z_\-]{30,}",  # Google API keys
    r"\bya29\.[0-9A-Za-z_\-]{16,}",  # Google OAuth access tokens
    r"\b1//0[0-9A-Za-z_\-]{20,}",  # Google refresh tokens
    r"\bhf_[A-Za-z0-9]{20,}",  # Hugging Face
    r"\bnpm_[A-Za-z0-9]{30,}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
    r"\b(?i:bearer|token|basic)\s+[A-Za-z0-9._~+/=\-]{12,}",
]
_SECRET_RE = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))
# password=..., api_key: "...", --token ..., in free text (keeps the name, masks the value)
_ASSIGNMENT_RE = re.compile(
    r"(?i)(\b[\w.\-]*(?:token|api[_\-]?key|apikey|password|passwd|pwd|secret|credential|auth)[\w.\-]*"
    r"(?:\"|')?\s*(?:=|:)\s*)(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)"
)
_FLAG_RE = re.compile(
    r"(?i)((?:^|\s)--?[\w\-]*(?:token|api[_\-]?key|apikey|password|passwd|secret|credential|auth)[\w\-]*\s+)"
    r"(\"[^\"]*\"|'[^']*'|[^\s&;,'\"]+)"
)
# netrc and similar: "machine host login me password VALUE"; mysql's "-pVALUE"
_WORD_RE = re.compile(r"(?i)(\b(?:password|passwd|passphrase)[ \t]+)([^\s\"']+)")
_MYSQL_RE = re.compile(r"(\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n;|&]*?\s-p)([^\s\-]\S*)")
_URL_PASSWORD_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]+:)([^\s/@]+)(@)")
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
        value = _SECRET_RE.sub(MASK, value)
        value = _URL_PASSWORD_RE.sub(lambda m: m.group(1) + MASK + m.group(3), value)
        value = _ASSIGNMENT_RE.sub(
            lambda m: m.group(1) + (m.group(2) if m.group(2) == MASK else MASK), value
        )
        value = _FLAG_RE.sub(lambda m: m.group(1) + MASK, value)
        value = _WORD_RE.sub(lambda m: m.group(1) + MASK, value)
        return _MYSQL_RE.sub(lambda m: m.group(1) + MASK, value)

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
