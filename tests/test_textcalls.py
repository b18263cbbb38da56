"""Recognising tool calls that small models write as text."""

from __future__ import annotations

import pytest

from co_core.agent.local.textcalls import parse_text_tool_calls

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
