"""A conversation: the agent, its deps, the model and the history, one turn at a time.

Both ``co chat`` and ``co ask`` drive a Session. It keeps the message history across
turns, keeps it valid when a turn is cancelled (dangling tool calls answered), and
closes every resource (deps, a local model server) however the session ends.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.app import App
from co_core.errors import CoError

if TYPE_CHECKING:
    from co_core.agent import CallRecord, CoAgent, Runtime
    from co_core.deps import CoDeps
    from co_core.models import ResolvedModel


OUTCOMES = {"success": "ok", "retried": "retry", "failed": "error"}


@dataclass
class TurnResult:
    output: str
    calls: list[CallRecord]
    usage: dict[str, int]
    model: str


@dataclass
class Session:
    app: App
    model_spec: str | None = None
    base_url: str | None = None
    yolo: bool = False
    headless: bool = False  # no terminal: calls needing approval are denied (co ask)
    approve: tuple[str, ...] = ()  # --approve PATTERN: allow rules at the flag level
    history: list[Any] = field(default_factory=list)
    resume: str | None = None  # a session id (prefix) to continue, or "latest" (--continue)
    trace_content: bool = False  # --trace-content: prompts and tool output go into traces
    usage: Any = None  # co_core.usage.SessionUsage: totals for /cost
    memory: Any = None  # co_core.sessions.chat.Memory: context fitting, /context, /compact
    recorder: Any = None  # co_core.sessions.chat.Recorder: the session in the store
    note: str | None = None  # what memory said after the last turn (compacted, nearly full)
    last_usage: Any = None  # the last turn's TurnUsage, for the line after a turn
    _agent: CoAgent | None = None
    _deps: CoDeps | None = None
    _model: ResolvedModel | None = None
    _error: BaseException | None = None
    _ready: threading.Event = field(default_factory=threading.Event)

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
            from co_core.agent import build_agent

            self._agent = build_agent(
                self.app.host,
                settings,
                warn=self.app.warn,
                workspace=self.app.cwd,
                fit=self._sessions(settings),
            )
            session_id = self.recorder.info.id if self.recorder is not None else None
            self._deps = self.app.make_deps(session_id=session_id)
            self._agent.runtime.yolo = self.yolo
            self._agent.runtime.engine = self._policy(self._deps.session_id)
            self._telemetry(settings)
            _freeze_startup_objects()
        except BaseException as exc:  # reported when the first turn needs it
            self._error = exc
        finally:
            self._ready.set()

    def _sessions(self, settings: Any) -> Any:
        """Open the session store (history kept across runs); returns the context fitting
        (docs/sessions.md) for the agent to run before every request."""
        try:
            from co_core.sessions.chat import Memory, Recorder
            from co_core.sessions.store import SessionStore
        except ImportError:
            return None
        section = settings.sections.get("sessions")
        self.memory = Memory(section)
        store = SessionStore() if getattr(section, "save", True) else None
        label = self.model_spec or settings.core.model or "auto"
        if self.recorder is not None:
            pass  # opened before the prompt (open_saved)
        elif self.resume and store is not None:
            self.recorder, self.history = self._find_saved(store, self.resume)
        else:
            self.recorder = Recorder.start(store, cwd=self.app.cwd, model=label)
        return self.memory.capability()

    def _find_saved(self, store: Any, which: str) -> tuple[Any, list[Any]]:
        from co_core.sessions.chat import Recorder

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
        try:
            from co_core.sessions.store import SessionStore
        except ImportError:
            return None
        section = self.app.settings.sections.get("sessions")
        if not getattr(section, "save", True):
            return None
        self.recorder, self.history = self._find_saved(SessionStore(), self.resume)
        info = self.recorder.info
        return f"resumed {info.id}: {info.title} ({info.turns} turns)"

    def switch_to(self, which: str) -> str:
        """``/resume ID``: continue another saved session in this chat."""
        from co_core.sessions.store import SessionStore

        self.ready()
        self.recorder, self.history = self._find_saved(SessionStore(), which)
        info = self.recorder.info
        if self._deps is not None:
            self._deps.session_id = info.id
        if self.usage is not None:
            self.usage = type(self.usage).from_dict({"per_turn": self.recorder.usage_rows()})
        return f"resumed {info.id}: {info.title} ({info.turns} turns)"

    def _telemetry(self, settings: Any) -> None:
        """Traces (docs/observability.md) and usage totals; absent pieces are skipped."""
        try:
            from co_core import telemetry
            from co_core.usage import SessionUsage
        except ImportError:
            return
        rows = self.recorder.usage_rows() if self.recorder is not None else []
        self.usage = SessionUsage.from_dict({"per_turn": rows})  # resumed: totals go on
        assert self._agent is not None
        telemetry.setup_tracing(settings, include_content=True if self.trace_content else None)
        telemetry.record_plugin_loads(self.app)
        telemetry.instrument(self._agent)

    def _policy(self, session_id: str) -> Any:
        """The policy engine (rules, plugin opinions, grants, audit) behind the gate."""
        try:
            from co_core.policy import PolicyEngine
        except ImportError:  # a co-core without the engine: gate.py's default rule
            return None
        engine = PolicyEngine.from_app(
            self.app,
            workspace=self.app.cwd,
            session_id=session_id,
            approve=self.approve,
            yolo=self.yolo,
            headless=self.headless,
        )
        for notice in engine.notices + engine.check_upgrades():
            self.app.warn(notice)
        return engine

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
    def runtime(self) -> Runtime:
        return self.ready().runtime

    @property
    def deps(self) -> CoDeps:
        self.ready()
        assert self._deps is not None
        return self._deps

    def model(self) -> ResolvedModel:
        if self._model is None:
            from co_core.models import resolve

            self._model = resolve(self.model_spec, self.app.settings, self.base_url)
        return self._model

    @property
    def model_label(self) -> str:
        return (
            self._model.label
            if self._model
            else (self.model_spec or self.app.settings.core.model or "auto")
        )

    def set_model(self, spec: str) -> str:
        """Switch model mid-session (``/model``); the history is kept."""
        from co_core.models import resolve

        new = resolve(spec, self.app.settings, self.base_url)
        if self._model is not None:
            self._model.close()
        self._model, self.model_spec = new, spec
        return new.label

    # -- turns --------------------------------------------------------------------------

    async def run_turn(
        self,
        prompt: str,
        on_event: Callable[[Any], Awaitable[None]] | None = None,
    ) -> TurnResult:
        """One user turn. On cancel (Ctrl+C) the partial turn is kept, dangling calls patched."""
        import asyncio

        from co_core.agent import patch_dangling

        co = self.ready()
        model = self.model()
        deps = self.deps
        assert deps.changes is not None
        deps.changes.next_turn()
        co.runtime.records, co.runtime.calls, co.runtime.started = {}, {}, {}
        co.runtime.live_messages = None

        async def handler(ctx: Any, events: Any) -> None:
            async for event in events:
                if on_event is not None:
                    await on_event(event)

        try:
            with self._traced_turn(deps.session_id, model.label, prompt) as traced:
                result = await co.agent.run(
                    prompt,
                    deps=deps,
                    model=model.model,
                    message_history=self.history,
                    usage_limits=co.limits,
                    event_stream_handler=handler,
                )
                self._count(result, model.label, traced)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._keep_partial(prompt, patch_dangling)
            self._save(None)
            raise
        except Exception:
            self._keep_partial(prompt, patch_dangling)
            self._save(None)
            raise
        finally:
            audit = getattr(co.runtime.engine, "audit", None)
            if audit is not None:  # lines held for the loop's next pass: in the file now
                audit.flush()
        self.history = result.all_messages()
        self._save(result.usage, self.last_usage)
        self.note = None
        if self.memory is not None:
            self.history, self.note = await self.memory.after_turn(
                self.history, model.model, self.recorder
            )
        usage = result.usage
        return TurnResult(
            result.output,
            self.finish_records(),
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
                self.app.warn(f"session not saved: {exc}")

    def _traced_turn(self, session_id: str, label: str, prompt: str) -> Any:
        try:
            from co_core import telemetry
        except ImportError:
            import contextlib

            return contextlib.nullcontext(None)
        return telemetry.turn(session_id, model=label, prompt=prompt)

    def _count(self, result: Any, label: str, traced: Any) -> None:
        if self.usage is None:
            return
        from co_core.usage import turn_usage

        spent = self.usage.add(turn_usage(result.usage, label, base_url=self.base_url))
        self.last_usage = spent
        if traced is not None:
            traced.set(
                input_tokens=spent.input_tokens,
                output_tokens=spent.output_tokens,
                cost_usd=None if spent.cost is None else float(spent.cost),
            )

    def _keep_partial(self, prompt: str, patch: Callable[[list[Any]], list[Any]]) -> None:
        """Keep what the failed or cancelled turn said, in a shape the next turn accepts."""
        live = self.runtime.live_messages
        if live and len(live) > len(self.history):
            self.history = patch(list(live))

    def finish_records(self) -> list[CallRecord]:
        from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart

        records = self.runtime.records
        for message in self.history:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                record = records.get(getattr(part, "tool_call_id", "") or "")
                if record is None or record.status == "denied":
                    continue
                if isinstance(part, ToolReturnPart):
                    record.status = OUTCOMES.get(part.outcome, part.outcome)
                elif isinstance(part, RetryPromptPart):
                    record.status = "retry"
        return list(records.values())

    def clear(self) -> None:
        self.history = []

    def close(self) -> list[str]:
        """Close deps and stop a local model server; returns problems (we are exiting)."""
        problems: list[str] = []
        try:
            from co_core import telemetry

            telemetry.shutdown_tracing()
        except Exception as exc:
            problems.append(f"flushing traces: {exc}")
        if self._deps is not None:
            problems += self._deps.close()
        audit = getattr(self._agent.runtime.engine, "audit", None) if self._agent else None
        if audit is not None:
            audit.close()
        if self._model is not None:
            try:
                self._model.close()
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
