"""Is a model string one Co can use? Checked where it is written: the ``model`` setting
(``co config set model``, settings files, ``CO_MODEL``) and ``--model``.

Only the form is checked here, without network or imports: a known provider and a name.
Whether the provider's package is installed, the server answers or the model exists is
found out when Co starts (``co_core.agent.models``).
"""

from __future__ import annotations

import difflib

AUTO = "auto"
# Co's own providers, then pydantic-ai's (``infer_provider_class``; tests/test_models.py
# checks this list against the installed pydantic-ai)
CO_PROVIDERS = ("ollama", "gemini", "openai-compatible", "local", "function")
PYDANTIC_AI_PROVIDERS = (
    "alibaba",
    "anthropic",
    "azure",
    "azure-responses",
    "bedrock",
    "bedrock-mantle",
    "cerebras",
    "cohere",
    "crusoe",
    "deepseek",
    "elevenlabs",
    "fireworks",
    "github",
    "github-copilot",
    "google",
    "google-cloud",
    "google-decisions",
    "groq",
    "heroku",
    "huggingface",
    "litellm",
    "meta",
    "mistral",
    "moonshotai",
    "nebius",
    "ollama",
    "openai",
    "openai-chat",
    "openai-chatgpt",
    "openai-codex",
    "openai-decisions",
    "openai-responses",
    "openrouter",
    "ovhcloud",
    "sambanova",
    "sentence-transformers",
    "snowflake",
    "system-one",
    "together",
    "typesafe",
    "vercel",
    "vllm",
    "voyageai",
    "xai",
    "zai",
)
PROVIDERS = frozenset(CO_PROVIDERS + PYDANTIC_AI_PROVIDERS)
EXAMPLES = (
    "ollama:qwen3:4b, gemini:gemini-2.5-flash, openai-compatible:NAME (with --base-url), "
    "local, local:NAME (`co models list`), anthropic:NAME, or auto"
)


def check(spec: str) -> str:
    """``spec`` tidied (surrounding spaces gone), or ValueError in one line saying why not
    (the caller names the value: settings add ``(got '…')``, ``--model`` its own)."""
    text = spec.strip()
    if not text:
        raise ValueError(f"no model given; use {EXAMPLES}")
    if text in (AUTO, "local"):
        return text
    provider, colon, name = text.partition(":")
    if not colon:
        near = difflib.get_close_matches(text, [*CO_PROVIDERS, AUTO], n=1, cutoff=0.75)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"should look like provider:name{hint}; use {EXAMPLES}")
    known = provider.removeprefix("gateway/")
    if known not in PROVIDERS:
        near = difflib.get_close_matches(known, sorted(PROVIDERS), n=1, cutoff=0.75)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"unknown model provider {provider!r}{hint}; use {EXAMPLES}")
    if not name.strip():
        raise ValueError(f"names no model after {provider!r}; use {EXAMPLES}")
    if provider == "function" and ":" not in name:
        raise ValueError("should be function:MODULE:ATTRIBUTE")
    return text


def is_auto(spec: str | None) -> bool:
    return spec is None or spec.strip() in ("", AUTO)
