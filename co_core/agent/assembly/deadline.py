"""The whole-request deadline (setting ``request_timeout``): a streamed answer included."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRequestTimeout


@dataclass
class RequestDeadline(AbstractCapability[Any]):
    """A model request taking longer than ``seconds`` ends the turn with one clear line."""

    seconds: float

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: Any, handler: Any
    ) -> Any:
        with anyio.move_on_after(self.seconds):
            return await handler(request_context)
        raise ModelRequestTimeout(request_context.model.model_name, self.seconds)
