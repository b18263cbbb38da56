"""What the approval prompt of ``co chat`` shows and how it reads the answer (no I/O here).

The REPL prints :func:`describe` for each call needing approval: the tool, its plugin,
every argument *whole* (a yes approves exactly what was shown, so nothing is folded
away), the permission key and why Co asks. A description taller than the terminal is
shown in pages (:func:`pages`): Enter shows the next one, and the question comes only
after the last. When one model response holds several such calls, a short list comes
first (:func:`batch_lines`). The typed answer becomes an
:class:`~co_core.agent.frontend.Answer` (:func:`parse_answer`, :func:`parse_page_answer`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from co_core.agent.frontend import Answer
from co_core.ui.render import visible

if TYPE_CHECKING:
    from co_core.agent.calls import ToolCallRecord
    from co_core.policy.engine import Scope

QUESTION = "Allow? [y]es once · [s]ession · [a]lways in this project · [n]o (or type a reason) "
REASON_QUESTION = "Reason for Co (optional, Enter to skip): "
GUTTER = "    │ "  # marks the lines of a multi-line value, so they cannot pose as the prompt's
SHORT = 100
YES: dict[str, Scope] = {"y": "once", "yes": "once", "s": "session", "session": "session"}
YES |= {"a": "project", "always": "project", "p": "project", "project": "project"}
NO = {"n", "no"}


def shown(text: str) -> str:
    """Text as the prompt prints it: control characters and invisible formatting
    characters written out (``\\x1b``, ``\\u202e``), so none can hide or reorder text."""
    return visible(text)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def argument_lines(name: str, value: Any) -> list[str]:
    """One argument, whole: inline when it is one line, else under a gutter with its size."""
    text = shown(_value(value))
    if "\n" not in text:
        return [f"  {name}: {text}"]
    rows = text.split("\n")
    size = f"({len(rows)} lines, {len(_value(value))} characters)"
    return [f"  {name}: {size}", *(GUTTER + row for row in rows)]


def describe(record: ToolCallRecord) -> list[str]:
    """The lines shown above the question for one call: everything, nothing folded."""
    call, decision = record.call, record.decision
    lines = [shown(f"{call.tool}  (plugin {call.plugin}, risk {call.risk or 'undeclared'})")]
    for name, value in call.args.items():
        lines += argument_lines(name, value)
    if not call.args:
        lines.append("  (no arguments)")
    lines += argument_lines("permission", call.permission_key)
    if decision is not None:
        source = f" [{decision.source}]" if decision.source else ""
        lines += argument_lines("why", f"{decision.reason}{source}")
    return lines


def rows(line: str, width: int) -> list[str]:
    """``line`` cut into the rows a terminal ``width`` cells wide shows it in."""
    from prompt_toolkit.utils import get_cwidth

    out: list[str] = []
    row, used = "", 0
    for ch in line:
        cells = get_cwidth(ch)
        if used + cells > width and row:
            out.append(row)
            row, used = "", 0
        row += ch
        used += cells
    out.append(row)
    return out


def pages(lines: Sequence[str], width: int, height: int) -> list[list[str]]:
    """The description in pages of at most ``height`` terminal rows (a long line spans
    rows, and may span pages). Nothing is left out: the pages hold every row."""
    width, height = max(width, 20), max(height, 3)
    cut = [row for line in lines for row in rows(line, width)]
    return [cut[start : start + height] for start in range(0, len(cut), height)] or [[]]


def page_question(number: int, total: int) -> str:
    return f"── page {number} of {total} · Enter: next page · n: no (or type a reason) ── "


def parse_page_answer(text: str) -> Answer | None:
    """An answer typed between pages: None to read on (Enter, or a yes: a yes is taken
    only after the last page), else a "no" whose text, if any, is the reason."""
    answer = text.strip()
    if not answer or answer.lower() in YES:
        return None
    if answer.lower() in NO:
        return Answer(False, "")
    return Answer(False, answer)


def batch_lines(pending: Sequence[ToolCallRecord]) -> list[str]:
    """The short list shown first when several calls of one response await approval
    (each is then shown whole when it is asked about)."""
    lines = [f"{len(pending)} calls need your approval; you will be asked one by one:"]
    for index, record in enumerate(pending, 1):
        key = shown(record.call.permission_key).replace("\n", " ")
        key = key if len(key) <= SHORT else key[: SHORT - 1] + "…"
        lines.append(f"  {index}. {record.tool}: {key}")
    return [visible(line) for line in lines]


def parse_answer(text: str) -> Answer | None:
    """The typed answer; None for a plain "no" (the REPL then asks for a reason).

    Anything that is not a known answer is a "no" whose text is the reason, so a user
    can type why straight away ("not that file, the other one").
    """
    answer = text.strip()
    if answer.lower() in YES:
        return Answer(True, "", YES[answer.lower()])
    if not answer or answer.lower() in NO:
        return None
    return Answer(False, answer)
