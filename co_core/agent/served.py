"""Models on servers Co talks to over HTTP (llama.cpp, Ollama, vLLM, LM Studio): the
OpenAI-compatible model with local servers' quirks handled, and the wrap that constrains
and steers a small one (co_core.agent.local.constrained). The providers use these
(co_core.agent.providers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from co_core.agent.small import STEERED_MAX_TOKENS, SteeringSettings, steered
from co_core.kernel.settings import Settings


def compat_model(
    name: str,
    base_url: str,
    api_key: str | None,
    system: str,
    *,
    stream_tools: bool = True,
    context_window: int | None = None,
) -> Any:
    """An OpenAI-compatible model with the quirks of local servers handled.

    - llama.cpp's server rejects an assistant message whose content is null: send "".
    - Many servers lack ``tool_choice="required"``: never send it.
    - llama-cpp-python cannot stream when tools are offered ("Automatic streaming tool
      choice is not supported"): such requests are made whole and replayed as a stream.
      ``stream_tools=False`` starts that way; otherwise Co switches on the first such error.
    """
    from contextlib import asynccontextmanager

    from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

    from co_core.agent.local.whole import replay

    class CompatChatModel(OpenAIChatModel):
        no_stream_with_tools = not stream_tools

        async def _map_messages(self, *args: Any, **kwargs: Any) -> Any:
            messages = await super()._map_messages(*args, **kwargs)
            for message in messages:
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
            return messages

        @asynccontextmanager
        async def request_stream(self, messages, model_settings, params, run_context=None):
            if not (self.no_stream_with_tools and params.function_tools):
                entered = False
                try:
                    async with super().request_stream(
                        messages, model_settings, params, run_context
                    ) as stream:
                        entered = True
                        yield stream
                    return
                except (ModelHTTPError, UnexpectedModelBehavior) as exc:
                    # llama-cpp-python answers 200 and then an empty stream (the error is
                    # only in its log); other servers answer an HTTP error naming streaming.
                    text = str(exc).lower()
                    cannot = "stream" in text and (
                        isinstance(exc, ModelHTTPError) or "without content" in text
                    )
                    if entered or not cannot or not params.function_tools:
                        raise
                    self.no_stream_with_tools = True
            response = await self.request(messages, model_settings, params)
            yield replay(response, messages, params, model_name=self.model_name, system=self.system)

    provider = OpenAICompatibleProvider(system, base_url=base_url, api_key=api_key or "none")
    # Local servers read ``max_tokens`` (llama-cpp-python ignores ``max_completion_tokens``).
    profile = OpenAIModelProfile(
        supports_forced_tool_choice=False, openai_chat_supports_max_completion_tokens=False
    )
    if context_window:  # what Co's own server was started with (sessions/tokens.py reads it)
        profile["context_window"] = context_window
    return CompatChatModel(name, provider=provider, profile=profile)


def steer(
    model: Any, settings: Settings, *, parameters: Callable[[], float | None], json: bool
) -> Any:
    """``model`` (an Ollama or llama.cpp server's) as Co steers it, when it does: wrapped
    in constrained calls (one JSON schema for both servers) with the small-model steering
    on. ``parameters`` is asked only in ``auto`` mode. A model whose size the server does
    not say is not steered, but carries its steered self (``co_steered``): when its first
    calls fail, the conversation steers it from then on (co_core.agent.conversation)."""
    from co_core.agent.local.constrained import ConstrainedModel

    section = settings.section("steering")
    assert isinstance(section, SteeringSettings)
    count = parameters() if section.mode == "auto" else None

    def wrapped() -> ConstrainedModel:
        return ConstrainedModel(
            model,
            max_tokens=STEERED_MAX_TOKENS,
            small=True,
            server="ollama" if json else "llama.cpp",
            temperature=section.temperature,
            result_chars=section.result_chars,
        )

    if steered(section, parameters=count):
        return wrapped()
    if section.mode == "auto" and count is None:
        try:
            setattr(model, STEERED_LATER, wrapped)
        except AttributeError:  # a model that takes no attribute: no fallback
            pass
    return model


STEERED_LATER = "co_steered"  # a model of unknown size: its steered self, made on demand
UNKNOWN_SIZE = (
    "the server does not say how big {model} is, so Co did not steer it and its calls "
    "failed: Co steers it from now on (`co config set steering.mode on` makes that the "
    "default, `off` stops it)"
)
