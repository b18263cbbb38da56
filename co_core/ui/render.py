"""How a tool call and its result look in the terminal: the call, the result's first lines."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from co_core.kernel.results import ToolResult
from co_core.kernel.visible import on_screen

if TYPE_CHECKING:
    from co_core.agent.calls import ToolCallRecord


def visible(text: object, *, one_line: bool = False) -> str:
    """The one way text from a model, a tool, a file or an MCP server reaches the terminal:
    control, bidi and zero-width characters written out (``\\x1b``, ``\\u202e``;
    newlines too if ``one_line``) and look-alike letters in mixed-script names marked
    (``co_core.kernel.visible``), so such text cannot clear the screen, move the cursor,
    reorder or hide part of a line, or pass for a name it is not."""
    return on_screen(text, one_line=one_line)


def _short(value: Any, width: int) -> str:
    kind = type(value)
    if kind is int or kind is float:
        text = repr(value)  # as JSON writes it, without the encoder's cost
        return text if len(text) <= width else text[: width - 1] + "…"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = visible(text, one_line=True)  # a newline shows as \n: the line is what runs
    return text if len(text) <= width else text[: width - 1] + "…"


def shown_args(record: ToolCallRecord) -> dict[str, Any]:
    """The arguments a call's line shows: those the model wrote, with the values the call
    runs with (resolved: what the approval shows), not the defaults filled in."""
    args = dict(record.call.args)
    if not record.written:
        return args
    return {name: args[name] for name in record.written if name in args}


def call_line(tool: str, args: dict[str, Any], width: int = 60) -> str:
    """``lookup(query='red')`` with long values cut short."""
    shown = ", ".join(f"{k}={_short(v, 40)!s}" for k, v in args.items())
    return f"{tool}({_short(shown, width)})"


def result_line(content: Any, status: str = "ok", width: int = 80) -> str:
    """The first line of a result (a ToolResult shows its count and first display line)."""
    if isinstance(content, ToolResult):
        first = content.display.strip().splitlines()[0] if content.display.strip() else ""
        more = ", more available" if content.has_more else ""
        count = f"{content.count} found{more}: " if content.count is not None else ""
        text = count + first
    elif isinstance(content, dict) and "display" in content:
        text = str(content["display"]).strip().splitlines()[0] if content["display"] else ""
    elif isinstance(content, str):
        text = content
    else:
        text = json.dumps(content, default=str)
    text = _short(text, width)
    if status in ("retry", "error"):
        return f"error: {text}"
    if status == "denied":
        return f"denied: {text}"
    if status == "timed out":
        return f"timed out: {text}"
    if status == "interrupted":
        return "interrupted"
    return text


def output_text(content: Any) -> str:
    """The text of a tool's result as the user should see it: a ``ToolResult``'s (or a
    dict's) ``display``, a string as it is, anything else as JSON."""
    display = getattr(content, "display", None)
    if isinstance(display, str):
        return display
    if isinstance(content, dict) and isinstance(content.get("display"), str):
        return str(content["display"])
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, default=str, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return str(content)


RESULT_LINES = 12  # lines of a tool's output shown under its call; /output shows the rest
MORE = "… {n} more line{s} (/output shows them all)"


def result_lines(content: Any, status: str = "ok", limit: int = RESULT_LINES) -> list[str]:
    """A call's result as the user sees it under the call: its first line (a list's count
    before it, ``error:`` for a failure), then the output's next lines as they are, up to
    ``limit`` lines in all, then how many more there are. Denials stay one line."""
    if status not in ("ok", "retry", "error"):
        return [result_line(content, status)]
    lines = output_text(content).strip().splitlines() or [""]
    prefix = "error: " if status in ("retry", "error") else ""
    if isinstance(content, ToolResult) and content.count is not None:
        more = ", more available" if content.has_more else ""
        prefix += f"{content.count} found{more}: "
    lines[0] = prefix + lines[0]
    shown = [visible(line.expandtabs()) for line in lines[:limit]]
    rest = len(lines) - len(shown)
    if rest > 0:
        shown.append(MORE.format(n=rest, s="" if rest == 1 else "s"))
    return shown
