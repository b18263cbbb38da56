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
    "stripe-webhook": "whsec_R4nd0mS1gn1ngS3cr3tV4lu3",
    "aws-other-ids": "AIDAJQABLZS4A3QDU576",
    "gitlab-unknown-kind": "glxyz-R4nd0mT0k3nV4lu3R4nd0m",
    "gitlab-runner-registration": "GR1348941R4nd0mT0k3nV4lu3R4",
    "google-client-secret": "GOCSPX-R4nd0mCl13ntS3cr3tV4lu3",
    "huggingface-org": "api_org_R4nd0mT0k3nV4lu3R4nd0mT0k",
}

# Each promised family in every documented shape (the issuer's prefixes and formats):
# a variant that leaks fails here, by name.
FAMILIES = {
    "slack": [
        "xoxb-2718281828-3141592653-AbCdEfGhIjKlMnOp",  # bot
        "xoxp-2718281828-3141592653-2718281828-0123abcd",  # user
        "xoxa-2-2718281828-3141592653-AbCdEf",  # workspace app (legacy)
        "xoxr-2718281828-AbCdEfGhIj",  # refresh (legacy)
        "xoxs-2718281828-3141592653-AbCdEfGh",  # session
        "xoxo-2718281828-AbCdEfGhIj",
        "xoxe-1-My0xMjM0NTY3ODkwLTEyMzQ1Njc4OTA",  # rotating refresh token
        "xoxe.xoxp-1-Mi0yLTI3MTgyODE4MjgtMzE0MTU5MjY1Mw",  # rotating access token
        "xoxe.xoxb-1-Mi0yLTI3MTgyODE4MjgtMzE0MTU5MjY1Mw",
        "xoxc-2718281828-3141592653-2718281828-abcdef0123",  # browser client token
        "xoxd-AbCdEf%2BGhIjKl%2FMnOpQr%3D%3D",  # browser cookie
        "xapp-1-A0123ABCDEF-2718281828-abcdef0123456789",  # app-level
    ],
    "gitlab": [
        "glpat-Zx81kQ2mN4pL7vR9tY3w",  # personal, project, group, impersonation
        "glpat-Zx81kQ2mN4pL7vR9tY3wE6uI0oPa.01.0w1i1e8n7",  # routable format
        "mycorp-glpat-Zx81kQ2mN4pL7vR9tY3w",  # instance prefix
        "gldt-Zx81kQ2mN4pL7vR9tY3w",  # deploy
        "glrt-t1_Zx81kQ2mN4pL7vR9tY3w",  # runner authentication
        "glptt-4f0c1b2a3d4e5f60718293a4b5c6d7e8f9a0b1c2",  # pipeline trigger
        "glft-Zx81kQ2mN4pL7vR9tY3w",  # feed
        "glsoat-Zx81kQ2mN4pL7vR9tY3w",  # SCIM / service account
        "glimt-Zx81kQ2mN4pL7vR9tY3wE6uI0",  # incoming mail
        "glagent-Zx81kQ2mN4pL7vR9tY3wE6uI0oPaZx81kQ2mN4pL7vR9tY3wE6",  # k8s agent
        "gloas-4f0c1b2a3d4e5f60718293a4b5c6d7e8f9a0b1c24f0c1b2a3d4e5f60718293a4b5c6",  # OAuth
        "glcbt-64_Zx81kQ2mN4pL7vR9tY3w",  # CI/CD job
        "glffct-Zx81kQ2mN4pL7vR9tY3w",  # feature flags client
        "glwt-Zx81kQ2mN4pL7vR9tY3w",  # workspace
        "GR1348941Zx81kQ2mN4pL7vR9tY3w",  # runner registration (deprecated)
    ],
    "url-password": [
        "redis://:hunter2-S3cret@cache.internal:6379/0",  # empty user
        "postgres://app:hunter2-S3cret@db.internal/shop",
        "mongodb+srv://admin:hunter2-S3cret@cluster0.example.net/?retryWrites=true",
        "amqp://guest:hunter2-S3cret@rabbit:5672/",
        "https://x-access-token:hunter2-S3cret@github.com/org/repo.git",
        "ftp://user:hunter2-S3cret@files.example.com/pub",
        "mysql://root:p@ss/w:rd-hunter2@db:3306/x",  # unencoded @, / and : inside
        "redis://:hunter2%40S3cret@cache:6379",  # percent-encoded
    ],
    "openai-anthropic": [
        "sk-Zx81kQ2mN4pL7vR9tY3wE6uI0oPaZx81kQ2mN4pL",
        "sk-proj-Zx81kQ2mN4pL7vR9tY3w_E6uI0oPa-Zx81kQ2mN4pL",
        "sk-svcacct-Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
        "sk-admin-Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
        "sk-ant-api03-Zx81kQ2mN4pL7vR9tY3wE6uI0oPa-Zx81kQ2mN4pLAA",
        "sk-ant-admin01-Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
    ],
    "stripe": [
        "sk_live_51HZx81kQ2mN4pL7vR9tY3w",
        "rk_test_51HZx81kQ2mN4pL7vR9tY3w",
        "whsec_Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
    ],
    "aws": ["AKIAIOSFODNN7EXAMPLQ", "ASIAY34FZKBOKMUTVV7A", "AROAJQABLZS4A3QDU576"],
    "github": [
        "ghp_Zx81kQ2mN4pL7vR9tY3wE6uI0oPaZx81kQ2m",
        "gho_Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
        "ghu_Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
        "ghs_Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
        "ghr_Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
        "github_pat_11ABCDEFG0123456789_Zx81kQ2mN4pL7vR9tY3wE6uI0oPa",
    ],
    "huggingface-npm": [
        "hf_Zx81kQ2mN4pL7vR9tY3wE6uI0oPaZx81",
        "npm_Zx81kQ2mN4pL7vR9tY3wE6uI0oPaZx81",
        "api_org_Zx81kQ2mN4pL7vR9tY3wE6uI0oPaZx",
    ],
    "google": [
        "AIzaSyD3xAmPl3K3yV4lu3F0rT3st1ngOnly",
        "ya29.a0AfH6SMBx3xAmPl3T0k3n",
        "1//0gR4nd0mR3fr3shT0k3nV4lu3",
        "GOCSPX-Zx81kQ2mN4pL7vR9tY3wE6uI0oP",
    ],
    "jwt": [
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
        "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3In0.",
    ],  # unsigned
    "bearer": ["Authorization: Bearer abcDEF123456789xyz", "authorization: basic dXNlcjpodW50ZXIy"],
}


@pytest.mark.parametrize(
    "family, secret",
    [(family, s) for family, shapes in FAMILIES.items() for s in shapes],
    ids=[f"{family}-{i}" for family, shapes in FAMILIES.items() for i in range(len(shapes))],
)
def test_every_documented_shape_of_each_family_is_masked(family: str, secret: str) -> None:
    for text in (secret, f"ran `{secret}` then", f'{{"value": "{secret}"}}', f"x={secret}\n"):
        masked = Redactor().text(text)
        assert MASK in masked, (family, text)
        # nothing secret is left: the longest run the mask left is short and public
        if family == "url-password":
            assert "hunter2" not in masked and "S3cret" not in masked, masked
        else:
            assert secret.split()[-1] not in masked, masked
            assert secret.split()[-1][-8:] not in masked, masked


@pytest.mark.parametrize(
    "text",
    [
        "glossary-entry-for-the-page and glance-at-the-result-of-it",
        "see https://example.com:8080/path and ssh git@github.com:org/repo.git",
        "mail bob@example.com about xox and glpat",
        "sk-learn is a library; the task-list-item-renderer-component",
    ],
)
def test_text_that_merely_resembles_a_secret_stays(text: str) -> None:
    assert Redactor().text(text) == text


def test_every_pattern_has_a_sample() -> None:
    """A pattern added without a sample here fails: its secrets would go untested."""
    for pattern, _ in _PATTERNS:
        assert any(re.search(pattern, s) for s in SAMPLES.values()), pattern


def test_every_match_holds_one_of_its_patterns_triggers() -> None:
    """A pattern runs only on text holding one of its triggers: each match must hold one."""
    texts = [*SAMPLES.values(), *(s for shapes in FAMILIES.values() for s in shapes)]
    for pattern, triggers in _PATTERNS:
        for text in texts:
            for match in re.finditer(pattern, text):
                found = match.group(0)
                found = found.lower() if "(?i" in pattern else found
                assert any(t in found for t in triggers), (pattern, found)


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
