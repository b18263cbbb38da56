"""``co ask``: one question, one answer, for scripts and CI. Never waits on a keyboard.

Exit codes: 0 success, 1 runtime error (model or tool), 2 usage error. With no terminal
attached, a call that would need approval is denied (the model is told why).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from co_core.app import App

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
    from co_core.session import Session

    if not prompt.strip():
        _err("error: nothing to ask: give a prompt as an argument or on stdin")
        return USAGE_ERROR
    if yolo:
        _err("WARNING: --yolo: every tool call runs without asking (writes, sends, commands)")
    session = Session(
        app,
        model_spec=model,
        base_url=base_url,
        yolo=yolo,
        headless=True,
        approve=approve,
        trace_content=trace_content,
    )
    try:
        return asyncio.run(_ask(session, prompt, as_json))
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    finally:
        for problem in session.close():
            _err(f"warning: {problem}")


async def _ask(session: Any, prompt: str, as_json: bool) -> int:
    from co_core.failures import describe
    from co_core.render import call_line, result_line

    session.prepare()
    try:
        co = await asyncio.to_thread(session.ready)
        co.runtime.yolo = session.yolo
        co.runtime.approver = None  # no keyboard: anything needing approval is denied

        async def on_event(event: Any) -> None:
            if as_json:
                return
            kind = getattr(event, "event_kind", "")
            if kind == "function_tool_call":
                _err(f"tool: {call_line(event.part.tool_name, event.part.args_as_dict())}")
            elif kind == "function_tool_result":
                _err(f"  -> {result_line(event.part.content, event.part.outcome)}")

        await asyncio.to_thread(session.model)
        result = await session.run_turn(prompt, on_event)
    except Exception as exc:
        failure = describe(exc, session.model_label)
        if as_json:
            data = {
                "error": failure.message,
                "hint": failure.hint,
                "tool_calls": _records(session),
                "model": session.model_label,
                "session_id": _sid(session),
            }
            print(json.dumps(data, default=str))
        _err(f"error: {failure}")
        from co_core.errors import SettingsError

        return USAGE_ERROR if isinstance(exc, SettingsError) else RUNTIME_ERROR
    if as_json:
        data = {
            "output": result.output,
            "tool_calls": [record.as_dict() for record in result.calls],
            "usage": result.usage,
            "model": result.model,
            "session_id": session.deps.session_id,
        }
        print(json.dumps(data, default=str))
    else:
        print(result.output)
    return OK


def _sid(session: Any) -> str | None:
    try:
        return session.deps.session_id
    except BaseException:
        return None


def _records(session: Any) -> list[dict[str, Any]]:
    try:
        return [record.as_dict() for record in session.finish_records()]
    except BaseException:
        return []
