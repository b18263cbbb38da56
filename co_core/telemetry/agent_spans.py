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
- the request's parameters (every tool's schema again) are left out.

Co's own spans (policy, approval, plugin, sandbox, MCP) nest under these. A plugin's own
agent gets the same spans from ``co_core.telemetry.capabilities()``.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.metrics import NoOpMeterProvider
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings


class ContentRule(InstrumentationSettings):
    """pydantic-ai's instrumentation settings, recording messages only with content on."""

    def handle_messages(self, *args: Any, **kwargs: Any) -> None:
        """The request's messages and the answer, as span attributes: content only."""
        if self.include_content:
            super().handle_messages(*args, **kwargs)

    def messages_to_otel_messages(self, messages: list[Any], **kwargs: Any) -> list[Any]:
        """The run's messages (``pydantic_ai.all_messages``): content only."""
        if not self.include_content:
            return []
        return super().messages_to_otel_messages(messages, **kwargs)


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
    return Instrumentation(settings=settings)
