"""``co chat``: the interactive REPL.

The prompt appears at once: nothing in front of it imports pydantic or rich. Settings are
validated, the plugins' prompt markers drawn and the agent (pydantic-ai and every plugin's
tools) prepared in a background thread while the user types; bad settings still stop Co
with one line. Keys: Ctrl+C during a turn cancels it (the history stays valid), Ctrl+C at
the prompt warns and a second one within 2 s exits, Ctrl+D, ``exit``, ``quit`` and
``/exit`` exit. Resources are closed on every way out.

The REPL is the conversation's frontend: it draws each tool call's line from its record,
asks the approval questions and prints warnings above the prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion, merge_completers
from prompt_toolkit.history import History
from prompt_toolkit.key_binding import KeyBindings

from co_core.agent.conversation import Conversation
from co_core.agent.frontend import Answer
from co_core.kernel import paths
from co_core.kernel.app import App, raw_core
from co_core.kernel.errors import CoError, SettingsError, print_warning
from co_core.ui.answer import Outputs
from co_core.ui.completion import MentionCompleter, complete_now
from co_core.ui.history import MaskedFileHistory
from co_core.ui.render import call_line, output_text, result_lines, shown_args, visible
from co_core.ui.signals import CtrlC, Ending
from co_core.ui.typeahead import TypeAhead

if TYPE_CHECKING:
    from rich.console import Console

    from co_core.agent.calls import ToolCallRecord
    from co_core.agent.conversation import TurnResult
    from co_core.agent.local.pull import DownloadOffer
    from co_core.agent.models import ResolvedModel
    from co_core.agent.typed import Done
    from co_core.kernel.hookspecs import SlashHandler
    from co_core.sessions.context import ContextKeeper

EXIT_WORDS = {"exit", "quit", "/exit", "/quit"}
DOUBLE_PRESS = 2.0
LINES_EVERY = 1 / 12  # s: tool lines are printed at most this often, as the spinner redraws


@dataclass
class Slash:
    name: str
    help: str
    run: Callable[[str], Any]
    plugin: str = "core"
    turn: bool = False  # ``run`` returns a TurnRequest (co_core.ui.file_commands) or text


class SlashCompleter(Completer):
    def __init__(
        self,
        commands: dict[str, Slash],
        session_ids: Callable[[str], list[tuple[str, str]]] | None = None,
    ) -> None:
        self.commands = commands
        self.session_ids = session_ids  # (id, title) pairs for ``/resume PREFIX``

    def get_completions(self, document: Any, complete_event: Any) -> Any:
        text = document.text_before_cursor
        if text.startswith("/resume ") and self.session_ids is not None:
            prefix = text[len("/resume ") :]
            if " " not in prefix.strip():
                for sid, title in self.session_ids(prefix.strip()):
                    yield Completion(sid, start_position=-len(prefix), display_meta=title)
            return
        if not text.startswith("/") or " " in text:
            return
        for name in sorted(self.commands):
            if ("/" + name).startswith(text):
                yield Completion(
                    "/" + name, start_position=-len(text), display_meta=self.commands[name].help
                )


def key_bindings() -> KeyBindings:
    """Enter sends; Alt+Enter (Esc then Enter) adds a line, so pasting and long prompts work."""
    keys = KeyBindings()

    @keys.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    keys.add("tab")(complete_now)  # never lost behind a completion typing started
    return keys


@dataclass
class TurnView:
    """Draws one turn: spinner, the streamed answer (``co_core.ui.answer``: prose as
    Markdown, what was copied from a tool as it is), a line per tool call and the first
    lines of its result."""

    console: Console
    text: str = ""
    seen: str = ""  # all text streamed in this turn (an answer Co gave itself is not)
    outputs: Outputs = field(default_factory=Outputs)  # tool output the answer may quote
    results: list[tuple[str, str]] = field(default_factory=list)  # (call line, output)
    live: Any = None
    pending: list[tuple[str, str]] = field(default_factory=list)  # (line, rich style)
    flush_scheduled: bool = False
    flushed_at: float = 0.0  # time.monotonic() of the last print of tool lines
    width: int = 0  # the terminal's, read once per start (rich asks the OS on every access)
    redraw: asyncio.TimerHandle | None = None  # the next redraw of the live region
    running: dict[str, tuple[str, float]] = field(default_factory=dict)  # call: line, since
    spinner: Any = None

    def start(self) -> None:
        from rich.live import Live
        from rich.spinner import Spinner

        self.width = self.console.width
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        # Redrawn from the event loop rather than rich's refresh thread: a thread of its own
        # would take the GIL from the turn twelve times a second.
        self.spinner = Spinner("dots", text=self._status())
        self.live = Live(
            self._render(),
            console=self.console,
            transient=True,
            refresh_per_second=12,
            auto_refresh=loop is None,
        )
        self.live.start()
        if loop is not None:
            self._redraw(loop)

    def _redraw(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.live is None:
            return
        if self.spinner is not None:
            self.spinner.update(text=self._status())  # the seconds of a call that runs
        self.live.refresh()
        self.redraw = loop.call_later(1 / self.live.refresh_per_second, self._redraw, loop)

    def _render(self) -> Any:
        if self.text:
            return self  # laid out when the live region is redrawn (``__rich__``)
        return self.spinner

    def _status(self) -> str:
        """The spinner's words: what runs (a tool call, for how long), or the model."""
        if not self.running:
            return " Co is thinking…"
        line, since = next(reversed(self.running.values()))
        seconds = f" · {time.monotonic() - since:.0f} s" if time.monotonic() - since >= 2 else ""
        more = f" (+{len(self.running) - 1} more)" if len(self.running) > 1 else ""
        room = max(20, (self.width or self.console.width) - 40)
        line = line if len(line) <= room else line[: room - 1] + "…"
        return f" running {line}{more}{seconds} · Ctrl+C cancels"

    def __rich__(self) -> Any:
        """The answer so far, laid out only when the live region is redrawn (12 times a
        second), not for every piece the model streams."""
        from co_core.ui.answer import renderable

        return renderable(self.text, self.outputs)

    def commit(self) -> None:
        from co_core.ui.answer import renderable

        self.flush()
        if self.text.strip():
            self.console.print(renderable(self.text, self.outputs))
        self.text = ""
        if self.live is not None:
            self.live.update(self._render())

    def stop(self) -> None:
        self.flush()
        if self.redraw is not None:
            self.redraw.cancel()
            self.redraw = None
        if self.live is not None:
            self.live.stop()
            self.live = None

    def pause(self) -> None:
        """Stop drawing so the user can answer a question; ``start`` resumes."""
        self.commit()
        self.stop()

    def _line(self, text: str, style: str) -> None:
        """Queue one plain line: no markup (tool output may contain brackets), control
        characters written out (tool output may contain escape sequences).

        The first line after a quiet spell is printed as soon as the event loop is free;
        later ones wait until ``LINES_EVERY`` has passed since the last print. Each print
        redraws the live region, so a fast model's burst of calls and results costs a few
        redraws, not one per line, and no line waits long enough to notice.
        """
        self.pending.append((visible(text[: self.width or self.console.width]), style))
        if not self.flush_scheduled:
            self.flush_scheduled = True
            loop = asyncio.get_running_loop()
            wait = self.flushed_at + LINES_EVERY - time.monotonic()
            if wait > 0:
                loop.call_later(wait, self.flush)
            else:
                loop.call_soon(self.flush)

    def flush(self) -> None:
        """Print the queued lines as ready-made segments (rich's text layout is not needed
        for one-line, unwrapped text, and costs ten times as much)."""
        self.flush_scheduled = False
        if self.pending:
            from rich.segment import Segment, Segments

            self.flushed_at = time.monotonic()
            lines, self.pending = self.pending, []
            segments: list[Segment] = []
            for text, style in lines:
                segments += (Segment(text, self.console.get_style(style)), Segment.line())
            self.console.print(Segments(segments), highlight=False, no_wrap=True, crop=False)

    async def on_event(self, event: Any) -> None:
        """The model's text as it streams (tool calls come through ``show``)."""
        kind = getattr(event, "event_kind", "")
        if kind == "part_start" and getattr(event.part, "part_kind", "") == "text":
            added = event.part.content
        elif kind == "part_delta" and getattr(event.delta, "part_delta_kind", "") == "text":
            added = event.delta.content_delta
        else:
            return
        self.text += added
        self.seen += added
        if self.live is not None:
            self.live.update(self._render())

    def restart_clock(self, call_id: str) -> None:
        """A call answered at the approval prompt: its seconds count from now."""
        if call_id in self.running:
            self.running[call_id] = (self.running[call_id][0], time.monotonic())

    def show(self, record: ToolCallRecord) -> None:
        """One line when a call is resolved (the arguments it runs with, as the approval
        shows them); when it ends, the first lines of its result (after the call's line, if
        it ended before it was resolved)."""
        line = "⚙ " + call_line(record.tool, shown_args(record))
        if not record.ended or not record.resolved:
            if record.from_text:
                self.text = ""  # the JSON the model wrote was the call itself
            if self.text:
                self.commit()
            self._line(line, "cyan")
            if not record.ended:
                self.running[record.call_id] = (visible(line[2:]), time.monotonic())
                return
        self.running.pop(record.call_id, None)
        colour = "dim" if record.status == "ok" else "yellow"
        first, *rest = result_lines(record.result, record.status)
        self._line("  → " + first, colour)
        for more in rest:
            self._line("    " + more, colour)
        if record.status in ("ok", "retry", "error"):
            text = output_text(record.result)
            self.outputs.add(text)
            self.results.append((line, text))


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _history() -> History:
    """The input history: a file in the data directory, or (it cannot be written: a
    read-only home) this session's lines only; the conversation says so once."""
    if paths.writable("data") is not None:
        from prompt_toolkit.history import InMemoryHistory

        return InMemoryHistory()
    return MaskedFileHistory(str(paths.data_dir() / "history"))


class StartupFailed(Exception):
    """Settings turned out bad after the prompt appeared (``Repl.fatal`` says how)."""


class Repl:
    """``co chat``'s loop, and the frontend of its conversation."""

    interactive = True  # approval questions are asked at the prompt

    def __init__(self, app: App, console: Console | None = None, **options: Any) -> None:
        self.app = app
        self.conversation = Conversation(app, frontend=self, **options)
        self._console = console
        self.notes: list[str] = []  # said under the banner (ignored command files)
        self.commands = self._commands()
        self.prompt: PromptSession[str] = PromptSession(
            history=_history(),
            completer=merge_completers(
                [SlashCompleter(self.commands, self._session_ids), MentionCompleter(app.cwd)]
            ),
            complete_while_typing=True,
            key_bindings=key_bindings(),
            multiline=False,
        )
        self.ask_prompt: PromptSession[str] | None = None
        self.view: TurnView | None = None
        self.last_results: list[tuple[str, str]] = []  # the last turn's calls, for /output
        self.last_interrupt = 0.0
        self.marker_texts = ["yolo"] if self.conversation.yolo else []
        self.fatal: BaseException | None = None
        self.event_loop: asyncio.AbstractEventLoop | None = None
        self.ending = False  # SIGTERM/SIGHUP: leave after what runs is cancelled
        self.ctrl_c = CtrlC()  # where Ctrl+C goes while no prompt reads the keyboard
        self.typeahead = TypeAhead()  # keys typed while Co is busy, for the next prompt
        self.offered: dict[str, Path | CoError | None] = {}  # downloads asked about
        self.turn_task: asyncio.Future[Any] | None = None  # the running turn, Ctrl+C cancels it
        self.downloading: threading.Event | None = None  # set it to stop the download

    @property
    def console(self) -> Console:
        """rich is imported on first output, not in front of the prompt."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False)
        return self._console

    # -- slash commands ------------------------------------------------------------------

    def _commands(self) -> dict[str, Slash]:
        commands = {
            "help": Slash("help", "list commands and keys", self._help),
            "clear": Slash("clear", "forget the conversation so far", self._clear),
            "model": Slash("model", "show or switch the model: /model NAME", self._model),
            "tools": Slash("tools", "tools with plugin, risk and permission key", self._tools),
            "output": Slash(
                "output", "the full output of the last turn's tool calls: /output [N]", self._output
            ),
            "cost": Slash("cost", "tokens and cost of this session", self._cost),
            "context": Slash("context", "how full the model's context is", self._context),
            "compact": Slash("compact", "summarise older turns to free context", self._compact),
            "sessions": Slash("sessions", "earlier sessions in this folder", self._sessions),
            "resume": Slash("resume", "continue a saved session: /resume ID", self._resume),
            "memory": Slash("memory", "show memory; /memory add TEXT, /memory edit", self._memory),
            "init": Slash(
                "init", "draft this folder's AGENTS.md (asks before writing)", self._init, turn=True
            ),
            "exit": Slash("exit", "leave Co", lambda arg: None),
        }
        for name, entry in self.app.host.named("register_slash_commands", "slash command").items():
            if name in commands:
                self.app.warn(f"plugin {entry.plugin!r} slash command /{name} skipped: built in")
                continue
            commands[name] = Slash(
                name,
                str(entry.options.get("help", "")),
                partial(self._plugin_slash, entry.value),
                entry.plugin,
            )
        self._own_commands(commands)
        return commands

    def _own_commands(self, commands: dict[str, Slash]) -> None:
        """The user's and a trusted project's command files (co_core.agent.commands)."""
        from co_core.agent.commands import load_commands

        try:
            found = load_commands(self.app.cwd)
        except OSError as exc:  # an unreadable folder: one line, the chat goes on
            self.notes.append(f"command files not read: {exc}")
            return
        self.notes += found.notices
        for name, command in found.found.items():
            if name in commands:
                self.notes.append(f"{command.path}: skipped: /{name} is a command already")
                continue
            commands[name] = Slash(
                name, command.help, partial(self._own, command), command.scope, turn=True
            )

    def _own(self, command: Any, arg: str) -> Any:
        from co_core.ui.file_commands import own

        return own(self.conversation, command, arg)

    def _memory(self, arg: str) -> str:
        from co_core.ui.file_commands import memory

        return memory(self.conversation, arg)

    def _init(self, arg: str) -> Any:
        from co_core.ui.file_commands import init

        return init(self.conversation, arg)

    def _plugin_slash(self, handler: SlashHandler, arg: str) -> Any:
        return handler(arg, self.conversation.deps)

    def _help(self, arg: str) -> str:
        lines = [f"/{c.name:<10} {c.help}" for c in self.commands.values()]
        lines += [
            "",
            "Enter sends; Esc then Enter adds a line.",
            "Ctrl+C cancels a running turn; twice at the prompt exits. Ctrl+D, exit, quit also exit.",
        ]
        return "\n".join(lines)

    def _clear(self, arg: str) -> str:
        self.conversation.clear()
        return "Conversation cleared."

    def _model(self, arg: str) -> str:
        if not arg.strip():
            return f"model: {self.conversation.model_label}"
        return f"model: {self.conversation.set_model(arg.strip())}"

    def _output(self, arg: str) -> str:
        """What the last turn's calls returned, in full and as it is (the turn showed the
        first lines of each)."""
        results = self.last_results
        if not results:
            return "no tool output in the last turn"
        if arg.strip():
            try:
                chosen = [results[int(arg) - 1]] if int(arg) >= 1 else []
            except (ValueError, IndexError):
                chosen = []
            if not chosen:
                return f"usage: /output N, with N from 1 to {len(results)} (the call's number)"
            results = chosen
        from co_core.ui.answer import as_shown

        return "\n\n".join(f"{line}\n{as_shown(text)}" for line, text in results)

    def _context(self, arg: str) -> Any:
        """The context window's use and the tool budget, both for the last request as it
        was sent (counted by one counter, the fitting's)."""
        co = self.conversation.ready()
        keeper = self.conversation.context
        if keeper is None:
            return "context tracking is not available"
        model = self.conversation.resolved_model().model

        async def shown() -> str:  # counted on the loop: the tokenizer may be a server away
            text = await keeper.context_text(self.conversation.history, model)
            text = f"{text}\n{co.toolbox.describe(await keeper.carried(model))}"
            files = self.conversation.files
            if files is None:
                return text
            counter = keeper.counting.counter(model)
            return "\n".join([text, *await files.briefing.context_lines(counter.count)])

        return shown()

    def _compact(self, arg: str) -> Any:
        self.conversation.ready()
        if self.conversation.context is None:
            return "compaction is not available"
        return self._compact_now()

    async def _compact_now(self) -> str:
        """Summarise older turns, showing what is being summarised and how far the model
        got; then say what it gained (or, as plain text, why nothing was compacted)."""
        from co_core.sessions.compact import NothingToCompact

        conversation = self.conversation
        keeper = conversation.context
        assert keeper is not None
        model = conversation.resolved_model()
        try:
            return await self._compacted(keeper, model)
        except NothingToCompact as exc:  # an outcome, not a failure: said as plain text
            return str(exc)

    async def _compacted(self, keeper: ContextKeeper, model: ResolvedModel) -> str:
        from rich.live import Live

        conversation = self.conversation
        plan = await keeper.plan(conversation.history, model.model)
        before = await keeper.usage(conversation.history, model.model)
        what = (
            f"Compacting: {model.label} summarises {plan.turns} older turn"
            f"{'' if plan.turns == 1 else 's'} ({plan.tokens:,} tokens; the last "
            f"{plan.kept_turns} stay word for word)"
        )
        from co_core.sessions.context import compact_report
        from co_core.ui.progress import Working

        working = Working(what, counting="characters of summary written")
        with Live(working, console=self.console, transient=True, refresh_per_second=8):
            result = await keeper.compact(
                conversation.history, model.model, conversation.recorder, working.wrote
            )
        conversation.history = result.messages
        after = await keeper.usage(conversation.history, model.model)
        summary = await keeper.tokens(result.summary, model.model)
        return compact_report(plan, summary, before, after, working.seconds)

    def _sessions(self, arg: str) -> str:
        from co_core.sessions.recorder import sessions_text
        from co_core.sessions.store import SessionStore

        with SessionStore() as store:
            return sessions_text(store, self.app.cwd)

    def _resume(self, arg: str) -> str:
        if not arg.strip():
            return "usage: /resume ID (Tab completes; /sessions lists them)"
        return self.conversation.switch_to(arg.strip())

    def _session_ids(self, prefix: str) -> list[tuple[str, str]]:
        try:
            from co_core.sessions.recorder import resume_completions
            from co_core.sessions.store import SessionStore

            with SessionStore() as store:
                return resume_completions(store, prefix)
        except Exception:  # completion must never break typing
            return []

    def _cost(self, arg: str) -> str:
        from co_core.telemetry.usage import SessionUsage, cost_text

        self.conversation.ready()
        return cost_text(self.conversation.usage or SessionUsage())

    def _tools(self, arg: str) -> str:
        co = self.conversation.ready()
        specs = co.specs
        if not specs:
            return "No tools: install plugins (co plugins)."
        ready = co.toolbox.refresh()
        lines = [
            f"{s.name:<22} {s.plugin:<10} {s.risk or '-':<6} {s.permission}"
            + ("" if ready.blocks(s) is None else "  (not offered)")
            for s in specs.values()
        ]
        setup = ready.lines()
        if setup:
            lines += ["", "Not offered to the model until set up:", *setup]
        return "\n".join(lines)

    async def slash(self, line: str) -> None:
        """Run a slash command in a worker thread (it may wait for the agent to be ready);
        one that returns a coroutine (``/compact`` asking the model) is awaited here, on the
        chat's own event loop, where the model's HTTP client lives."""
        name, _, arg = line[1:].partition(" ")
        command = self.commands.get(name)
        if command is None:
            self.error(f"unknown command /{name}", "/help lists them")
            return
        if command.turn:
            await self._slash_turn(command, arg)
            return
        task = asyncio.ensure_future(self._slash_result(command, arg))
        try:
            with self.ctrl_c.to(task.cancel):  # Ctrl+C: back to the prompt
                out = await task
        except asyncio.CancelledError:
            self.console.print("[yellow]Cancelled.[/yellow]", markup=True)
            return
        except Exception as exc:
            from co_core.ui.failures import describe

            self.error(
                str(describe(exc, self.conversation.model_label, self.conversation.model_object))
            )
            return
        if out:
            shown = visible(out) if isinstance(out, str) else out
            self.console.print(shown, markup=False, highlight=False, soft_wrap=True)

    async def _slash_turn(self, command: Slash, arg: str) -> None:
        """A slash command that asks the model: its words run as a turn."""
        from co_core.ui.failures import describe
        from co_core.ui.file_commands import TurnRequest

        try:
            asked = await asyncio.to_thread(command.run, arg)
        except Exception as exc:
            self.error(str(describe(exc, self.conversation.model_label, None)))
            return
        if not isinstance(asked, TurnRequest):
            if asked:
                self.console.print(asked, markup=False, highlight=False, soft_wrap=True)
            return
        for note in asked.notes:
            self._plain([note], "dim")
        if not asked.memory:
            with contextlib.suppress(Exception):  # a failure is the turn's to report
                await asyncio.to_thread(self.conversation.ready)  # the session's files open
        files = self.conversation.files
        withheld = (
            files.briefing.without_memory(not asked.memory) if files else contextlib.nullcontext()
        )
        with withheld:
            result = await self.turn(asked.text, tools=asked.tools, mentions=asked.mentions)
        if result is not None and asked.then is not None:
            try:
                said = await asked.then(result)
            except Exception as exc:
                self.error(str(describe(exc, self.conversation.model_label, None)))
                return
            if said:
                self.console.print(said, markup=False, highlight=False, soft_wrap=True)

    async def bang(self, command: str) -> None:
        """``!cmd``: run it in the sandbox, unasked (the user typed it); show its output."""
        from co_core.ui.bang import run
        from co_core.ui.failures import describe

        if not command:
            self.error("nothing to run", "!ls runs ls in the workspace's sandbox")
            return
        task = asyncio.ensure_future(self._bang(command, run))
        try:
            with self.ctrl_c.to(task.cancel):  # Ctrl+C: the command is killed
                done = await task
        except asyncio.CancelledError:
            self.console.print("[yellow]Cancelled.[/yellow]", markup=True)
            return
        except Exception as exc:
            self.error(str(describe(exc, self.conversation.model_label, None)))
            return
        style = "" if done.ok else "yellow"
        self._plain(
            [visible(line) for line in (done.text.rstrip() or "(no output)").splitlines()], style
        )
        if not done.ok and done.status != "retry":
            self._plain([f"not run ({done.status})"], "yellow")

    async def _bang(self, command: str, run: Any) -> Done:
        await asyncio.to_thread(self.conversation.ready)
        self._plain(["$ " + visible(command, one_line=True)], "cyan")
        result: Done = await run(self.conversation, command)
        return result

    @staticmethod
    async def _slash_result(command: Slash, arg: str) -> Any:
        out = await asyncio.to_thread(command.run, arg)
        return (await out) if inspect.isawaitable(out) else out

    # -- output --------------------------------------------------------------------------

    def error(self, message: str, hint: str = "") -> None:
        text = f"[red]error:[/red] {_escape(visible(message))}"
        if hint:
            text += f" [dim](hint: {_escape(visible(hint))})[/dim]"
        self.console.print(text, markup=True, highlight=False, soft_wrap=True)

    # -- approvals -----------------------------------------------------------------------

    async def _ask(self, question: str) -> str:
        """A question asked while something runs: Ctrl+C is a key here (KeyboardInterrupt),
        and SIGINT stays with what runs (``handle_sigint=False``, see ``CtrlC``)."""
        self.typeahead.drain()  # typed before the question: for the chat, not an answer
        if self.ask_prompt is None:
            self.ask_prompt = PromptSession()  # answers stay out of the input history
        answer: str = await self.ask_prompt.prompt_async(question, handle_sigint=False)
        return answer.strip()

    def _plain(self, lines: list[str], style: str = "") -> None:
        from rich.text import Text

        shown = "\n".join(visible(line) for line in lines)
        self.console.print(Text(shown, style=style), highlight=False, soft_wrap=True)

    async def announce(self, records: Sequence[ToolCallRecord]) -> None:
        """Several calls of one model response need approval: list them before asking."""
        from co_core.ui.approval import batch_lines

        if self.view is not None:
            self.view.pause()
        try:
            self._plain(batch_lines(records), "yellow")
        finally:
            if self.view is not None:
                self.view.start()

    async def approve(self, record: ToolCallRecord) -> Answer:
        """Ask about one call: yes once, for the session, always here, or no (with a reason).

        The call is shown whole, page by page when it is taller than the terminal; the
        question comes after the last page, so a yes is given to all of it."""
        from co_core.ui.approval import (
            QUESTION,
            REASON_QUESTION,
            describe,
            page_question,
            pages,
            parse_answer,
            parse_page_answer,
        )

        if self.view is not None:
            self.view.pause()
        try:
            lines = describe(record)
            size = self.console.size
            shown = pages(["? " + lines[0], *lines[1:]], size.width, size.height - 3)
            try:
                answer: Answer | None = None
                for number, page in enumerate(shown, 1):
                    if number == 1:
                        self._plain(page[:1], "bold yellow")
                        page = page[1:]
                    if page:
                        self._plain(page)
                    if number < len(shown):
                        answer = parse_page_answer(
                            await self._ask(page_question(number, len(shown)))
                        )
                        if answer is not None:
                            break
                else:
                    answer = parse_answer(await self._ask(QUESTION))
                if answer is None or (not answer.approved and not answer.reason):
                    answer = Answer(False, await self._ask(REASON_QUESTION))
            except EOFError:  # Ctrl+D: no answer is a no
                return Answer(False, "no answer at the approval prompt (Ctrl+D)")
            except KeyboardInterrupt:  # Ctrl+C cancels the turn, as it does anywhere in it
                self._cancel_turn()
                raise asyncio.CancelledError() from None
        finally:
            if self.view is not None:
                self.view.restart_clock(record.call_id)  # it runs from now, not from the question
                self.view.start()
        return answer

    def _cancel_turn(self) -> None:
        if self.turn_task is not None:
            self.turn_task.cancel()

    def show(self, record: ToolCallRecord) -> None:
        if self.view is not None:
            self.view.show(record)

    # -- the prompt line -----------------------------------------------------------------

    def markers(self) -> list[str]:
        """Warnings that stay in the prompt line: --yolo, and what plugins flag (no sandbox)."""
        found = ["yolo"] if self.conversation.yolo else []
        for _plugin, text in self.app.host.call_each("prompt_markers", settings=self.app.settings):
            if isinstance(text, str) and text.strip():
                found.append(text.strip()[:24])
        return found

    def prompt_text(self) -> Any:
        from prompt_toolkit.formatted_text import FormattedText

        parts = [("bold fg:ansired", f"[{marker}] ") for marker in self.marker_texts]
        return FormattedText([*parts, ("", "co> ")])

    def settings_checked(self, error: BaseException | None) -> None:
        """Called once settings are validated (or not), from the background thread."""
        if error is not None:
            self.fatal = error
        else:
            self.marker_texts = self.markers()  # plugins' markers need validated settings
        if self.event_loop is not None:
            self.event_loop.call_soon_threadsafe(self._refresh)

    def _refresh(self) -> None:
        if self.prompt.app.is_running:
            if self.fatal is not None:
                self.prompt.app.exit(exception=StartupFailed())
            else:
                self.prompt.app.invalidate()

    def warn(self, message: str) -> None:
        """Warnings from any thread, printed above the prompt line rather than through it."""
        from co_core.ui.failures import in_cos_words

        # a model that cannot start: its library's advice in Co's words; it may quote an
        # MCP server or a plugin
        shown = visible(in_cos_words(message))
        self._above_prompt(lambda: print_warning(shown))

    def notice(self, message: str) -> None:
        """News from any thread (what ``auto`` chose, the local model loading), dim, above
        the prompt line, or above the spinner when a turn is waiting for it."""
        from prompt_toolkit import print_formatted_text
        from prompt_toolkit.formatted_text import FormattedText

        message = visible(message)
        view = self.view
        if view is not None and view.live is not None:
            from rich.text import Text

            self.console.print(Text(message, style="dim"), soft_wrap=True)
            return
        self._above_prompt(
            lambda: print_formatted_text(FormattedText([("fg:ansibrightblack", message)]))
        )

    def _above_prompt(self, show: Callable[[], None]) -> None:
        from prompt_toolkit.application import run_in_terminal

        loop = self.event_loop
        if loop is None or loop.is_closed() or not self.prompt.app.is_running:
            with contextlib.suppress(OSError):  # a closed terminal
                show()
        else:
            loop.call_soon_threadsafe(run_in_terminal, show)

    # -- downloads -----------------------------------------------------------------------

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        """Called from the thread that starts the model: the question and the download's
        progress take the terminal for a moment (the prompt, and what was typed, come back)."""
        loop = self.event_loop
        if loop is None or loop.is_closed() or self.ending:
            return None
        if threading.current_thread() is threading.main_thread():
            return None  # the loop runs here: it cannot also ask
        if offer.name in self.offered:  # asked once a session: the answer, or the failure
            earlier = self.offered[offer.name]
            if isinstance(earlier, CoError):
                raise earlier
            return earlier
        future = asyncio.run_coroutine_threadsafe(self._offer(offer), loop)
        try:
            taken = future.result()
        except CoError as exc:  # the download failed or was stopped (it resumes next time)
            self.offered[offer.name] = exc
            raise
        except BaseException:  # cancelled: Co is ending
            return None
        self.offered[offer.name] = taken
        return taken

    async def _offer(self, offer: DownloadOffer) -> Path | None:
        from prompt_toolkit.application import in_terminal

        try:  # its size, for the question (a model Co offers by name has it pinned)
            offer = await asyncio.to_thread(offer.sized)
        except CoError as exc:
            self.warn(f"{exc}; cannot offer to download {offer.title}")
            return None
        view = self.view
        if view is not None:
            view.pause()
        try:
            async with in_terminal():
                while True:
                    try:
                        answer = await self._ask(offer.question)
                    except (KeyboardInterrupt, EOFError):
                        answer = "n"
                    word = answer.strip().lower()
                    if word in ("y", "yes"):
                        return await self._download(offer)
                    if word in ("", "n", "no"):
                        return None
                    # typed for the chat as the question appeared: kept for it, not a "no"
                    self._keep_for_chat(answer)
                    shown = answer if len(answer) <= 40 else answer[:39] + "…"
                    self._plain([f"(“{visible(shown)}” is kept for the chat) y or n?"], "dim")
        finally:
            self._keep_for_chat("")
            if view is not None and self.view is view:
                view.start()

    def _keep_for_chat(self, text: str) -> None:
        """Text typed for the conversation while a question had the keyboard: back into
        the ``co>`` line being typed, or kept for the next one."""
        self.typeahead.keep(text)
        if self.prompt.app.is_running:
            from prompt_toolkit.document import Document

            added = self.typeahead.take()
            if added:
                buffer = self.prompt.default_buffer
                joined = f"{buffer.text} {added}" if buffer.text else added
                buffer.set_document(Document(joined, len(joined)), bypass_readonly=True)

    async def _download(self, offer: DownloadOffer) -> Path:
        """Download with a progress bar; Ctrl+C stops it (``PullCancelled``; the next start
        resumes it). A failure is raised: the caller says what Co does instead."""
        from co_core.ui.progress import download_bar

        self.downloading = cancel = threading.Event()
        try:
            with (
                self.ctrl_c.to(cancel.set),
                download_bar(self.console, offer.title, offer.size) as update,
            ):
                path = await asyncio.to_thread(offer.run, update, cancel)
        finally:
            self.downloading = None
        self.console.print(f"Downloaded {path.name} to {path.parent}.", highlight=False)
        return path

    # -- ending on a signal --------------------------------------------------------------

    def end(self) -> None:
        """SIGTERM or SIGHUP: stop a download or a model still loading, then leave (the main
        task is cancelled by :class:`~co_core.ui.signals.Ending`)."""
        self.ending = True
        if self.downloading is not None:
            self.downloading.set()
        self.conversation.abort()

    def banner(self, model: str | None, resumed: str | None) -> None:
        """The first lines, printed without rich (its import would delay the prompt)."""
        from prompt_toolkit import print_formatted_text
        from prompt_toolkit.formatted_text import FormattedText

        configured = next((v for v in raw_core("model", self.app.cwd) if isinstance(v, str)), "")
        lines = []
        if self.conversation.yolo:
            text = "--yolo: every tool call runs without asking (writes, sends, commands)."
            lines.append([("bold fg:ansired", text)])
        label = model or configured or "auto"
        lines.append(
            [("bold", "Co"), ("", f" · model: {label} · /help for commands · Ctrl+D to exit")]
        )
        if label.partition(":")[0] == "local":  # started in the background: say so now
            lines.append([("fg:ansibrightblack", "starting the local model in the background…")])
        if resumed:
            lines.append([("", resumed)])
        lines += [[("fg:ansiyellow", note)] for note in self.notes]
        for line in lines:
            print_formatted_text(FormattedText(line))

    # -- the loop ------------------------------------------------------------------------

    async def turn(
        self, text: str, tools: Sequence[str] | None = None, mentions: bool = True
    ) -> TurnResult | None:
        """One turn; its result, or None when it failed or was cancelled (said here)."""
        from co_core.ui.failures import describe

        self.view = TurnView(self.console)
        self.view.start()
        self.turn_task = task = asyncio.ensure_future(self._run(text, tools, mentions))
        result: TurnResult | None = None
        try:
            with self.ctrl_c.to(task.cancel), self.typeahead.quiet():
                result = await task
        except asyncio.CancelledError:
            self.view.stop()
            self.console.print("[yellow]Cancelled.[/yellow]", markup=True)
        except Exception as exc:
            self.view.stop()
            failure = describe(exc, self.conversation.model_label, self.conversation.model_object)
            self.error(failure.message, failure.hint)
        finally:
            self.turn_task = None
            if self.view is not None:
                self.view.commit()
                self.view.stop()
                self.last_results = self.view.results
            self.view = None
        return result

    async def _run(
        self, text: str, tools: Sequence[str] | None = None, mentions: bool = True
    ) -> TurnResult:
        from co_core.agent.mentions import expand

        await asyncio.to_thread(self.conversation.ready)
        if mentions:  # @path: the file's text joins the message
            text = await expand(self.conversation, text)
        await asyncio.to_thread(self.conversation.resolved_model)
        assert self.view is not None
        result = await self.conversation.run_turn(text, self.view.on_event, tools)
        if result.output.strip() and result.output.strip() not in self.view.seen:
            # An answer Co gave in the model's place (a small model's that the result did
            # not bear out): it replaces what the model streamed, still on screen unprinted,
            # as it did in the conversation; never pasted on after it.
            self.view.text = result.output
        if self.conversation.last_usage is not None:
            from co_core.telemetry.usage import format_usage_line

            self.view.commit()  # the answer first, then its cost
            line = format_usage_line(self.conversation.last_usage, self.conversation.usage)
            self.view.pending.append((line, "dim"))
            if self.conversation.note:
                self.view.pending.append((self.conversation.note, "dim"))
            self.view.flush()
        return result

    def _start_once(
        self,
        loop: asyncio.AbstractEventLoop,
        start: Callable[[Callable[[BaseException | None], None]], None],
    ) -> None:
        loop.call_soon(start, self.settings_checked)

    async def loop(
        self, prepare: Callable[[Callable[[BaseException | None], None]], None] | None = None
    ) -> None:
        """Read and run lines until the user leaves; ``prepare`` starts the background work."""
        self.event_loop = loop = asyncio.get_running_loop()
        start = prepare
        while not self.ending:
            if self.fatal is not None:
                raise StartupFailed()
            try:
                # The background work starts once the prompt is drawn (``pre_run`` comes just
                # before the first redraw; ``call_soon`` runs after it), so the import-heavy
                # thread never competes with the first render for the GIL.
                pre_run = partial(self._start_once, loop, start) if start else None
                line = await self.prompt.prompt_async(
                    self.prompt_text, pre_run=pre_run, default=self.typeahead.take()
                )
                start = None
            except KeyboardInterrupt:
                now = time.monotonic()
                if now - self.last_interrupt <= DOUBLE_PRESS:
                    return
                self.last_interrupt = now
                self.console.print("[dim]Press Ctrl+C again to exit.[/dim]", markup=True)
                continue
            except (EOFError, asyncio.CancelledError):
                return
            self.last_interrupt = 0.0
            text = line.strip()
            if not text:
                continue
            if text.lower() in EXIT_WORDS:
                return
            if text.startswith("/"):
                await self.slash(text)
                continue
            if text.startswith("!"):
                await self.bang(text[1:].strip())
                continue
            await self.turn(text)


def run_chat(
    app: App,
    *,
    model: str | None,
    base_url: str | None,
    yolo: bool,
    resume: str | None = None,
    trace_content: bool = False,
) -> int:
    repl = Repl(
        app,
        model_spec=model,
        base_url=base_url,
        yolo=yolo,
        resume=resume,
        trace_content=trace_content,
    )
    conversation = repl.conversation
    app.warn = repl.warn
    if model is not None:
        from co_core.kernel import modelspec
        from co_core.kernel.providers import Providers

        try:
            modelspec.check(model, Providers.of(app.host))  # a typo: one line, first
        except ValueError as exc:
            repl.error(f"--model {model!r}: {exc}")
            return 2
    try:
        resumed = conversation.open_saved()  # an unknown id: one line, before the prompt
    except CoError as exc:
        repl.error(str(exc))
        return 2 if isinstance(exc, SettingsError) else 1
    repl.banner(model, resumed)
    code = 0
    with Ending(repl.end) as ending:
        try:
            asyncio.run(ending.run(repl.loop(conversation.prepare_in_background)))
        except (KeyboardInterrupt, asyncio.CancelledError):
            pass
        except StartupFailed:  # bad settings: one line naming the file and key, exit 2
            repl.error(str(repl.fatal))
            code = 2
        except OSError as exc:
            if exc.errno not in (errno.EIO, errno.EBADF):
                raise
            code = 128 + signal.SIGHUP  # the terminal is gone: as its hang-up would end Co
        finally:
            problems = conversation.close()
            with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
                for problem in problems:
                    problem = _escape(visible(problem))
                    repl.console.print(f"[yellow]warning:[/yellow] {problem}", markup=True)
                repl.console.print("Session ended.")
    return ending.code if ending.signum is not None else code
