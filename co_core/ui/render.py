"""How a tool call and its result look in the terminal: the call, the result's first lines."""

from __future__ import annotations

import json
import re
from typing import Any

from co_core.kernel.results import ToolResult

# C0 controls but tab and newline, DEL, C1 controls: what a terminal acts on instead of showing
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_OR_NEWLINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def visible(text: object, *, one_line: bool = False) -> str:
    """Control characters written out (``\\x1b``, ``\\r``; newlines too if ``one_line``),
    so text from a tool, a model or a file cannot clear the screen, move the cursor or
    hide part of a line it is shown on."""
    text = str(text)
    pattern = _CONTROL_OR_NEWLINE if one_line else _CONTROL
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda m: repr(m.group())[1:-1], text)


def _short(value: Any, width: int) -> str:
    kind = type(value)
    if kind is int or kind is float:
        text = repr(value)  # as JSON writes it, without the encoder's cost
        return text if len(text) <= width else text[: width - 1] + "…"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
    if status in ("interrupted", "not set up", "stopped"):
        return status  # Co's own answer, or the turn's one line, says why
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
