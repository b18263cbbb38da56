"""Masking: every kind of secret Co knows is masked wherever it sits in a string."""

from __future__ import annotations

import re

import pytest

from co_core.kernel.redact import _PATTERNS, MASK, Redactor

# One sample per pattern in co_core.kernel.redact._PATTERNS (fake values of the real shapes)
SAMPLES = {
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    # the same key after an error message was cut short: its BEGIN line is gone
    "pem-tail": "MIIEowIBAAKCAQEA7x9k2mN4pL\nq7vR9tY3wE6uI0oPaZx81kQ2mN\n-----END RSA PRIVATE KEY-----",
    "slack-webhook": "https://hooks.slack.com/services/T0123ABC/B0456DEF/Xy7zR4nd0mS3cr3tV4lu3",
    "openai": "sk-proj-Zx81kQ2mN4pL7vR9tY3wE6",
    "stripe": "rk_live_4eC39HqLyjWDarjtT1",
    "aws": "AKIAIOSFODNN7EXAMPLQ",
    "github": "ghs_R4nd0mT0k3nV4lu3R4nd0m",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdef",
    "gitlab": "glpat-Zx81kQ2mN4pL7vR9tY",
    "slack": "xoxp-2718281828-3141592653",
    "slack-app": "xapp-1-A0123-456789",
    "google-key": "AIzaSyD3xAmPl3K3yV4lu3F0rT3st1ngOnly",
    "google-oauth": "ya29.a0AfH6SMBx3xAmPl3T0k3n",
    "google-refresh": "1//0gR4nd0mR3fr3shT0k3nV4lu3",
    "huggingface": "hf_R4nd0mT0k3nV4lu3R4nd0mT0k",
    "npm": "npm_R4nd0mT0k3nV4lu3R4nd0mT0k3nV4lu3",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
    "bearer": "Authorization: Bearer abcDEF123456789xyz",
}


def test_every_pattern_has_a_sample() -> None:
    """A pattern added without a sample here fails: its secrets would go untested."""
    for pattern in _PATTERNS:
        assert any(re.search(pattern, s) for s in SAMPLES.values()), pattern


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_kind_of_secret_is_masked_inside_text(kind: str) -> None:
    secret = SAMPLES[kind]
    masked = Redactor().text(f"ran tool with {secret} and then stopped")
    assert MASK in masked
    assert secret not in masked and secret.split()[-1] not in masked
    assert masked.startswith("ran tool with ") and masked.endswith(" and then stopped")


def test_ordinary_text_is_left_alone() -> None:
    text = "call_9f8e7d6c5b4a39281706f5e4d3c2b1a0 read notes/weekly review.md (skipped 3)"
    assert Redactor().text(text) == text


@pytest.mark.parametrize(
    "text, secret",
    [
        ("machine api.example.com login bob password hunter2-but-longer", "hunter2-but-longer"),
        ("mysql -u root -pS3cr3tPw0rd shop < dump.sql", "S3cr3tPw0rd"),
        ("mysqldump --user=app -pAnotherPw1 db", "AnotherPw1"),
    ],
)
def test_passwords_in_command_lines_and_netrc_are_masked(text: str, secret: str) -> None:
    masked = Redactor().text(text)
    assert secret not in masked and MASK in masked


def test_options_that_only_look_like_passwords_stay() -> None:
    text = "find . -print -perm 644 -path ./x && ssh -p 2222 host"
    assert Redactor().text(text) == text
