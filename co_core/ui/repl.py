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
import inspect
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

from co_core.agent.conversation import Conversation
from co_core.agent.frontend import Answer
from co_core.kernel import paths
from co_core.kernel.app import App, raw_core
from co_core.kernel.errors import CoError, SettingsError, print_warning
from co_core.ui.render import call_line, result_line, visible

if TYPE_CHECKING:
    from rich.console import Console

    from co_core.agent.calls import ToolCallRecord
    from co_core.kernel.hookspecs import SlashHandler

EXIT_WORDS = {"exit", "quit", "/exit", "/quit"}
DOUBLE_PRESS = 2.0
LINES_EVERY = 1 / 12  # s: tool lines are printed at most this often, as the spinner redraws


@dataclass
class Slash:
    name: str
    help: str
    run: Callable[[str], Any]
    plugin: str = "core"


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

    return keys


@dataclass
class TurnView:
    """Draws one turn: spinner, streamed Markdown, one line per tool call and result."""

    console: Console
    text: str = ""
    seen: str = ""  # all text streamed in this turn (an answer Co gave itself is not)
    live: Any = None
    pending: list[tuple[str, str]] = field(default_factory=list)  # (line, rich style)
    flush_scheduled: bool = False
    flushed_at: float = 0.0  # time.monotonic() of the last print of tool lines
    width: int = 0  # the terminal's, read once per start (rich asks the OS on every access)
    redraw: asyncio.TimerHandle | None = None  # the next redraw of the live region

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
        self.live = Live(
            Spinner("dots", text=" Co is thinking…"),
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
        self.live.refresh()
        self.redraw = loop.call_later(1 / self.live.refresh_per_second, self._redraw, loop)

    def _render(self) -> Any:
        from rich.markdown import Markdown
        from rich.spinner import Spinner

        return Markdown(self.text) if self.text else Spinner("dots", text=" Co is thinking…")

    def commit(self) -> None:
        from rich.markdown import Markdown

        self.flush()
        if self.text.strip():
            self.console.print(Markdown(self.text))
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

    def show(self, record: ToolCallRecord) -> None:
        """One line when a call is seen, one when it ends."""
        if not record.ended:
            if record.call_id.startswith("text-"):
                self.text = ""  # the JSON the model wrote was the call itself
            if self.text:
                self.commit()
            self._line("⚙ " + call_line(record.tool, dict(record.call.args)), "cyan")
        else:
            colour = "dim" if record.status == "ok" else "yellow"
            self._line("  → " + result_line(record.result, record.status), colour)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


class StartupFailed(Exception):
    """Settings turned out bad after the prompt appeared (``Repl.fatal`` says how)."""


class Repl:
    """``co chat``'s loop, and the frontend of its conversation."""

    interactive = True  # approval questions are asked at the prompt

    def __init__(self, app: App, console: Console | None = None, **options: Any) -> None:
        self.app = app
        self.conversation = Conversation(app, frontend=self, **options)
        self._console = console
        self.commands = self._commands()
        history = paths.ensure_dir(paths.data_dir()) / "history"
        self.prompt: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            completer=SlashCompleter(self.commands, self._session_ids),
            complete_while_typing=True,
            key_bindings=key_bindings(),
            multiline=False,
        )
        self.ask_prompt: PromptSession[str] | None = None
        self.view: TurnView | None = None
        self.last_interrupt = 0.0
        self.marker_texts = ["yolo"] if self.conversation.yolo else []
        self.fatal: BaseException | None = None
        self.event_loop: asyncio.AbstractEventLoop | None = None

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
            "cost": Slash("cost", "tokens and cost of this session", self._cost),
            "context": Slash("context", "how full the model's context is", self._context),
            "compact": Slash("compact", "summarise older turns to free context", self._compact),
            "sessions": Slash("sessions", "earlier sessions in this folder", self._sessions),
            "resume": Slash("resume", "continue a saved session: /resume ID", self._resume),
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
        return commands

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

    def _context(self, arg: str) -> str:
        self.conversation.ready()
        if self.conversation.context is None:
            return "context tracking is not available"
        model = self.conversation.resolved_model().model
        text = self.conversation.context.context_text(self.conversation.history, model)
        return f"{text}\n{self.conversation.ready().toolbox.describe()}"

    def _compact(self, arg: str) -> Any:
        self.conversation.ready()
        if self.conversation.context is None:
            return "compaction is not available"
        return self._compact_now()

    async def _compact_now(self) -> str:
        conversation = self.conversation
        assert conversation.context is not None
        result = await conversation.context.compact(
            conversation.history, conversation.resolved_model().model, conversation.recorder
        )
        conversation.history = result.messages
        return f"Compacted: {result.replaced} older messages summarised."

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
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self._slash_result(command, arg))
        loop.add_signal_handler(signal.SIGINT, task.cancel)  # Ctrl+C: back to the prompt
        try:
            out = await task
        except asyncio.CancelledError:
            self.console.print("[yellow]Cancelled.[/yellow]", markup=True)
            return
        except Exception as exc:
            from co_core.ui.failures import describe

            self.error(str(describe(exc, self.conversation.model_label)))
            return
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        if out:
            self.console.print(out, markup=False, highlight=False, soft_wrap=True)

    @staticmethod
    async def _slash_result(command: Slash, arg: str) -> Any:
        out = await asyncio.to_thread(command.run, arg)
        return (await out) if inspect.isawaitable(out) else out

    # -- output --------------------------------------------------------------------------

    def error(self, message: str, hint: str = "") -> None:
        text = f"[red]error:[/red] {_escape(message)}"
        if hint:
            text += f" [dim](hint: {_escape(hint)})[/dim]"
        self.console.print(text, markup=True, highlight=False, soft_wrap=True)

    # -- approvals -----------------------------------------------------------------------

    async def _ask(self, question: str) -> str:
        if self.ask_prompt is None:
            self.ask_prompt = PromptSession()  # answers stay out of the input history
        answer: str = await self.ask_prompt.prompt_async(question)
        return answer.strip()

    def _plain(self, lines: list[str], style: str = "") -> None:
        from rich.text import Text

        self.console.print(Text("\n".join(lines), style=style), highlight=False, soft_wrap=True)

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
        """Ask about one call: yes once, for the session, always here, or no (with a reason)."""
        from co_core.ui.approval import QUESTION, REASON_QUESTION, describe, parse_answer

        if self.view is not None:
            self.view.pause()
        try:
            lines = describe(record)
            self._plain(["? " + lines[0]], "bold yellow")
            self._plain(lines[1:])
            try:
                answer = parse_answer(await self._ask(QUESTION))
                if answer is None:
                    answer = Answer(False, await self._ask(REASON_QUESTION))
            except (KeyboardInterrupt, EOFError):
                return Answer(False, "cancelled at the approval prompt")
        finally:
            if self.view is not None:
                self.view.start()
        return answer

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
        from prompt_toolkit.application import run_in_terminal

        def show() -> None:
            print_warning(message)

        loop = self.event_loop
        if loop is None or loop.is_closed() or not self.prompt.app.is_running:
            show()
        else:
            loop.call_soon_threadsafe(run_in_terminal, show)

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
        if resumed:
            lines.append([("", resumed)])
        for line in lines:
            print_formatted_text(FormattedText(line))

    # -- the loop ------------------------------------------------------------------------

    async def turn(self, text: str) -> None:
        from co_core.ui.failures import describe

        loop = asyncio.get_running_loop()
        self.view = TurnView(self.console)
        self.view.start()
        task = asyncio.ensure_future(self._run(text))
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            self.view.stop()
            self.console.print("[yellow]Cancelled.[/yellow]", markup=True)
        except Exception as exc:
            self.view.stop()
            failure = describe(exc, self.conversation.model_label)
            self.error(failure.message, failure.hint)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if self.view is not None:
                self.view.commit()
                self.view.stop()
            self.view = None

    async def _run(self, text: str) -> None:
        await asyncio.to_thread(self.conversation.ready)
        await asyncio.to_thread(self.conversation.resolved_model)
        assert self.view is not None
        result = await self.conversation.run_turn(text, self.view.on_event)
        if result.output.strip() and result.output.strip() not in self.view.seen:
            self.view.text += result.output  # an answer Co gave in the model's place
        if self.conversation.last_usage is not None:
            from co_core.telemetry.usage import format_usage_line

            self.view.commit()  # the answer first, then its cost
            line = format_usage_line(self.conversation.last_usage, self.conversation.usage)
            self.view.pending.append((line, "dim"))
            if self.conversation.note:
                self.view.pending.append((self.conversation.note, "dim"))
            self.view.flush()

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
        while True:
            if self.fatal is not None:
                raise StartupFailed()
            try:
                # The background work starts once the prompt is drawn (``pre_run`` comes just
                # before the first redraw; ``call_soon`` runs after it), so the import-heavy
                # thread never competes with the first render for the GIL.
                pre_run = partial(self._start_once, loop, start) if start else None
                line = await self.prompt.prompt_async(self.prompt_text, pre_run=pre_run)
                start = None
            except KeyboardInterrupt:
                now = time.monotonic()
                if now - self.last_interrupt <= DOUBLE_PRESS:
                    return
                self.last_interrupt = now
                self.console.print("[dim]Press Ctrl+C again to exit.[/dim]", markup=True)
                continue
            except EOFError:
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
    try:
        resumed = conversation.open_saved()  # an unknown id: one line, before the prompt
    except CoError as exc:
        repl.error(str(exc))
        return 2 if isinstance(exc, SettingsError) else 1
    repl.banner(model, resumed)
    code = 0
    try:
        asyncio.run(repl.loop(conversation.prepare_in_background))
    except KeyboardInterrupt:
        pass
    except StartupFailed:  # bad settings: one line naming the file and key, exit 2
        repl.error(str(repl.fatal))
        code = 2
    finally:
        for problem in conversation.close():
            repl.console.print(f"[yellow]warning:[/yellow] {_escape(problem)}", markup=True)
        repl.console.print("Session ended.")
    return code
