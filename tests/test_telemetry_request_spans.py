"""A model request's span without content: what pydantic-ai's own span says, made without
preparing the request twice or serialising every tool into it.

Checked against pydantic-ai itself: the same scripted run traced by Co's request spans
and by pydantic-ai's own (its attribute step put back for the run), span for span, and
the model's own count of how often a request was prepared.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, ModelRetry, _instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from co_core.telemetry.agent_spans import LEFT_OUT_WITHOUT_CONTENT, instrumentation

# differ between any two runs, whoever makes the span
RUN_BOUND = {"gen_ai.agent.call.id", "gen_ai.conversation.id"}


class CountingModel(FunctionModel):
    """A scripted model that counts how often a request is prepared for it."""

    prepared = 0

    def prepare_request(self, model_settings: Any, model_request_parameters: Any) -> Any:
        CountingModel.prepared += 1
        return super().prepare_request(model_settings, model_request_parameters)


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls = sum(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", []))
    if calls == 0:
        return ModelResponse(parts=[ToolCallPart("find_colour", {"shade": "teal"})])
    if calls == 1:
        return ModelResponse(parts=[ToolCallPart("wobbly", {"times": 1})])
    if calls == 2:
        return ModelResponse(parts=[ToolCallPart("wobbly", {"times": 2})])
    return ModelResponse(parts=[TextPart("done")], finish_reason="stop", provider_response_id="r-4")


def _run(content: bool | None) -> tuple[list[Any], int, int]:
    """The spans of one scripted run (None: untraced), how often a request was prepared,
    and how many requests there were."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    capabilities = [] if content is None else [instrumentation(provider, content)]
    model = CountingModel(_script, model_name="scripted")
    model_settings = {"temperature": 0.25, "max_tokens": 321, "seed": 7}
    agent = Agent(model, name="co", capabilities=capabilities, model_settings=model_settings)

    @agent.tool_plain
    def find_colour(shade: str) -> str:
        """Find a colour by its shade."""
        return f"{shade} is #008080"

    @agent.tool_plain
    def wobbly(times: int) -> str:
        """Fails the first time."""
        if times == 1:
            raise ModelRetry("again, with times=2")
        return "steady"

    CountingModel.prepared = 0
    result = agent.run_sync("colours please")
    assert result.output == "done"
    requests = sum(1 for m in result.all_messages() if m.kind == "response")
    return exporter.get_finished_spans(), CountingModel.prepared, requests


@pytest.fixture
def steps() -> Iterator[tuple[Any, Any]]:
    """Co's attribute step for request spans and pydantic-ai's own, Co's put back after."""
    instrumentation(TracerProvider(), False)  # Co's step in place, as in any Co session
    lean = _instrumentation._prepare_model_request_span_context
    try:
        yield lean, lean.full  # type: ignore[attr-defined]
    finally:
        _instrumentation._prepare_model_request_span_context = lean


def _use(step: Any) -> None:
    _instrumentation._prepare_model_request_span_context = step


def _chats(spans: list[Any]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in (s.attributes or {}).items() if k not in RUN_BOUND} | {"": s.name}
        for s in spans
        if (s.attributes or {}).get("gen_ai.operation.name") == "chat"
    ]


def test_without_content_a_request_is_prepared_once_as_untraced() -> None:
    _, untraced, requests = _run(None)
    _, traced, traced_requests = _run(False)
    assert requests == traced_requests == 4
    assert untraced == requests  # the model prepares what it sends
    assert traced == untraced  # and tracing prepares nothing more


def test_with_content_pydantic_ais_own_span_is_made(steps: tuple[Any, Any]) -> None:
    """Content on is pydantic-ai's path whole (it prepares once more for the span)."""
    spans, prepared, requests = _run(True)
    assert prepared > requests
    assert all("gen_ai.tool.definitions" in chat for chat in _chats(spans))


def test_request_spans_say_what_pydantic_ais_say_but_the_tools(steps: tuple[Any, Any]) -> None:
    lean, full = steps
    _use(full)
    theirs, _, _ = _run(False)
    _use(lean)
    ours, _, _ = _run(False)
    their_chats, our_chats = _chats(theirs), _chats(ours)
    assert len(our_chats) == len(their_chats) == 4
    for mine, pydantic in zip(our_chats, their_chats, strict=True):
        dropped = set(pydantic) - set(mine)
        assert dropped == set(LEFT_OUT_WITHOUT_CONTENT)
        assert mine == {k: v for k, v in pydantic.items() if k not in dropped}
    last = our_chats[-1]
    assert last["gen_ai.request.model"] == "scripted"
    assert last["gen_ai.provider.name"] == "function"
    assert (last["gen_ai.request.temperature"], last["gen_ai.request.max_tokens"]) == (0.25, 321)
    assert last["gen_ai.response.finish_reasons"] == ("stop",)
    assert last["gen_ai.response.id"] == "r-4"
    assert last["gen_ai.usage.input_tokens"] > 0 and last["gen_ai.usage.output_tokens"] > 0
    assert [s.name for s in ours] == [s.name for s in theirs]  # the same spans, in order


@pytest.mark.parametrize("rule", [True, False], ids=["co", "pydantic-ai"])
def test_co_records_no_metrics_but_every_request_span_keeps_its_tokens(rule: bool) -> None:
    """pydantic-ai fills token histograms after every request; Co records traces only, so
    a real meter under Co's settings gets nothing (pydantic-ai's own settings, beside it,
    show the meter works), while each request's span still says how many tokens it took."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings

    from co_core.telemetry.agent_spans import ContentRule

    reader = InMemoryMetricReader()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    kind = ContentRule if rule else InstrumentationSettings
    settings = kind(
        tracer_provider=provider,
        meter_provider=MeterProvider(metric_readers=[reader]),
        include_content=False,
    )
    model = FunctionModel(_script, model_name="scripted")
    agent = Agent(model, capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def find_colour(shade: str) -> str:
        """Find a colour by its shade."""
        return f"{shade} is #008080"

    @agent.tool_plain
    def wobbly(times: int) -> str:
        """Fails the first time."""
        if times == 1:
            raise ModelRetry("again, with times=2")
        return "steady"

    assert agent.run_sync("colours please").output == "done"
    requests = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    assert len(requests) == 4
    assert all((s.attributes or {}).get("gen_ai.usage.input_tokens", 0) > 0 for s in requests)
    data = reader.get_metrics_data()
    metrics = [
        metric.name
        for resource in (data.resource_metrics if data else [])
        for scope in resource.scope_metrics
        for metric in scope.metrics
    ]
    assert (metrics == []) is rule, metrics
