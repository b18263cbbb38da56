"""One conversation with the model, as ``co chat`` and ``co ask`` hold it.

A :class:`Conversation` keeps the message history across turns, keeps it valid when a
turn is cancelled (dangling tool calls answered), saves each turn, and closes every
resource (deps, a local model server, the trace exporter) however it ends. Its
:class:`~co_core.agent.frontend.Frontend` (the REPL, or nobody) is given once.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.agent.calls.loops import TurnStopped
from co_core.agent.frontend import Frontend, NoTerminal
from co_core.kernel.app import App
from co_core.kernel.errors import CoError

if TYPE_CHECKING:
    from co_core.agent.assembly.build import CoAgent
    from co_core.agent.calls import ToolCallRecord
    from co_core.agent.models import ModelChoice, ResolvedModel
    from co_core.agent.session_files import SessionFiles
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
    source: str = "chat"  # where the session is held: "chat", or "ask" (kept apart)
    approve: tuple[str, ...] = ()  # --approve PATTERN: allow rules at the flag level
    history: list[Any] = field(default_factory=list)
    resume: str | None = None  # a session id (prefix) to continue, or "latest" (--continue)
    trace_content: bool = False  # --trace-content: prompts and tool output go into traces
    usage: SessionUsage | None = None  # totals for /cost
    context: ContextKeeper | None = None  # context fitting, /context, /compact
    recorder: Recorder | None = None  # the session in the store
    note: str | None = None  # what the context keeper said after the last turn
    last_usage: TurnUsage | None = None  # the last turn's usage, for the line after a turn
    model: ResolvedModel | None = None  # started in the background by ``prepare``
    choice: ModelChoice | None = None  # which model, and why (``auto`` decided)
    files: SessionFiles | None = None  # instruction files, memory, the user's hooks
    _agent: CoAgent | None = None
    _deps: CoDeps | None = None
    _error: BaseException | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _model_error: BaseException | None = None
    _model_ready: threading.Event = field(default_factory=threading.Event)
    _model_starting: bool = False  # ``_start_model`` is under way (in prepare's thread)
    _live: list[Any] | None = None  # the running turn's messages (kept on Ctrl+C)
    _closed: bool = False
    _model_lock: threading.Lock = field(default_factory=threading.Lock)  # who sets ``model``
    _unwritable: CoError | None = None  # the data directory cannot be written: nothing saved

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
            self._check_data_dir()
            self._reap()
            if self.model is None:
                try:
                    self.choice = self._choose(settings)
                except CoError as exc:  # no model: /help, /tools and the rest still work
                    self._model_failed(exc)
            self._build(settings)
            if self.files is not None:
                self.files.started(self.model_label, self.source)
            _freeze_startup_objects()
        except BaseException as exc:  # reported when the first turn needs it
            self._error = exc
            self._model_error = exc
            self._model_ready.set()
        finally:
            self._ready.set()
        if not self._model_ready.is_set():
            self._start_model(settings)

    def _check_data_dir(self) -> None:
        """A read-only home (or a full disk): the conversation runs, saving nothing, and
        says so once."""
        from co_core.kernel import paths

        self._unwritable = paths.writable("data")
        if self._unwritable is not None:
            kept = "the session, traces, the audit trail"
            kept = f"input history, {kept}" if self.frontend.interactive else kept
            self.frontend.warn(f"{self._unwritable}; until then nothing is saved ({kept})")

    def _reap(self) -> None:
        """Stop a local model server a killed Co left behind (its record proves it)."""
        from co_core.agent.local.server import reap

        for line in reap():
            self.frontend.notice(line)

    def _choose(self, settings: Settings) -> ModelChoice:
        """Decide the model (``auto`` included) and say so when it was not named."""
        from co_core.agent.models import choose

        choice = choose(self.model_spec, settings, self.app.host)
        if choice.auto:
            self.frontend.notice(choice.line)
        return choice

    def _start_model(self, settings: Settings) -> None:
        """Start the model now, while the user types: a local model loads (or is offered
        for download) here, not behind the first answer's spinner. A failure is shown at
        once in the chat and raised again by the turn that needs the model."""
        from co_core.agent.models import resolve

        self._model_starting = True
        try:
            if self.model is None:
                spec = self.choice.spec if self.choice is not None else self.model_spec
                model = resolve(spec, settings, self.base_url, self.frontend, self.app.host)
                _priced_in_traces(model)
                with self._model_lock:
                    # the user left, or chose another model (/model) while it was starting
                    keep = not self._closed and self.model is None
                    if keep:
                        self.model = model
                if not keep:
                    model.close()
        except BaseException as exc:
            self._model_failed(exc)
        finally:
            self._model_ready.set()

    def _model_failed(self, exc: BaseException) -> None:
        """No model: said now in the chat (``co ask`` says it as the turn's error)."""
        self._model_error = exc
        self._model_ready.set()
        if self.frontend.interactive and not self._closed:  # not when stopped by close()
            self.frontend.warn(f"model {self.model_label}: {exc}")

    def _build(self, settings: Settings) -> None:
        from co_core import telemetry
        from co_core.agent.assembly.build import build_agent
        from co_core.agent.assembly.sources import session_toolsets
        from co_core.agent.assembly.steering import session_steering
        from co_core.agent.calls.pipeline import CallPipeline
        from co_core.agent.counting import counter_for
        from co_core.agent.session_files import SessionFiles
        from co_core.policy.engine import PolicyEngine
        from co_core.sessions.context import ContextKeeper
        from co_core.sessions.counting import Counting
        from co_core.telemetry.usage import SessionUsage

        section = settings.sections.get("sessions")
        self.context = ContextKeeper(section, counting=Counting(counter_for))
        self._open_session(section, settings)
        assert self.recorder is not None
        self._deps = self.app.make_deps(session_id=self.recorder.info.id)
        self.usage = SessionUsage.from_dict({"per_turn": self.recorder.usage_rows()})
        if self._unwritable is None:
            content = True if self.trace_content else None
            telemetry.setup_tracing(settings, include_content=content)
            telemetry.record_plugin_loads(self.app)
        engine = PolicyEngine.from_app(
            self.app,
            workspace=self.app.cwd,
            session_id=self._deps.session_id,
            approve=self.approve,
            yolo=self.yolo,
            headless=self.headless,
            audit=self._unwritable is None,
        )
        for notice in engine.notices + engine.check_upgrades():
            self.frontend.warn(notice)
        self._deps.policy, self._deps.warn = engine.allows, self.frontend.warn
        self._deps.policy_version = lambda: engine.version
        pipeline = CallPipeline(engine, self.frontend)
        self.files = SessionFiles.open(
            self.app.cwd, settings, engine, pipeline, self.frontend, self._deps.session_id
        )
        self._agent = build_agent(
            self.app.host,
            settings,
            pipeline,
            # MCP servers start now, in the background, and serve every turn
            toolsets=session_toolsets(self._deps, engine.specs, self.frontend.warn),
            fit=self.context.capability(),
            counting=self.context.counting,
            steering=session_steering(self._deps),
            warn=self.frontend.warn,
            briefing=self.files.briefing,
        )

    def _open_session(self, section: Any, settings: Settings) -> None:
        """The session in the store: resumed (``--continue``/``--resume``) or new."""
        from co_core.sessions.recorder import Recorder
        from co_core.sessions.store import SessionStore

        if self.recorder is not None:
            return  # opened before the prompt (open_saved)
        saved = getattr(section, "save", True) and self._unwritable is None
        store = SessionStore() if saved else None
        if self.resume and store is not None:
            self.recorder, self.history = self._find_saved(store, self.resume)
        else:
            self.recorder = Recorder.start(
                store, cwd=self.app.cwd, model=self.model_label, source=self.source
            )

    def _find_saved(self, store: Any, which: str) -> tuple[Recorder, list[Any]]:
        """The session to continue; its next turns are saved as held here (a ``co ask``
        session continued in the chat becomes a chat)."""
        from co_core.sessions.recorder import Recorder

        if which == "latest":
            found = Recorder.latest(store, self.app.cwd)
            if found is None:
                raise CoError(
                    "no earlier chat in this folder to continue (`co sessions list` shows "
                    "every session, co ask runs too; `co chat --resume ID` continues one)"
                )
        else:
            found = Recorder.resume(store, which)
        found[0].info.source = self.source
        return found

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
        before = self.recorder
        self.recorder, self.history = self._find_saved(SessionStore(), which)
        if before is not None and before.store is not None:
            before.store.close()  # its file stays open otherwise (3 descriptors a switch)
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
        """The model, once ``prepare`` has started it (tests may set ``model`` first)."""
        if self.model is not None:
            return self.model
        if not self._model_ready.is_set():
            self._model_ready.wait()
        if self._model_error is not None:
            raise self._model_error
        assert self.model is not None
        return self.model

    @property
    def model_label(self) -> str:
        if self.model is not None:
            return self.model.label
        if self.choice is not None:
            return self.choice.spec
        return self.model_spec or self.app.settings.core.model or "auto"

    @property
    def model_object(self) -> Any:
        """The pydantic-ai model once resolved (errors name its server), else None."""
        return self.model.model if self.model is not None else None

    def set_model(self, spec: str) -> str:
        """Switch model mid-session (``/model``); the history is kept."""
        from co_core.agent.models import resolve

        new = resolve(spec, self.app.settings, self.base_url, self.frontend, self.app.host)
        _priced_in_traces(new)
        with self._model_lock:
            old, self.model, self.model_spec, self._model_error = self.model, new, spec, None
        if old is not None:
            old.close()
        return new.label

    def abort(self) -> None:
        """Co is being ended (SIGTERM, a closed terminal): stop at once what could hold the
        exit up. A local model that is still loading is stopped; ``close`` does the rest."""
        from co_core.agent.local import server

        server.stop_all()

    def _stop_starting_model(self) -> None:
        """The user left while the model was starting: its server is stopped now, and the
        start, seeing ``_closed``, closes what it made before Co exits (a daemon thread
        left to it would be cut off, leaving the server's record and log behind)."""
        local = sys.modules.get("co_core.agent.local.server")
        if local is not None:
            local.stop_live()
        self._model_ready.wait(timeout=10)

    # -- turns --------------------------------------------------------------------------

    async def run_turn(
        self,
        prompt: str,
        on_event: Callable[[Any], Awaitable[None]] | None = None,
        tools: Collection[str] | None = None,
    ) -> TurnResult:
        """One user turn. On cancel (Ctrl+C) or failure the partial turn is kept, valid.
        ``tools``: the only tools offered in this turn (a user's command says which)."""
        co = self.ready()
        model = self.resolved_model()
        if self.files is not None:
            prompt = await self.files.prompted(prompt)  # PromptDenied: nothing is sent
        co.toolbox.only = frozenset(tools) if tools is not None else None
        try:
            result = await self._run_turn(co, model, prompt, on_event)
        except BaseException as exc:
            if self.files is not None:
                status = "cancelled" if not isinstance(exc, Exception) else "error"
                await self.files.ended(status, "", len(co.calls.records))
            raise
        finally:
            co.toolbox.only = None
        if self.files is not None:
            await self.files.ended("ok", result.output, len(result.calls))
        return result

    async def _run_turn(
        self,
        co: CoAgent,
        model: ResolvedModel,
        prompt: str,
        on_event: Callable[[Any], Awaitable[None]] | None,
    ) -> TurnResult:
        import asyncio

        from co_core import telemetry

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
                try:
                    result = await co.agent.run(
                        prompt,
                        deps=deps,
                        model=model.model,
                        message_history=self.history,
                        usage_limits=co.limits,
                        event_stream_handler=handler,
                    )
                except TurnStopped:
                    if not self._steer_instead(model):
                        raise
                    co.calls.new_turn()  # the failed try is left out: the turn again, steered
                    self._live = None
                    result = await co.agent.run(
                        prompt,
                        deps=deps,
                        model=model.model,
                        message_history=self.history,
                        usage_limits=co.limits,
                        event_stream_handler=handler,
                    )
                self._count(result, model.label, traced)
        except (asyncio.CancelledError, KeyboardInterrupt, Exception) as exc:
            said = _failed(co.calls.records.values())  # before they are closed as interrupted
            co.calls.interrupt()
            self._keep_partial(said, _ended_by(exc))
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
            model.spec,
        )

    def _steer_instead(self, model: ResolvedModel) -> bool:
        """A model whose size its server does not say made calls that failed until the
        loop guard stopped them: it is steered from now on, said in one line (the
        fallback docs/chat.md describes). False when there is no such fallback."""
        from co_core.agent.served import STEERED_LATER, UNKNOWN_SIZE

        later = getattr(model.model, STEERED_LATER, None)
        if not callable(later) or getattr(model.model, "co_small", False):
            return False
        model.model = later()
        self.frontend.notice(UNKNOWN_SIZE.format(model=model.label))
        return True

    def _save(self, usage: Any, spent: Any = None) -> None:
        if self.recorder is not None:
            if self.model is not None:  # the model that answered, as --model takes it back
                self.recorder.info.model = self.model.spec
            try:
                self.recorder.save(self.history, usage, spent)
            except Exception as exc:  # the conversation goes on even if the disk is full
                self.frontend.warn(f"session not saved: {exc}")

    def _count(self, result: Any, label: str, traced: Any) -> None:
        from co_core.telemetry.usage import turn_usage

        if self.usage is None:
            return
        model = self.model
        provider = model.provider if model is not None else None
        spec = model.spec if model is not None else label
        spent = turn_usage(result.usage, spec, provider=provider, base_url=self.base_url)
        spent.model = label
        self.usage.add(spent)
        self.last_usage = spent
        traced.set(
            input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens,
            cost_usd=None if spent.cost is None else float(spent.cost),
        )

    def _keep_partial(self, notes: dict[str, tuple[str, str]], note: str) -> None:
        """Keep what the failed or cancelled turn said, up to the model's last answer, in a
        shape the next turn accepts: each unanswered call answered with what became of it
        (``notes``: a tool's failure), else ``note`` (why the turn ended)."""
        from co_core.sessions.history import patch_dangling

        live = list(self._live or [])
        answered = [  # whole answers: a request cut short leaves an "interrupted" one
            i
            for i, message in enumerate(live)
            if message.kind == "response" and getattr(message, "state", "") != "interrupted"
        ]
        if answered and answered[-1] >= len(self.history):  # the model said something new
            self.history = patch_dangling(live[: answered[-1] + 2], note, notes)

    def add_note(self, text: str) -> None:
        """What the user did between turns (``!cmd`` and its output), for the model to read
        with the next turn: kept in the history and in the saved session."""
        from pydantic_ai.messages import ModelRequest, UserPromptPart

        self.ready()
        self.history = [*self.history, ModelRequest(parts=[UserPromptPart(text)])]
        self._save(None)

    def clear(self) -> None:
        self.history = []

    def close(self) -> list[str]:
        """Close deps and stop a local model server; returns problems (we are exiting)."""
        from co_core import telemetry

        self._closed = True
        if self._model_starting and not self._model_ready.is_set():
            self._stop_starting_model()
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
        if self.recorder is not None and self.recorder.store is not None:
            self.recorder.store.close()
        return problems


def _priced_in_traces(model: ResolvedModel) -> None:
    """The traces price this model's requests as its provider does."""
    from co_core.telemetry.usage import remember_system

    try:
        system = getattr(model.model, "system", None)
    except Exception:  # a model that cannot say offline
        system = None
    remember_system(system if isinstance(system, str) else None, model.provider)


def _ended_by(exc: BaseException) -> str:
    """What a call the turn never ran is answered with, in the session and the next request."""
    import asyncio

    from co_core.sessions.history import INTERRUPTED

    if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
        return INTERRUPTED
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"Not run: the turn ended with an error: {text}"


def _failed(records: Any) -> dict[str, tuple[str, str]]:
    """Calls that ran and failed: what the session says of them (not "interrupted")."""
    return {
        record.call_id: (f"The tool failed: {record.result}", "failed")
        for record in records
        if record.status in ("error", "retry")
    }


def _freeze_startup_objects() -> None:
    """Leave what start-up built (modules, pydantic-ai, schemas, the agent) out of every
    later garbage collection: a full collection otherwise walks those few hundred thousand
    objects again, on whichever turn happens to trigger it."""
    import gc

    gc.collect()
    gc.freeze()
