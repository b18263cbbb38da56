"""Recognising tool calls that small models write as text."""

from __future__ import annotations

import pytest

from co_core.gate import decide
from co_core.textcalls import parse_text_tool_calls
from co_core.tools import ToolCall

KNOWN = {"lookup", "add_numbers"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"name": "lookup", "arguments": {"query": "x"}}', [("lookup", {"query": "x"})]),
        (
            '  {"name": "add_numbers", "arguments": "{\\"a\\": 1, \\"b\\": 2}"}',
            [("add_numbers", {"a": 1, "b": 2})],
        ),
        (
            '```json\n{"name": "lookup", "parameters": {"query": "x"}}\n```',
            [("lookup", {"query": "x"})],
        ),
        ('<tool_call>{"name": "lookup", "arguments": {}}</tool_call>', [("lookup", {})]),
        (
            '<tool_call>{"name": "lookup", "arguments": {"query": "a"}}</tool_call>\n'
            '<tool_call>{"name": "add_numbers", "arguments": {"a": 1, "b": 1}}</tool_call>',
            [("lookup", {"query": "a"}), ("add_numbers", {"a": 1, "b": 1})],
        ),
        (
            '{"type": "function", "function": {"name": "lookup", "arguments": {"query": "q"}}}',
            [("lookup", {"query": "q"})],
        ),
    ],
)
def test_shapes_small_models_use(text: str, expected: list) -> None:
    assert parse_text_tool_calls(text, KNOWN) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Here is the answer: 42",
        '{"name": "rm", "arguments": {}}',  # not a tool
        '{"name": "lookup", "arguments": {"query": "x"}, "note": "other JSON"}',
        'The call {"name": "lookup", "arguments": {}} is inside prose',
        '{"name": "lookup", "arguments": [1, 2]}',
        "<tool_call>not json</tool_call>",
        "",
    ],
)
def test_ordinary_text_stays_text(text: str) -> None:
    assert parse_text_tool_calls(text, KNOWN) == []


def test_default_gate_allows_reads_and_asks_for_the_rest() -> None:
    def call(risk: str | None) -> ToolCall:
        return ToolCall("t", "p", {}, "p:t", risk)  # type: ignore[arg-type]

    assert decide(call("read")).effect == "allow"
    for risk in ("write", "send", "exec", None):
        assert decide(call(risk)).effect == "ask"
    assert decide(call("exec"), yolo=True).effect == "allow"
