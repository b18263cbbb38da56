"""What the approval prompt of ``co chat`` shows and how it reads the answer (no I/O here).

The REPL prints :func:`describe` for each call needing approval (tool, plugin, every
argument with long values folded, the permission key and why Co asks), a short list
first when one model response holds several such calls (:func:`batch_lines`), and
turns the typed answer into an :class:`~co_core.agent.frontend.Answer` with :func:`parse_answer`.
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
FOLD_CHARS = 400
FOLD_LINES = 12
YES: dict[str, Scope] = {"y": "once", "yes": "once", "s": "session", "session": "session"}
YES |= {"a": "project", "always": "project", "p": "project", "project": "project"}
NO = {"", "n", "no"}


def fold(value: Any, chars: int = FOLD_CHARS, lines: int = FOLD_LINES) -> str:
    """A value as text; a long one keeps its head and says how much is folded away.

    Control characters are written out first, so a carriage return cannot pose as a line
    break (or hide what comes before it) and only real newlines fold."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = visible(text)
    kept = text.split("\n")[:lines]
    head = "\n".join(kept)[:chars]
    if head == text:
        return text
    hidden_lines = text.count("\n") - head.count("\n")
    return f"{head}… [folded: {len(text) - len(head)} more characters, {hidden_lines} more lines]"


def describe(record: ToolCallRecord) -> list[str]:
    """The lines shown above the question for one call."""
    call, decision = record.call, record.decision
    lines = [f"{call.tool}  (plugin {call.plugin}, risk {call.risk or 'undeclared'})"]
    for name, value in call.args.items():
        shown = fold(value).replace("\n", "\n      ")
        lines.append(f"  {name}: {shown}")
    if not call.args:
        lines.append("  (no arguments)")
    lines.append(f"  permission: {call.permission_key}")
    if decision is not None:
        source = f" [{decision.source}]" if decision.source else ""
        lines.append(f"  why: {decision.reason}{source}")
    return [visible(line) for line in lines]  # what is approved is exactly what is shown


def batch_lines(pending: Sequence[ToolCallRecord]) -> list[str]:
    """The short list shown first when several calls of one response await approval."""
    lines = [f"{len(pending)} calls need your approval; you will be asked one by one:"]
    for index, record in enumerate(pending, 1):
        lines.append(f"  {index}. {record.tool}: {fold(record.call.permission_key, 100, 1)}")
    return [visible(line) for line in lines]


def parse_answer(text: str) -> Answer | None:
    """The typed answer; None for a plain "no" (the REPL then asks for a reason).

    Anything that is not a known answer is a "no" whose text is the reason, so a user
    can type why straight away ("not that file, the other one").
    """
    answer = text.strip()
    if answer.lower() in YES:
        return Answer(True, "", YES[answer.lower()])
    if answer.lower() in NO:
        return None
    return Answer(False, answer)
