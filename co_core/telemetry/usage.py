"""Tokens and cost of turns and sessions, for the line after each turn and ``/cost``.

Tokens come from pydantic-ai's ``RunUsage``; prices from the model's provider
(``register_models``' ``price``, or ``free``; co_core.kernel.providers): Co's own
providers price from ``genai-prices``, a maintained price table. Any server on this
machine costs nothing. When no price is known we say so rather than guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import urlparse

from co_core.kernel.providers import ModelProvider

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal"})


@dataclass(frozen=True)
class Price:
    """A cost in US dollars, or ``None`` with the reason it is unknown."""

    cost: Decimal | None
    local: bool = False
    reason: str = ""


def is_local_url(url: str | None) -> bool:
    if not url:
        return False
    host = (urlparse(url if "//" in url else f"//{url}").hostname or "").lower()
    return host in _LOCAL_HOSTS or host.endswith(".localhost")


_BY_SYSTEM: dict[str, ModelProvider] = {}  # a model's ``system`` -> its provider


def remember_system(system: str | None, provider: ModelProvider | None) -> None:
    """The provider of the models that report ``system`` in their spans (pydantic-ai's
    ``gen_ai.provider.name``), so a trace's requests are priced by it."""
    if system and provider is not None:
        _BY_SYSTEM[system] = provider


def price(
    usage: Any,
    model: str | None,
    *,
    provider: ModelProvider | None = None,
    base_url: str | None = None,
) -> Price:
    """What ``usage`` (a RunUsage, RequestUsage or genai_prices Usage) cost on ``model``
    (``prefix:name``), as its ``provider`` prices it."""
    if is_local_url(base_url):
        return Price(Decimal(0), local=True)
    name = (model or "").partition(":")[2] if ":" in (model or "") else (model or "")
    if provider is None:
        return Price(None, reason=f"no price known for {name or 'this model'}")
    if provider.free:
        return Price(Decimal(0), local=True)
    if not name:
        return Price(None, reason="no model named")
    cost, reason = provider.cost(usage, name)
    return Price(cost, reason=reason)


def span_cost(attrs: Mapping[str, Any]) -> float | None:
    """Cost of one model-request span from its gen_ai.* attributes (None: not a request or unknown)."""
    inp = attrs.get("gen_ai.usage.input_tokens")
    out = attrs.get("gen_ai.usage.output_tokens")
    if inp is None and out is None:
        return None
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    system = attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system")
    server = attrs.get("server.address")
    provider = _BY_SYSTEM.get(str(system)) if system else None
    if is_local_url(server) or (provider is not None and provider.free):
        return 0.0  # every request of a local model: no price table needed
    from genai_prices import Usage

    usage = Usage(
        input_tokens=int(inp or 0),
        output_tokens=int(out or 0),
        cache_read_tokens=int(
            attrs.get("gen_ai.usage.cache_read.input_tokens")
            or attrs.get("gen_ai.usage.cache_read_tokens")  # traces written before Co's own spans
            or 0
        )
        or None,
    )
    found = price(usage, f"{system}:{model}" if model else None, provider=provider, base_url=server)
    return None if found.cost is None else float(found.cost)


@dataclass
class TurnUsage:
    """Tokens, requests, tool calls and cost of one turn."""

    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0
    cost: Decimal | None = None
    local: bool = False
    note: str = ""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "cost_usd": None if self.cost is None else str(self.cost),
            "local": self.local,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnUsage:
        cost = data.get("cost_usd")
        return cls(
            model=data.get("model"),
            input_tokens=int(data.get("input_tokens") or 0),
            output_tokens=int(data.get("output_tokens") or 0),
            cache_read_tokens=int(data.get("cache_read_tokens") or 0),
            requests=int(data.get("requests") or 0),
            tool_calls=int(data.get("tool_calls") or 0),
            cost=None if cost is None else Decimal(str(cost)),
            local=bool(data.get("local")),
            note=str(data.get("note") or ""),
        )


def turn_usage(
    usage: Any,
    model: str | None,
    *,
    provider: ModelProvider | None = None,
    base_url: str | None = None,
) -> TurnUsage:
    """A turn's usage from ``result.usage`` (pydantic-ai ``RunUsage``), Co's model string
    and its provider."""
    found = price(usage, model, provider=provider, base_url=base_url)
    return TurnUsage(
        model=model,
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(usage, "cache_read_tokens", 0) or 0),
        requests=int(getattr(usage, "requests", 0) or 0),
        tool_calls=int(getattr(usage, "tool_calls", 0) or 0),
        cost=found.cost,
        local=found.local,
        note=found.reason,
    )


@dataclass
class SessionUsage:
    """Running totals of a session; ``as_dict()`` is what the session store keeps."""

    turns: list[TurnUsage] = field(default_factory=list)

    def add(self, turn: TurnUsage) -> TurnUsage:
        self.turns.append(turn)
        return turn

    @property
    def input_tokens(self) -> int:
        return sum(t.input_tokens for t in self.turns)

    @property
    def output_tokens(self) -> int:
        return sum(t.output_tokens for t in self.turns)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def requests(self) -> int:
        return sum(t.requests for t in self.turns)

    @property
    def tool_calls(self) -> int:
        return sum(t.tool_calls for t in self.turns)

    @property
    def cost(self) -> Decimal:
        """Sum of the known costs (see ``unpriced`` for turns without a price)."""
        return sum((t.cost for t in self.turns if t.cost is not None), Decimal(0))

    @property
    def unpriced(self) -> int:
        return sum(1 for t in self.turns if t.cost is None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "turns": len(self.turns),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "requests": self.requests,
            "tool_calls": self.tool_calls,
            "cost_usd": str(self.cost),
            "unpriced_turns": self.unpriced,
            "per_turn": [t.as_dict() for t in self.turns],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> SessionUsage:
        return cls([TurnUsage.from_dict(t) for t in (data or {}).get("per_turn", [])])


def money(cost: Decimal) -> str:
    if cost == 0:
        return "$0"
    if cost < Decimal("0.01"):
        return f"${cost:.4f}"
    return f"${cost:.2f}"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _cost_words(turn: TurnUsage) -> str:
    if turn.local:
        return "free (local model)"
    if turn.cost is None:
        return f"cost unknown ({turn.note or 'no price known'})"
    return money(turn.cost)


def format_usage_line(turn: TurnUsage, session: SessionUsage | None = None) -> str:
    """The dim line after a turn, e.g. ``1,204 in · 87 out tokens · 2 requests · $0.0009``."""
    parts = [
        f"{turn.input_tokens:,} in · {turn.output_tokens:,} out tokens",
        _count(turn.requests, "request"),
    ]
    if turn.tool_calls:
        parts.append(_count(turn.tool_calls, "tool call"))
    parts.append(_cost_words(turn))
    line = " · ".join(parts)
    if session is not None and len(session.turns) > 1:
        total = f"session: {session.total_tokens:,} tokens"
        if not all(t.local for t in session.turns):
            total += f", {money(session.cost)}"
            if session.unpriced:
                total += f" + {_count(session.unpriced, 'unpriced turn')}"
        line += f" ({total})"
    return line


def cost_text(session: SessionUsage) -> str:
    """What ``/cost`` prints: session totals, then one line per model."""
    if not session.turns:
        return "No turns yet in this session: nothing spent."
    lines = [
        f"This session: {_count(len(session.turns), 'turn')}, {_count(session.requests, 'model request')}, "
        f"{_count(session.tool_calls, 'tool call')}.",
        f"Tokens: {session.input_tokens:,} in, {session.output_tokens:,} out "
        f"({session.total_tokens:,} total).",
    ]
    if all(t.local for t in session.turns):
        lines.append("Cost: $0 (local model).")
    else:
        cost = f"Cost: {money(session.cost)}"
        if session.unpriced:
            cost += f", plus {_count(session.unpriced, 'turn')} whose price is unknown"
        lines.append(cost + ".")
    by_model: dict[str, list[TurnUsage]] = {}
    for turn in session.turns:
        by_model.setdefault(turn.model or "(unknown model)", []).append(turn)
    if len(by_model) > 1 or session.unpriced:
        for model, turns in by_model.items():
            part = SessionUsage(turns)
            if all(t.local for t in turns):
                spent = "free (local model)"
            elif part.unpriced == len(turns):
                spent = f"cost unknown ({turns[-1].note or 'no price known'})"
            else:
                spent = money(part.cost)
            lines.append(f"  {model}: {part.total_tokens:,} tokens, {spent}")
    return "\n".join(lines)
