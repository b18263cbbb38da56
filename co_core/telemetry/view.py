"""``co traces``: the last turns read back from the trace database as trees."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_core.telemetry import store


@dataclass
class Node:
    row: dict[str, Any]
    attrs: dict[str, Any]
    children: list[Node] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.row.get("name") or "?")

    @property
    def error(self) -> bool:
        return self.row.get("status") == "ERROR"


def _attrs(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def last_turns(path: Path, n: int) -> list[Node]:
    """The last ``n`` turns (root spans), oldest first, each with its span tree."""
    conn = store.connect(path, readonly=True)
    try:
        roots = conn.execute(
            "SELECT * FROM spans WHERE parent_id IS NULL "
            "AND name NOT IN ('co.startup', 'co.mcp.start') "
            "ORDER BY start_time DESC LIMIT ?",
            (n,),
        ).fetchall()
        turns = []
        for root in reversed(roots):
            rows = conn.execute(
                "SELECT * FROM spans WHERE trace_id = ? ORDER BY start_time", (root["trace_id"],)
            ).fetchall()
            turns.append(_tree(dict(root), [dict(r) for r in rows]))
        return turns
    finally:
        conn.close()


def _tree(root: dict[str, Any], rows: list[dict[str, Any]]) -> Node:
    nodes = {r["id"]: Node(r, _attrs(r.get("attributes"))) for r in rows}
    _settled(nodes.values())
    top = nodes.get(root["id"]) or Node(root, _attrs(root.get("attributes")))
    nodes[root["id"]] = top
    for span_id, node in nodes.items():
        if span_id == root["id"]:
            continue
        parent = nodes.get(node.row.get("parent_id")) or top  # orphans hang under the turn
        parent.children.append(node)
    return top


APPROVAL = ("co.approval.answer", "co.approval.by", "co.approval.reason")


def _settled(nodes: Any) -> None:
    """A held call's span learns how it was settled (its ``co.approval`` span's answer)."""
    approvals = {
        n.attrs.get("gen_ai.tool.call.id"): n.attrs for n in nodes if n.name == "co.approval"
    }
    for node in nodes:
        call = node.attrs.get("gen_ai.tool.call.id")
        found = approvals.get(call) if node.name != "co.approval" else None
        if found is not None and "co.call.status" not in node.attrs:
            node.attrs.update({k: found[k] for k in APPROVAL if k in found})


def tokens(node: Node) -> tuple[int, int]:
    """Tokens in and out of the model requests in this span and under it (a run's span
    has its totals too: counting only the requests counts each token once)."""
    a = node.attrs
    own = (0, 0)
    if a.get("gen_ai.operation.name") in ("chat", None):
        own = (
            int(a.get("gen_ai.usage.input_tokens") or 0),
            int(a.get("gen_ai.usage.output_tokens") or 0),
        )
    below = [tokens(c) for c in node.children]
    return own[0] + sum(b[0] for b in below), own[1] + sum(b[1] for b in below)


def cost(node: Node) -> float | None:
    own = node.attrs.get("co.cost_usd")
    costs = [c for c in (cost(ch) for ch in node.children) if c is not None]
    if own is None and not costs:
        return None
    return float(own or 0) + sum(costs)


def duration(ms: Any) -> str:
    if ms is None:
        return "?"
    ms = float(ms)
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def problem(node: Node) -> str:
    """What went wrong: the status message, else the recorded exception's message or type."""
    if node.row.get("status_message"):
        return str(node.row["status_message"])
    try:
        events = json.loads(node.row.get("events") or "[]")
    except ValueError:
        events = []
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and event.get("name") == "exception":
            attrs = event.get("attributes") or {}
            found = attrs.get("exception.message") or attrs.get("exception.type")
            if found:
                return (
                    str(found).rpartition(".")[2]
                    if found == attrs.get("exception.type") and not attrs.get("exception.message")
                    else str(found)
                )
    return "failed"


def label(node: Node, root: bool = False) -> str:
    """One line of text for a span (plain; the CLI adds colour)."""
    parts = [node.name, duration(node.row.get("duration_ms"))]
    op = node.attrs.get("gen_ai.operation.name")
    if root:
        parts.insert(0, str(node.row.get("start_time") or "")[:19].replace("T", " "))
    if op == "chat" or root:
        inp, out = tokens(node)
        if inp or out:
            parts.append(f"{inp:,} in / {out:,} out tokens")
    if root:
        spent = cost(node)
        if spent is not None:
            parts.append("free (local model)" if spent == 0 else f"${spent:.4f}")
        session = node.attrs.get("co.session_id")
        if session:
            parts.append(f"session {session}")
    effect = node.attrs.get("co.policy.effect")
    if op == "execute_tool" or node.error:
        parts.append(outcome(node, op == "execute_tool"))
    if effect:  # the policy decision, recorded on the tool call's span (or its own)
        source = node.attrs.get("co.policy.source")
        parts.append(f"policy: {effect}" + (f" ({source})" if source else ""))
    answer = node.attrs.get("co.approval.answer")
    if (answer and op == "execute_tool") or node.name == "co.approval":
        parts.append(approval(node.attrs))
    return "  ".join(parts)


def outcome(node: Node, tool: bool) -> str:
    """How a tool call's span ended: ok, retry, error, timed out; or, for a call held for
    approval, how it was settled (denied, approved: its run is a span of its own)."""
    status = node.attrs.get("co.call.status")
    if node.error:
        retry = node.attrs.get("pydantic_ai.tool.retry.cause") == "model_retry"
        kind = status if status in ("retry", "error", "timed out") else None
        return f"{kind or ('retry' if retry else 'error')}: {problem(node)}"
    if status:
        return str(status)
    effect = node.attrs.get("co.policy.effect")
    if tool and effect in _NOT_RUN:
        answer = node.attrs.get("co.approval.answer")
        if effect == "deny" or answer == "no":
            return "denied"
        if answer:
            return "approved"
        return _NOT_RUN[effect]  # the tool did not run under this span
    return "ok"


def approval(attrs: dict[str, Any]) -> str:
    """``answer: yes session (user)``, ``answer: no (policy): reason``."""
    text = f"answer: {attrs.get('co.approval.answer', '?')}"
    if attrs.get("co.approval.by"):
        text += f" ({attrs['co.approval.by']})"
    if attrs.get("co.approval.reason"):
        text += f": {attrs['co.approval.reason']}"
    return text


# A call the policy did not allow ends its span without running; an approved call runs
# again under a span of its own. (Until it is settled, and in traces from before Co
# recorded how held calls were settled.)
_NOT_RUN = {"deny": "denied", "ask": "held for approval", "ask_once": "held for approval"}


def database_missing(path: Path) -> bool:
    if not path.exists():
        return True
    try:
        conn = store.connect(path, readonly=True)
    except sqlite3.Error:
        return True
    try:
        return not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'spans'").fetchone()
    finally:
        conn.close()
