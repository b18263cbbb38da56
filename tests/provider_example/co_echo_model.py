"""A whole model provider in one plugin file: ``--model echo:ANY`` answers with what it was
told (docs/plugins.md, ``register_models``)."""

from __future__ import annotations

# docs: register_models
from co_core import CheckResult, ModelRegister, ModelRequest, Settings, hookimpl, ok


@hookimpl
def register_models(register: ModelRegister) -> None:
    register("echo", build, status=status, free=True, example="echo:NAME")


def build(request: ModelRequest) -> object:
    """The pydantic-ai model for ``echo:NAME`` (imported here: Co's start stays fast)."""
    from collections.abc import AsyncIterator

    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    def text(messages: list[object]) -> str:
        said = messages[-1].parts[-1].content  # type: ignore[attr-defined]
        return f"{request.name} says: {said}"

    def answer(messages: list[object], info: object) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text(messages))])

    async def stream(messages: list[object], info: object) -> AsyncIterator[str]:
        yield text(messages)

    return FunctionModel(answer, stream_function=stream, model_name=f"echo-{request.name}")


def status(name: str, settings: Settings) -> CheckResult:
    """``co status``'s model row when the model is ``echo:NAME``."""
    return ok(f"echo:{name} (always answers)")


# /docs
