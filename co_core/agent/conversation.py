"""One conversation with the model, as ``co chat`` and ``co ask`` hold it.

A :class:`Conversation` keeps the message history across turns, keeps it valid when a
turn is cancelled (dangling tool calls answered), saves each turn, and closes every
resource (deps, a local model server, the trace exporter) however it ends. Its
:class:`~co_core.agent.frontend.Frontend` (the REPL, or nobody) is given once.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.agent.frontend import Frontend, NoTerminal
from co_core.kernel.app import App
from co_core.kernel.errors import CoError

if TYPE_CHECKING:
    from co_core.agent.build import CoAgent
    from co_core.agent.calls import ToolCallRecord
    from co_core.agent.models import ResolvedModel
    from co_core.kernel.deps import CoDeps
    from co_core.kernel.settings import Settings
    from co_core.sessions.context import ContextKeeper
    from co_core.sessions.recorder import Recorder
    from co_core.telemetry.usage import SessionUsage, TurnUsage


@dataclass
class TurnResult:
    output: str
    calls: list[ToolCallRecord]
    usage: dict[str, int]
    model: str


@dataclass
class Conversation:
    app: App
    frontend: Frontend = field(default_factory=NoTerminal)
    model_spec: str | None = None
    base_url: str | None = None
    yolo: bool = False
    headless: bool = False  # no terminal: calls needing approval are denied (co ask)
    approve: tuple[str, ...] = ()  # --approve PATTERN: allow rules at the flag level
    history: list[Any] = field(default_factory=list)
    resume: str | None = None  # a session id (prefix) to continue, or "latest" (--continue)
    trace_content: bool = False  # --trace-content: prompts and tool output go into traces
    usage: SessionUsage | None = None  # totals for /cost
    context: ContextKeeper | None = None  # context fitting, /context, /compact
    recorder: Recorder | None = None  # the session in the store
    note: str | None = None  # what the context keeper said after the last turn
    last_usage: TurnUsage | None = None  # the last turn's usage, for the line after a turn
    model: ResolvedModel | None = None  # resolved on first use (``resolved_model``)
    _agent: CoAgent | None = None
    _deps: CoDeps | None = None
    _error: BaseException | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _live: list[Any] | None = None  # the running turn's messages (kept on Ctrl+C)

    # -- preparation (may run in a background thread while the user types) ------------

    def prepare(
        self, settings_checked: Callable[[BaseException | None], None] | None = None
    ) -> None:
        """Build the agent; ``settings_checked`` hears first whether settings validated, so
        the REPL can stop on bad settings (or draw the prompt's markers) at once."""
        checked = settings_checked or (lambda error: None)
        try:
            try:
                settings = self.app.settings
            except BaseException as exc:
                checked(exc)
                raise
            checked(None)
            self._build(settings)
            _freeze_startup_objects()
        except BaseException as exc:  # reported when the first turn needs it
            self._error = exc
        finally:
            self._ready.set()

    def _build(self, settings: Settings) -> None:
        from co_core import telemetry
        from co_core.agent.build import build_agent
        from co_core.agent.calls import CallLog
        from co_core.policy.engine import PolicyEngine
        from co_core.sessions.context import ContextKeeper
        from co_core.telemetry.usage import SessionUsage

        section = settings.sections.get("sessions")
        self.context = ContextKeeper(section)
        self._open_session(section, settings)
        assert self.recorder is not None
        self._deps = self.app.make_deps(session_id=self.recorder.info.id)
        self.usage = SessionUsage.from_dict({"per_turn": self.recorder.usage_rows()})
        telemetry.setup_tracing(settings, include_content=True if self.trace_content else None)
        telemetry.record_plugin_loads(self.app)
        engine = PolicyEngine.from_app(
            self.app,
            workspace=self.app.cwd,
            session_id=self._deps.session_id,
            approve=self.approve,
            yolo=self.yolo,
            headless=self.headless,
        )
        for notice in engine.notices + engine.check_upgrades():
            self.frontend.warn(notice)
        self._deps.policy, self._deps.warn = engine.allows, self.frontend.warn
        self._agent = build_agent(
            self.app.host,
            settings,
            CallLog(engine, self.frontend),
            workspace=self.app.cwd,
            fit=self.context.capability(),
            warn=self.frontend.warn,
        )

    def _open_session(self, section: Any, settings: Settings) -> None:
        """The session in the store: resumed (``--continue``/``--resume``) or new."""
        from co_core.sessions.recorder import Recorder
        from co_core.sessions.store import SessionStore

        if self.recorder is not None:
            return  # opened before the prompt (open_saved)
        store = SessionStore() if getattr(section, "save", True) else None
        if self.resume and store is not None:
            self.recorder, self.history = self._find_saved(store, self.resume)
        else:
            label = self.model_spec or settings.core.model or "auto"
            self.recorder = Recorder.start(store, cwd=self.app.cwd, model=label)

    def _find_saved(self, store: Any, which: str) -> tuple[Recorder, list[Any]]:
        from co_core.sessions.recorder import Recorder

        if which == "latest":
            found = Recorder.latest(store, self.app.cwd)
            if found is None:
                raise CoError("no earlier session in this folder to continue")
            return found
        return Recorder.resume(store, which)

    def open_saved(self) -> str | None:
        """Open the ``--continue`` / ``--resume`` session before the prompt appears, so an
        unknown id is one line at start-up; returns the line that says what was resumed."""
        if not self.resume:
            return None
        from co_core.sessions.store import SessionStore

        section = self.app.settings.sections.get("sessions")
        if not getattr(section, "save", True):
            return None
        self.recorder, self.history = self._find_saved(SessionStore(), self.resume)
        info = self.recorder.info
        return f"resumed {info.id}: {info.title} ({info.turns} turns)"

    def switch_to(self, which: str) -> str:
        """``/resume ID``: continue another saved session in this chat."""
        from co_core.sessions.store import SessionStore
        from co_core.telemetry.usage import SessionUsage

        self.ready()
        self.recorder, self.history = self._find_saved(SessionStore(), which)
        info = self.recorder.info
        self.deps.session_id = info.id
        self.usage = SessionUsage.from_dict({"per_turn": self.recorder.usage_rows()})
        return f"resumed {info.id}: {info.title} ({info.turns} turns)"

    def prepare_in_background(
        self, settings_checked: Callable[[BaseException | None], None] | None = None
    ) -> None:
        threading.Thread(
            target=self.prepare, args=(settings_checked,), name="co-prepare", daemon=True
        ).start()

    def ready(self) -> CoAgent:
        if not self._ready.is_set():
            self._ready.wait()
        if self._error is not None:
            raise self._error  # e.g. bad settings: it will not fix itself mid-session
        assert self._agent is not None
        return self._agent

    @property
    def deps(self) -> CoDeps:
        self.ready()
        assert self._deps is not None
        return self._deps

    def resolved_model(self) -> ResolvedModel:
        if self.model is None:
            from co_core.agent.models import resolve

            self.model = resolve(self.model_spec, self.app.settings, self.base_url)
        return self.model

    @property
    def model_label(self) -> str:
        if self.model is not None:
            return self.model.label
        return self.model_spec or self.app.settings.core.model or "auto"

    def set_model(self, spec: str) -> str:
        """Switch model mid-session (``/model``); the history is kept."""
        from co_core.agent.models import resolve

        new = resolve(spec, self.app.settings, self.base_url)
        if self.model is not None:
            self.model.close()
        self.model, self.model_spec = new, spec
        return new.label

    # -- turns --------------------------------------------------------------------------

    async def run_turn(
        self, prompt: str, on_event: Callable[[Any], Awaitable[None]] | None = None
    ) -> TurnResult:
        """One user turn. On cancel (Ctrl+C) or failure the partial turn is kept, valid."""
        import asyncio

        from co_core import telemetry

        co = self.ready()
        model = self.resolved_model()
        deps = self.deps
        deps.changes.next_turn()
        co.calls.new_turn()
        self._live = None

        async def handler(ctx: Any, events: Any) -> None:
            self._live = ctx.messages
            async for event in events:
                if on_event is not None:
                    await on_event(event)

        try:
            with telemetry.turn(deps.session_id, model=model.label, prompt=prompt) as traced:
                result = await co.agent.run(
                    prompt,
                    deps=deps,
                    model=model.model,
                    message_history=self.history,
                    usage_limits=co.limits,
                    event_stream_handler=handler,
                )
                self._count(result, model.label, traced)
        except (asyncio.CancelledError, KeyboardInterrupt, Exception):
            co.calls.interrupt()
            self._keep_partial()
            self._save(None)
            raise
        self.history = result.all_messages()
        self._save(result.usage, self.last_usage)
        self.note = None
        if self.context is not None:
            self.history, self.note = await self.context.after_turn(
                self.history, model.model, self.recorder
            )
        usage = result.usage
        return TurnResult(
            result.output,
            list(co.calls.records.values()),
            {
                "requests": usage.requests,
                "tool_calls": usage.tool_calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
            },
            model.label,
        )

    def _save(self, usage: Any, spent: Any = None) -> None:
        if self.recorder is not None:
            try:
                self.recorder.save(self.history, usage, spent)
            except Exception as exc:  # the conversation goes on even if the disk is full
                self.frontend.warn(f"session not saved: {exc}")

    def _count(self, result: Any, label: str, traced: Any) -> None:
        from co_core.telemetry.usage import turn_usage

        if self.usage is None:
            return
        spent = self.usage.add(turn_usage(result.usage, label, base_url=self.base_url))
        self.last_usage = spent
        traced.set(
            input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens,
            cost_usd=None if spent.cost is None else float(spent.cost),
        )

    def _keep_partial(self) -> None:
        """Keep what the failed or cancelled turn said, up to the model's last answer, in a
        shape the next turn accepts (its tool calls answered as interrupted)."""
        from co_core.sessions.history import patch_dangling

        live = list(self._live or [])
        answered = [  # whole answers: a request cut short leaves an "interrupted" one
            i
            for i, message in enumerate(live)
            if message.kind == "response" and getattr(message, "state", "") != "interrupted"
        ]
        if answered and answered[-1] >= len(self.history):  # the model said something new
            self.history = patch_dangling(live[: answered[-1] + 2])

    def clear(self) -> None:
        self.history = []

    def close(self) -> list[str]:
        """Close deps and stop a local model server; returns problems (we are exiting)."""
        from co_core import telemetry

        problems: list[str] = []
        try:
            telemetry.shutdown_tracing()
        except Exception as exc:
            problems.append(f"flushing traces: {exc}")
        if self._deps is not None:
            problems += self._deps.close()
        if self._agent is not None and self._agent.calls.engine.audit is not None:
            self._agent.calls.engine.audit.close()
        if self.model is not None:
            try:
                self.model.close()
            except Exception as exc:
                problems.append(f"stopping the model: {exc}")
        return problems


def _freeze_startup_objects() -> None:
    """Leave what start-up built (modules, pydantic-ai, schemas, the agent) out of every
    later garbage collection: a full collection otherwise walks those few hundred thousand
    objects again, on whichever turn happens to trigger it."""
    import gc

    gc.collect()
    gc.freeze()
