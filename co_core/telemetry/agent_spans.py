"""Spans for an agent's runs, model requests and tool calls: pydantic-ai's own instrumentation,
held to Co's rules.

pydantic-ai's ``Instrumentation`` capability writes the spans as OpenTelemetry's GenAI
conventions have them: ``invoke_agent co`` per run, ``chat <model>`` (kind CLIENT) per
request with what the server answered (``gen_ai.response.id``, ``finish_reasons``,
``server.address``/``port``, usage), ``execute_tool <tool>`` per call. Co keeps it rather
than a copy of its own, and changes three things through its public settings:

- content only when the user opted in; without it a request's span carries no messages at
  all, not even their shape, which would repeat the whole history on every request;
- the run's span carries the run's token totals as ``gen_ai.usage.*`` (the conventions'
  names for an ``invoke_agent`` span), not pydantic-ai's ``gen_ai.aggregated_usage.*``;
- the request's parameters (every tool's schema again) are left out;
- without content, a request's span does not prepare the request a second time (the
  model prepares it to send it anyway) nor serialise every tool's definition into it:
  :func:`lean_request_attributes` (pydantic-ai has no setting for either);
- no metrics: Co records traces, so pydantic-ai's token and cost histograms (recorded
  into a no-op meter) are not built at all (:meth:`ContentRule.record_metrics`).

Co's own spans (policy, approval, plugin, sandbox, MCP) nest under these. A plugin's own
agent gets the same spans from ``co_core.telemetry.capabilities()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry.metrics import NoOpMeterProvider
from pydantic_ai import _instrumentation
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.settings import merge_model_settings

# What pydantic-ai puts on a request's span and Co, without content, does not: the tools'
# definitions (never exported without content: ``setup.WITH_CONTENT_ONLY``) and Logfire's
# display hint for them (``logfire.json_schema``, with nothing left to describe).
LEFT_OUT_WITHOUT_CONTENT = ("gen_ai.tool.definitions", "logfire.json_schema")


class ContentRule(InstrumentationSettings):
    """pydantic-ai's instrumentation settings, recording messages only with content on."""

    def handle_messages(self, *args: Any, **kwargs: Any) -> None:
        """The request's messages and the answer, as span attributes: content only."""
        if self.include_content:
            super().handle_messages(*args, **kwargs)

    def record_metrics(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: Co gives pydantic-ai a no-op meter (traces, not metrics), so the token,
        cost and first-chunk histograms it would fill after every request record nothing;
        the same figures are on the request's span (``gen_ai.usage.*``)."""

    def messages_to_otel_messages(self, messages: list[Any], **kwargs: Any) -> list[Any]:
        """The run's messages (``pydantic_ai.all_messages``): content only."""
        if not self.include_content:
            return []
        return super().messages_to_otel_messages(messages, **kwargs)


Prepare = Callable[[InstrumentationSettings, Any], tuple[Any, dict[str, Any]]]


def lean_request_attributes(full: Prepare) -> Prepare:
    """pydantic-ai's request-span attributes, for Co's settings without content, made
    without its extra work: the same model, provider, server and ``gen_ai.request.*``
    settings, but from the request as it is (the model prepares it once, to send it) and
    without ``LEFT_OUT_WITHOUT_CONTENT``. Any other settings (content on, another agent's
    instrumentation) get pydantic-ai's own attributes."""

    def attributes(settings: InstrumentationSettings, request: Any) -> tuple[Any, dict[str, Any]]:
        if not isinstance(settings, ContentRule) or settings.include_content:
            return full(settings, request)
        model = request.model
        found: dict[str, Any] = _instrumentation.model_attributes(model)
        merged = merge_model_settings(model.settings, request.model_settings)
        found.update(_instrumentation.model_settings_attributes(merged))
        return request, found

    attributes.full = full  # type: ignore[attr-defined]
    return attributes


_held: list[Prepare] = []  # the step replaced, once per process


def _hold_request_spans() -> None:
    """Put :func:`lean_request_attributes` where pydantic-ai's request span asks for its
    attributes (once; a pydantic-ai without that step keeps its own, only slower)."""
    current = getattr(_instrumentation, "_prepare_model_request_span_context", None)
    if current is not None and not _held:
        _held.append(current)
        lean = lean_request_attributes(current)
        _instrumentation._prepare_model_request_span_context = lean  # type: ignore[assignment]


def instrumentation(tracer_provider: Any, content: bool) -> Instrumentation:
    """The capability tracing an agent into ``tracer_provider``; ``content`` as the user chose."""
    settings = ContentRule(
        tracer_provider=tracer_provider,
        meter_provider=NoOpMeterProvider(),  # Co records traces, not metrics
        include_content=content,
        include_binary_content=False,  # images and files stay out of traces even with content
        include_model_request_parameters=False,
        use_aggregated_usage_attribute_names=False,
    )
    _hold_request_spans()
    return Instrumentation(settings=settings)
