"""``co ask``: one question, one answer, for scripts and CI. Never waits on a keyboard.

Exit codes: 0 success, 1 runtime error (model or tool), 2 usage error. With no terminal
attached, a call that would need approval is denied (the model is told why).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from co_core.agent.calls import ToolCallRecord
from co_core.agent.conversation import Conversation
from co_core.agent.frontend import NoTerminal
from co_core.kernel.app import App
from co_core.kernel.errors import SettingsError
from co_core.ui.failures import describe
from co_core.ui.render import call_line, result_line

OK, RUNTIME_ERROR, USAGE_ERROR = 0, 1, 2


def read_prompt(words: list[str], stdin: Any = None) -> str:
    """The prompt from the arguments plus whatever was piped in (``git diff | co ask "review"``)."""
    stdin = sys.stdin if stdin is None else stdin
    prompt = " ".join(words).strip()
    piped = ""
    if stdin is not None and not stdin.isatty():
        piped = stdin.read()
    if prompt and piped.strip():
        return f"{prompt}\n\n{piped}"
    return prompt or piped.strip()


def _err(message: str) -> None:
    print(f"co: {message}", file=sys.stderr, flush=True)


class AskFrontend(NoTerminal):
    """``co ask``: nobody to ask; each call and its result is one line on stderr."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet

    def show(self, record: ToolCallRecord) -> None:
        if self.quiet:
            return
        if not record.ended:
            _err(f"tool: {call_line(record.tool, dict(record.call.args))}")
        elif record.status != "interrupted":
            _err(f"  -> {result_line(record.result, record.status)}")


def run_ask(
    app: App,
    prompt: str,
    *,
    as_json: bool = False,
    model: str | None = None,
    base_url: str | None = None,
    yolo: bool = False,
    approve: tuple[str, ...] = (),
    trace_content: bool = False,
) -> int:
    if not prompt.strip():
        _err("error: nothing to ask: give a prompt as an argument or on stdin")
        return USAGE_ERROR
    if yolo:
        _err("WARNING: --yolo: every tool call runs without asking (writes, sends, commands)")
    conversation = Conversation(
        app,
        frontend=AskFrontend(quiet=as_json),
        model_spec=model,
        base_url=base_url,
        yolo=yolo,
        headless=True,
        approve=approve,
        trace_content=trace_content,
    )
    try:
        return asyncio.run(_ask(conversation, prompt, as_json))
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    finally:
        for problem in conversation.close():
            _err(f"warning: {problem}")


async def _ask(conversation: Conversation, prompt: str, as_json: bool) -> int:
    conversation.prepare()
    try:
        await asyncio.to_thread(conversation.ready)
        await asyncio.to_thread(conversation.resolved_model)
        result = await conversation.run_turn(prompt)
    except Exception as exc:
        failure = describe(exc, conversation.model_label)
        if as_json:
            data: dict[str, Any] = {
                "error": failure.message,
                "hint": failure.hint,
                "tool_calls": _records(conversation),
                "model": conversation.model_label,
                "session_id": _session_id(conversation),
            }
            print(json.dumps(data, default=str))
        _err(f"error: {failure}")
        return USAGE_ERROR if isinstance(exc, SettingsError) else RUNTIME_ERROR
    if as_json:
        data = {
            "output": result.output,
            "tool_calls": [record.as_dict() for record in result.calls],
            "usage": result.usage,
            "model": result.model,
            "session_id": conversation.deps.session_id,
        }
        print(json.dumps(data, default=str))
    else:
        print(result.output)
    return OK


def _session_id(conversation: Conversation) -> str | None:
    try:
        return conversation.deps.session_id
    except BaseException:
        return None


def _records(conversation: Conversation) -> list[dict[str, Any]]:
    try:
        return [record.as_dict() for record in conversation.ready().calls.records.values()]
    except BaseException:
        return []
