"""``co ask``: one question, one answer, for scripts and CI. Never waits on a keyboard.

Exit codes: 0 success, 1 runtime error (model or tool), 2 usage error, 3 the answer came
but a tool call was denied (by a rule, or because it needed an approval nobody could
give: the model is told why, and stderr names the flag that allows it), 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.agent.calls import ToolCallRecord
from co_core.agent.conversation import Conversation
from co_core.agent.frontend import NoTerminal
from co_core.kernel.app import App
from co_core.kernel.errors import SettingsError
from co_core.ui.failures import describe
from co_core.ui.render import call_line, result_line, shown_args, visible
from co_core.ui.signals import Ending

if TYPE_CHECKING:
    from co_core.agent.local.pull import DownloadOffer

OK, RUNTIME_ERROR, USAGE_ERROR, DENIED = 0, 1, 2, 3


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
    """One line on stderr, as every line from a model, a tool or an MCP server is shown:
    escape sequences, bidi and zero-width characters written out (``visible``)."""
    print(f"co: {visible(message)}", file=sys.stderr, flush=True)


class AskFrontend(NoTerminal):
    """``co ask``: nobody to ask; each call and its result is one line on stderr."""

    def __init__(self, quiet: bool, download: bool = False) -> None:
        self.quiet = quiet
        self.download = download  # --download-model: fetch the local model if it is missing
        self.cancel = threading.Event()

    def notice(self, message: str) -> None:
        if not self.quiet:
            _err(message)

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        """Only with ``--download-model``: a script never downloads a gigabyte unasked."""
        if not self.download:
            return None
        from rich.console import Console

        from co_core.ui.progress import download_bar

        _err(f"downloading {offer.title} from {offer.source.repo} (--download-model)")
        with download_bar(Console(stderr=True), offer.title, offer.size) as update:
            return offer.run(update, self.cancel)

    def show(self, record: ToolCallRecord) -> None:
        if self.quiet:
            return
        if not record.ended or not record.resolved:
            _err(f"tool: {call_line(record.tool, shown_args(record))}")
        if record.ended and record.status != "interrupted":
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
    download_model: bool = False,
) -> int:
    if not prompt.strip():
        _err("error: nothing to ask: give a prompt as an argument or on stdin")
        return USAGE_ERROR
    if yolo:
        _err("WARNING: --yolo: every tool call runs without asking (writes, sends, commands)")
    if model is not None:
        from co_core.kernel import modelspec

        try:
            modelspec.check(model)
        except ValueError as exc:
            _err(f"error: --model {model!r}: {exc}")
            return USAGE_ERROR
    frontend = AskFrontend(quiet=as_json, download=download_model)
    conversation = Conversation(
        app,
        frontend=frontend,
        model_spec=model,
        base_url=base_url,
        yolo=yolo,
        headless=True,
        source="ask",
        approve=approve,
        trace_content=trace_content,
    )

    def abort() -> None:
        frontend.cancel.set()
        conversation.abort()

    with Ending(abort) as ending:
        try:
            return asyncio.run(ending.run(_ask(conversation, prompt, as_json)))
        except (KeyboardInterrupt, asyncio.CancelledError):
            if ending.signum is not None:
                return ending.code
            _err("interrupted")
            return 130
        finally:
            for problem in conversation.close():
                _err(f"warning: {problem}")


async def _ask(conversation: Conversation, prompt: str, as_json: bool) -> int:
    await asyncio.to_thread(conversation.prepare)
    try:
        await asyncio.to_thread(conversation.ready)
        await asyncio.to_thread(conversation.resolved_model)
        result = await conversation.run_turn(prompt)
    except Exception as exc:
        failure = describe(exc, conversation.model_label, conversation.model_object)
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
    denied = [record for record in result.calls if record.status == "denied"]
    if as_json:
        data = {
            "output": result.output,
            "tool_calls": [record.as_dict() for record in result.calls],
            "usage": result.usage,
            "model": result.model,
            "session_id": _session_id(conversation),
        }
        print(json.dumps(data, default=str))
    else:  # the model's answer: written out on a terminal, as it is for a pipe or a file
        print(visible(result.output) if sys.stdout.isatty() else result.output)
    if denied:
        _err(denied_line(denied))
        return DENIED
    return OK


def denied_line(denied: list[ToolCallRecord]) -> str:
    """``denied: write_file (fs:write:a.txt): rerun with --approve 'fs:write:a.txt' …``"""
    from co_core.policy.engine import approve_flag

    first = denied[0]
    decision = first.decision
    keys = (decision.pending or (decision.key,)) if decision is not None else ()
    how = " ".join(approve_flag(k) for k in keys if k)
    calls = f"{len(denied)} tool calls were denied" if len(denied) > 1 else "a tool call was denied"
    text = f"{calls}: {first.tool} ({first.call.permission_key})"
    if first.answer is None and how:
        text += f"; to allow it: {how} (or a policy.rules entry)"
    return visible(text, one_line=True)


def _session_id(conversation: Conversation) -> str | None:
    """The session's id if it was saved (``co sessions show ID`` finds it), else None."""
    recorder = conversation.recorder
    try:
        return recorder.saved_id if recorder is not None else None
    except Exception:  # the store cannot be read: say nothing rather than a wrong id
        return None


def _records(conversation: Conversation) -> list[dict[str, Any]]:
    try:
        return [record.as_dict() for record in conversation.ready().calls.records.values()]
    except BaseException:
        return []
