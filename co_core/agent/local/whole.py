"""A complete model response replayed as a stream.

Some requests cannot stream (llama-cpp-python with tools offered; the local model's
constrained calls, which must be whole before they are shown), but the REPL reads every
answer as a stream: the answer is fetched whole and replayed, with the server's usage.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.test import TestStreamedResponse


class WholeResponse(TestStreamedResponse):
    """A complete response replayed as stream events, with what the server said about it:
    its usage, its id and why it ended (the request's span records them)."""

    async def _get_event_iterator(self) -> Any:
        async for event in super()._get_event_iterator():
            yield event
        answer = self._structured_response
        self._usage = answer.usage
        self.provider_response_id = answer.provider_response_id
        self.provider_details = answer.provider_details
        self.finish_reason = answer.finish_reason


def replay(
    response: ModelResponse,
    messages: list[ModelMessage],
    params: ModelRequestParameters,
    *,
    model_name: str,
    system: str,
) -> WholeResponse:
    return WholeResponse(
        model_request_parameters=params,
        _model_name=response.model_name or model_name,
        _structured_response=response,
        _messages=messages,
        _provider_name=system,
    )
