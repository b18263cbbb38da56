"""Counting for models whose provider has a count endpoint (Anthropic's ``count_tokens``,
Gemini's ``countTokens``, Bedrock's), through pydantic-ai's ``Model.count_tokens``.

Asking the provider is a round trip, so it is not asked for every request: the estimate
counts, and the provider checks it once, on the first request that fills half the window
before any answer has reported its input tokens (afterwards those reports correct the
estimate for free). The check counts the messages alone (Gemini's API counts no system
prompt or tools); their ratio to the estimate's count scales every later count
(co_core.sessions.counting).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from co_core.sessions.counting import Counter

WORTH_CHECKING = 0.5  # a request filling less of the window fits whatever the error


class ProviderCounter(Counter):
    label = "estimated, checked by the provider's token count"

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model
        self.failed: str | None = None

    def wants_check(self, fraction: float) -> bool:
        return self.failed is None and not self.observed and fraction >= WORTH_CHECKING

    async def check(self, messages: Sequence[Any]) -> int | None:
        from pydantic_ai.models import ModelRequestParameters

        try:
            usage = await self.model.count_tokens(list(messages), None, ModelRequestParameters())
        except Exception as exc:  # no endpoint after all, or it failed: the estimate stands
            self.failed = (str(exc).strip() or type(exc).__name__).splitlines()[0][:200]
            return None
        return int(usage.input_tokens) or None

    @property
    def describe(self) -> str:
        if self.failed:
            return f"{Counter.label}; the provider's count: {self.failed}"
        return self.label
