"""``co ask --stream-json``: the run as it happens, one JSON object a line on stdout.

For scripts and CI that follow a run (``jq``, a log viewer) instead of waiting for one
document at the end (``--json``). Every line is an object with a ``type``; the fields of
each type are stable and described by docs/stream-json.schema.json (its ``version``
goes up only when a field changes meaning or goes away; new fields may be added):

- ``start``: ``version``, ``session_id``, ``model``, ``cwd``;
- ``text``: ``text``, a piece of the model's answer as it streams (a tiny model Co steers
  may be answered by Co instead, from a call's result: ``end.output`` is the answer);
- ``tool_call``: ``call_id``, ``tool``, ``plugin``, ``arguments`` (as the model wrote them);
- ``decision``: ``call_id``, ``tool``, ``permission``, ``effect`` (``allow``, ``deny``,
  ``ask``, ``ask_once``), ``source``, ``reason``, ``arguments`` (resolved);
- ``result``: ``call_id``, ``tool``, ``status`` (``ok``, ``retry``, ``error``,
  ``denied``, ``interrupted``, ``timed out``), ``output`` (the text, or why it did not
  run), ``duration_ms``;
- ``usage``: ``requests``, ``tool_calls``, ``input_tokens``, ``output_tokens``;
- ``error``: ``message``, ``hint``;
- ``end``: ``exit_code`` (as ``co ask`` exits: 0, 1, 2, 3, 130), ``output`` (the whole
  answer), ``denied`` (calls denied), ``session_id``.

``end`` is always the last line, also after an error or Ctrl+C. Nothing else is written
to stdout; stderr stays for Co's own warnings.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from co_core.agent.calls import ToolCallRecord
    from co_core.agent.calls.record import Event
    from co_core.agent.conversation import Conversation
    from co_core.agent.frontend import Answer, Frontend
    from co_core.agent.local.pull import DownloadOffer

VERSION = 1  # docs/stream-json.schema.json


class StreamEvents:
    """``co ask``'s frontend (``base``, which never asks) saying each call as JSON lines
    instead of lines on stderr; stderr keeps only Co's own warnings."""

    def __init__(self, base: Frontend, out: TextIO | None = None) -> None:
        self.base = base
        self.interactive = base.interactive
        self.out = out if out is not None else sys.stdout
        self.ended = False
        self._lock = threading.Lock()

    def emit(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"type": kind, **fields}, ensure_ascii=False, default=str)
        with self._lock:
            if self.ended:
                return
            self.out.write(line + "\n")
            self.out.flush()

    async def approve(self, record: ToolCallRecord) -> Answer:
        return await self.base.approve(record)

    async def announce(self, records: Sequence[ToolCallRecord]) -> None:
        await self.base.announce(records)

    def warn(self, message: str) -> None:
        self.base.warn(message)

    def notice(self, message: str) -> None:
        self.base.notice(message)

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        return self.base.offer_download(offer)

    # -- the frontend --------------------------------------------------------------------

    def show(self, record: ToolCallRecord) -> None:
        if not record.ended:
            self.emit(
                "tool_call",
                call_id=record.call_id,
                tool=record.tool,
                plugin=record.call.plugin,
                arguments=dict(record.asked or record.call.args),
            )
            return
        self.emit(
            "result",
            call_id=record.call_id,
            tool=record.tool,
            status=record.status,
            output=_text(record.result),
            duration_ms=None if record.duration is None else round(record.duration * 1000, 1),
        )

    def hear(self, event: Event, record: ToolCallRecord) -> None:
        """The call pipeline's listener: each decision as it is made."""
        if event != "decided" or record.decision is None:
            return
        decision = record.decision
        self.emit(
            "decision",
            call_id=record.call_id,
            tool=record.tool,
            permission=decision.key,
            effect=decision.effect,
            source=decision.source,
            reason=decision.reason,
            arguments=dict(record.call.args),
        )

    async def on_event(self, event: Any) -> None:
        """The model's answer as it streams."""
        kind = getattr(event, "event_kind", "")
        if kind == "part_start" and getattr(event.part, "part_kind", "") == "text":
            text = event.part.content
        elif kind == "part_delta" and getattr(event.delta, "part_delta_kind", "") == "text":
            text = event.delta.content_delta
        else:
            return
        if text:
            self.emit("text", text=text)

    # -- the run's frame -----------------------------------------------------------------

    def started(self, conversation: Conversation) -> None:
        conversation.ready().calls.listen(self.hear)
        self.emit(
            "start",
            version=VERSION,
            session_id=conversation.deps.session_id,
            model=conversation.model_label,
            cwd=str(conversation.app.cwd),
        )

    def finish(
        self, code: int, output: str = "", denied: int = 0, session: str | None = None
    ) -> None:
        """The last line; said once, however the run ended."""
        self.emit("end", exit_code=code, output=output, denied=denied, session_id=session)
        with self._lock:
            self.ended = True


def _text(result: Any) -> str:
    display = getattr(result, "display", None)
    if isinstance(display, str):
        return display
    return "" if result is None else result if isinstance(result, str) else str(result)
