"""Tokens and cost per turn and session, as the REPL shows them."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RunUsage

from co_core.agent.models import providers
from co_core.kernel.providers import ModelProvider
from co_core.telemetry.usage import (
    SessionUsage,
    TurnUsage,
    cost_text,
    format_usage_line,
    price,
    turn_usage,
)


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("clock", {})])
    return ModelResponse(parts=[TextPart("It is noon.")])


def provider(spec: str) -> ModelProvider:
    """The provider Co prices ``spec`` with (its ``register_models`` entry)."""
    return providers().find(spec)[0]


def turn_of(usage: Any, spec: str, **kwargs: Any) -> TurnUsage:
    return turn_usage(usage, spec, provider=provider(spec), **kwargs)


def test_a_real_run_on_a_local_model_costs_nothing() -> None:
    agent = Agent(FunctionModel(_script, model_name="scripted"))

    @agent.tool_plain
    def clock() -> str:
        """The time."""
        return "12:00"

    result = agent.run_sync("what time is it?")
    turn = turn_of(result.usage, "ollama:qwen3:4b")
    assert turn.requests == 2 and turn.tool_calls == 1
    assert turn.input_tokens == result.usage.input_tokens > 0
    line = format_usage_line(turn)
    assert line.startswith(f"{turn.input_tokens:,} in · {turn.output_tokens:,} out tokens")
    assert "2 requests · 1 tool call · free (local model)" in line


def test_known_price_from_the_price_table() -> None:
    turn = turn_of(RunUsage(input_tokens=1_000_000, requests=1), "openai:gpt-4o")
    assert turn.cost == Decimal("2.5")  # $2.50 per million input tokens
    assert format_usage_line(turn).endswith("1 request · $2.50")
    gemini = turn_of(
        RunUsage(input_tokens=2000, output_tokens=300, requests=1), "gemini:gemini-2.5-flash"
    )
    assert gemini.cost is not None and Decimal(0) < gemini.cost < Decimal("0.01")
    assert format_usage_line(gemini).endswith(f"${gemini.cost:.4f}")


def test_a_request_span_is_priced_from_the_attributes_co_writes() -> None:
    from pydantic_ai.usage import RequestUsage

    from co_core.telemetry.usage import remember_system, span_cost

    usage = RequestUsage(input_tokens=1_000_000, cache_read_tokens=1_000_000)
    attrs = {**usage.opentelemetry_attributes(), "gen_ai.response.model": "gpt-4o"}
    attrs["gen_ai.provider.name"] = "openai"
    remember_system("openai", provider("openai:gpt-4o"))
    # every input token read from the cache: charged at the cache price, not the full one
    assert span_cost(attrs) == 1.25
    del attrs["gen_ai.usage.cache_read.input_tokens"]
    assert span_cost(attrs) == 2.5


def test_unknown_price_is_said_plainly_not_guessed() -> None:
    turn = turn_of(
        RunUsage(input_tokens=10, output_tokens=5, requests=1), "openai:no-such-model-xyz"
    )
    assert turn.cost is None and not turn.local
    assert "cost unknown (no price known for no-such-model-xyz)" in format_usage_line(turn)
    remote = price(
        RunUsage(input_tokens=10),
        "openai-compatible:llama3",
        provider=provider("openai-compatible:llama3"),
        base_url="https://gpu.example.com/v1",
    )
    assert remote.cost is None and remote.reason == "no price known for llama3"


def test_servers_on_this_machine_are_local() -> None:
    for url in ("http://localhost:8080/v1", "http://127.0.0.1:1234", "http://[::1]:8000/v1"):
        found = price(
            RunUsage(input_tokens=10),
            "openai-compatible:qwen",
            provider=provider("openai-compatible:qwen"),
            base_url=url,
        )
        assert found.local and found.cost == 0
    assert price(RunUsage(input_tokens=10), "local", provider=provider("local")).local
    assert price(RunUsage(input_tokens=10), "local:smollm2", provider=provider("local")).local


def test_a_provider_of_our_own_prices_its_models() -> None:
    """A plugin's provider: free, or its own price, and nothing else in Co decides it."""
    from decimal import Decimal

    from co_core.kernel.providers import ModelProvider

    flat = ModelProvider("flatrate", lambda request: None, price=lambda usage, name: Decimal("0.5"))
    assert price(RunUsage(input_tokens=10), "flatrate:big", provider=flat).cost == Decimal("0.5")
    home = ModelProvider("homelab", lambda request: None, free=True)
    assert price(RunUsage(input_tokens=10), "homelab:big", provider=home).local


def test_session_totals_line_and_cost_text() -> None:
    session = SessionUsage()
    session.add(turn_of(RunUsage(input_tokens=1_000_000, requests=1), "openai:gpt-4o"))
    line = format_usage_line(
        session.add(
            turn_of(RunUsage(input_tokens=500, output_tokens=20, requests=1), "openai:mystery-1")
        ),
        session,
    )
    assert "cost unknown" in line
    assert "(session: 1,000,520 tokens, $2.50 + 1 unpriced turn)" in line
    text = cost_text(session)
    assert "2 turns, 2 model requests, 0 tool calls" in text
    assert "Cost: $2.50, plus 1 turn whose price is unknown." in text
    assert "openai:mystery-1: 520 tokens, cost unknown" in text


def test_session_usage_survives_storage_as_json() -> None:
    session = SessionUsage()
    session.add(turn_of(RunUsage(input_tokens=1234, output_tokens=56, requests=2), "openai:gpt-4o"))
    session.add(turn_of(RunUsage(input_tokens=10, requests=1), "ollama:qwen3:4b"))
    stored = json.loads(json.dumps(session.as_dict()))
    back = SessionUsage.from_dict(stored)
    assert back.as_dict() == session.as_dict()
    assert back.cost == session.cost > 0 and back.total_tokens == 1300


def test_empty_and_all_local_sessions() -> None:
    assert cost_text(SessionUsage()) == "No turns yet in this session: nothing spent."
    local = SessionUsage(
        [TurnUsage(model="local", input_tokens=5, requests=1, cost=Decimal(0), local=True)]
    )
    assert "Cost: $0 (local model)." in cost_text(local)
