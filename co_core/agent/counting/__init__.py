"""Which counter counts for which model: its own tokenizer where one is at hand.

- the counter its provider gives (``register_models``' ``counter``: OpenAI's models count
  with tiktoken, ``tiktoken_counter.py``; Ollama, which has no tokenize endpoint, with the
  estimate);
- the ``local`` model: the llama.cpp server Co started, as the local model reads a
  request (``local.py``);
- other OpenAI-compatible servers: their own tokenize endpoint if they have one
  (llama.cpp, vLLM: ``server.py``), else the estimate;
- models whose provider counts tokens (Anthropic, Gemini, Bedrock): the estimate, checked
  by the provider's count near the limit (``provider.py``);
- everything else (Ollama, which has no tokenize endpoint; scripted models): the estimate
  (co_core.sessions.counting), corrected by the input tokens the provider reports.
"""

from __future__ import annotations

from typing import Any

from co_core.sessions.counting import Counter

COUNTER = "co_counter"  # a model's attribute: its provider's counter (co_core.agent.models)


def _base_url(model: Any) -> str | None:
    try:
        url = getattr(model, "base_url", None)
    except Exception:  # a provider that cannot say offline
        return None
    return url if isinstance(url, str) and url else None


def counter_for(model: Any) -> Counter:
    """A new counter for ``model`` (co_core.sessions.counting.Counting keeps one per model)."""
    from pydantic_ai.models.wrapper import WrapperModel

    from co_core.agent.local.constrained import ConstrainedModel

    given = getattr(model, COUNTER, None)
    if callable(given):
        found: Counter = given(model)
        return found
    if isinstance(model, ConstrainedModel):
        url = _base_url(model.wrapped)
        if url:
            from co_core.agent.counting.local import LocalCounter

            return LocalCounter(url)
    while isinstance(model, WrapperModel):
        model = model.wrapped
    name = getattr(model, "model_name", "") or ""
    url = _base_url(model)
    if url and _is_openai_compatible(model):
        from co_core.agent.counting.server import ServerCounter

        return ServerCounter(url, name, _api_key(model))
    if _has_count_endpoint(model):
        from co_core.agent.counting.provider import ProviderCounter

        return ProviderCounter(model)
    return Counter()


def tiktoken(model: Any) -> Counter:
    """OpenAI's own tokenizer, for OpenAI's models (their provider's ``counter``)."""
    from co_core.agent.counting.tiktoken_counter import TiktokenCounter

    return TiktokenCounter(getattr(model, "model_name", "") or "")


def estimate(model: Any) -> Counter:
    """Co's estimate, corrected by what the provider reports (a server with no tokenizer)."""
    return Counter()


def _api_key(model: Any) -> str | None:
    key = getattr(getattr(model, "client", None), "api_key", None)
    return key if isinstance(key, str) and key not in ("", "none") else None


def _has_count_endpoint(model: Any) -> bool:
    """Does pydantic-ai count tokens for this model class (Anthropic, Google, Bedrock)?"""
    from pydantic_ai.models import Model

    return type(model).count_tokens is not Model.count_tokens


def _is_openai_compatible(model: Any) -> bool:
    from pydantic_ai.models.openai import OpenAIChatModel

    return isinstance(model, OpenAIChatModel)
