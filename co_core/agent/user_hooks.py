"""The user's hooks: their own commands, run on the host when something happens in a session.

``hooks`` in the user's ``settings.json`` (and in a trusted project's ``.co/settings.json``;
both run, the user's first) lists commands per event::

    {"hooks": {"before_tool": [{"command": "~/bin/check-call", "match": "shell:exec:*",
                                "timeout": 10}],
               "turn_end": [{"command": "notify-send 'Co is done'"}]}}

Events: ``session_start``, ``prompt`` (the user's words, before the model sees them),
``before_tool`` (a call as decided, before it is asked about or runs), ``after_tool`` (a
call that ran) and ``turn_end``. Each hook gets the event as one JSON object on stdin and
runs in the working folder with ``CO_HOOK_EVENT`` and ``CO_SESSION_ID`` set, for at most
``timeout`` seconds (then it and everything it started is killed).

What a hook says: exit 0 is "go on"; its stdout may be a JSON object with ``decision``
(``"deny"`` or ``"ask"``) and ``reason``, and for ``prompt`` and ``session_start``
``context``, text added for the model (plain stdout counts as context there too). Exit 2
is a deny, with stderr as the reason. A ``before_tool`` hook can deny a call or make it
ask, with a reason the model sees; it can never allow what the policy does not (the
pipeline keeps the stricter of the two). A ``prompt`` hook's deny keeps the words from the
model. Any other exit, a timeout or output that is not what it should be is named in one
line, and the turn goes on as if the hook had not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import ValidationError

from co_core.kernel.errors import SettingsError
from co_core.kernel.settings import SectionModel, setting

if TYPE_CHECKING:
    from co_core.agent.calls.record import ToolCallRecord
    from co_core.policy.engine import Decision
    from co_core.policy.rules import Effect

Event = Literal["session_start", "prompt", "before_tool", "after_tool", "turn_end"]
EVENTS: tuple[Event, ...] = get_args(Event)
TOOL_EVENTS: tuple[Event, ...] = ("before_tool", "after_tool")
OUTPUT_LIMIT = 64 * 1024  # bytes of a hook's stdout and stderr Co reads
RESULT_LIMIT = 8 * 1024  # characters of a tool's result an after_tool hook gets
BLOCK = 2  # the exit status that denies (as Claude Code's and Gemini CLI's hooks)


class HookCommand(SectionModel):
    command: str = setting(..., min_length=1, help="a shell command, run with /bin/sh -c")
    match: str = setting(
        "**", help="before_tool/after_tool: permission keys it runs for (a policy glob)"
    )
    timeout: float = setting(10.0, gt=0, le=600, help="seconds before the hook is killed")
    name: str | None = setting(None, help="how Co names it in messages (default: the command)")


class HooksSettings(SectionModel):
    session_start: list[HookCommand] = setting([], help="commands run when a session starts")
    prompt: list[HookCommand] = setting([], help="commands run on the user's words")
    before_tool: list[HookCommand] = setting([], help="commands run before a tool call")
    after_tool: list[HookCommand] = setting([], help="commands run after a tool call ran")
    turn_end: list[HookCommand] = setting([], help="commands run when a turn ends")


@dataclass(frozen=True)
class Hook:
    event: Event
    command: str
    match: str
    timeout: float
    origin: str  # the settings file it came from
    name: str

    @property
    def named(self) -> str:
        """``hook 'name'``, quoted the same way whatever quotes the command holds."""
        return f"hook '{self.name}'"

    @property
    def label(self) -> str:
        return f"{self.named} ({self.event})"


@dataclass(frozen=True)
class Said:
    """What one hook said: a decision (``deny``/``ask``) with its reason, context for the
    model, or why it failed (one line; the turn goes on)."""

    hook: Hook
    decision: Literal["deny", "ask"] | None = None
    reason: str = ""
    context: str = ""
    failed: str | None = None


def _name(command: HookCommand) -> str:
    if command.name:
        return command.name
    text = " ".join(command.command.split())
    return text if len(text) <= 40 else text[:39] + "…"


def collect(cwd: Path) -> list[Hook]:
    """Every hook for a session in ``cwd``: the user's file, then a trusted project's (an
    untrusted project's settings are never read: load_layers leaves them out and says so).
    A hook list that does not validate is a SettingsError naming the file and key."""
    from co_core.kernel.settings import load_layers

    layers, _, _ = load_layers(cwd)
    hooks: list[Hook] = []
    for layer in reversed(layers):  # the user's first, then the project's
        raw = layer.data.get("hooks")
        if raw is None:
            continue
        try:
            section = HooksSettings.model_validate(raw)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise SettingsError(f"{layer.path}: hooks.{where}: {error['msg']}") from None
        for event in EVENTS:
            for command in getattr(section, event):
                hooks.append(
                    Hook(
                        event,
                        command.command,
                        command.match,
                        command.timeout,
                        str(layer.path),
                        _name(command),
                    )
                )
    return hooks


def _reply(hook: Hook, code: int, out: str, err: str) -> Said:
    """Read what a hook that ended said."""
    if code == BLOCK:
        reason = (err.strip() or out.strip() or "no reason given").splitlines()[0]
        return Said(hook, "deny", reason[:500])
    if code != 0:
        last = (err.strip() or out.strip()).splitlines()[-1:] or [""]
        tail = f": {last[0][:200]}" if last[0] else ""
        return Said(hook, failed=f"{hook.label} failed (exit {code}){tail}")
    text = out.strip()
    if not text.startswith("{"):
        return Said(hook, context=text if hook.event in ("prompt", "session_start") else "")
    try:
        data = json.loads(text)
    except ValueError:
        return Said(hook, failed=f"{hook.label} wrote output that is not JSON")
    if not isinstance(data, dict):
        return Said(hook, failed=f"{hook.label} wrote JSON that is not an object")
    decision = data.get("decision")
    if decision == "block":
        decision = "deny"
    if decision not in (None, "deny", "ask", "allow", "approve"):
        return Said(hook, failed=f"{hook.label}: unknown decision {decision!r}")
    if decision in ("allow", "approve"):
        decision = None  # a hook only tightens: "allow" leaves the policy's decision
    context = data.get("context", "")
    reason = data.get("reason", "")
    return Said(
        hook,
        decision,
        str(reason)[:500] if reason else "",
        str(context) if context and hook.event in ("prompt", "session_start") else "",
    )


async def run(hook: Hook, event: Mapping[str, Any], cwd: Path, session_id: str) -> Said:
    """Run one hook to its end (or its timeout) and read what it said. Ctrl+C kills it."""
    data = json.dumps({"event": hook.event, **event}, ensure_ascii=False, default=str).encode()
    env = {**os.environ, "CO_HOOK_EVENT": hook.event, "CO_SESSION_ID": session_id}
    try:
        process = await asyncio.create_subprocess_shell(
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env=env,
            start_new_session=True,  # its own process group: a timeout ends all it started
        )
    except OSError as exc:
        return Said(hook, failed=f"{hook.label} could not start: {exc.strerror or exc}")
    try:
        out, err = await asyncio.wait_for(_talk(process, data), hook.timeout)
    except TimeoutError:
        await _kill(process)
        return Said(hook, failed=f"{hook.label} timed out after {hook.timeout:g} s")
    except BaseException:
        await _kill(process)
        raise
    code = process.returncode if process.returncode is not None else -1
    text = out[:OUTPUT_LIMIT].decode("utf-8", "replace")
    return _reply(hook, code, text, err[:OUTPUT_LIMIT].decode("utf-8", "replace"))


async def _talk(process: asyncio.subprocess.Process, data: bytes) -> tuple[bytes, bytes]:
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    with contextlib.suppress(OSError):
        process.stdin.close()
    out, err = await process.communicate()
    return out, err


async def _kill(process: asyncio.subprocess.Process) -> None:
    """End the hook and its process group, and reap it (nothing is left running)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(Exception):
        await asyncio.shield(process.wait())


def _result_text(result: Any) -> str:
    display = getattr(result, "display", None)
    text = display if isinstance(display, str) else str(result)
    return text if len(text) <= RESULT_LIMIT else text[:RESULT_LIMIT] + "…"


@dataclass
class Hooks:
    """A session's hooks, and what they do to its calls and turns.

    ``warn`` names a hook that failed, in one line. As the call pipeline's reviewer, the
    ``before_tool`` hooks may make a decision stricter (``before``); ``after_tool`` hooks
    hear how a call that ran ended (``after``).
    """

    hooks: Sequence[Hook]
    cwd: Path
    session_id: str = "session"
    warn: Any = print
    audit: Any = None  # the session's AuditLog: one ``hook`` line per hook run
    prefixes: tuple[str, ...] = ("shell:exec:",)
    ran: list[Said] = field(default_factory=list)

    def of(self, event: Event) -> list[Hook]:
        return [h for h in self.hooks if h.event == event]

    async def fire(
        self, event: Event, payload: Mapping[str, Any], key: str | None = None
    ) -> list[Said]:
        """Run the hooks of ``event`` one after another (those whose ``match`` covers
        ``key``, for a tool event); each failure said in one line."""
        from co_core.policy.globs import matches

        said: list[Said] = []
        for hook in self.of(event):
            if key is not None and not matches(hook.match, key, self.prefixes):
                continue
            got = await run(
                hook,
                {"session_id": self.session_id, "cwd": str(self.cwd), **payload},
                self.cwd,
                self.session_id,
            )
            said.append(got)
            self.ran.append(got)
            if self.audit is not None:
                self.audit.write(
                    "hook",
                    {
                        "hook": hook.name,
                        "hook_event": event,
                        "origin": hook.origin,
                        "decision": got.decision,
                        "reason": got.reason or None,
                        "failed": got.failed,
                        **({"permission": key} if key is not None else {}),
                    },
                )
            if got.failed:
                self.warn(f"{got.failed}; going on without it")
        return said

    # -- the session's and the turn's events -----------------------------------------------

    async def session_started(self, model: str, source: str) -> str:
        """``session_start``: what the hooks add for the model (their context)."""
        said = await self.fire("session_start", {"model": model, "source": source})
        return "\n\n".join(s.context for s in said if s.context)

    async def prompted(self, prompt: str) -> tuple[str, str | None]:
        """``prompt``: the words with the hooks' context added, and a deny's reason (the
        words then never reach the model)."""
        said = await self.fire("prompt", {"prompt": prompt})
        for got in said:
            if got.decision == "deny":
                return prompt, f"{got.hook.named}: {got.reason or 'no reason given'}"
        added = [s.context for s in said if s.context]
        return "\n\n".join([prompt, *added]) if added else prompt, None

    async def turn_ended(self, status: str, output: str, calls: int) -> None:
        await self.fire("turn_end", {"status": status, "output": output, "tool_calls": calls})

    # -- the call pipeline's reviewer ------------------------------------------------------

    async def before(self, record: ToolCallRecord, decision: Decision) -> Decision | None:
        """A ``before_tool`` hook's deny or ask, as a decision (None: nothing to add)."""
        if not self.of("before_tool"):
            return None
        call = record.call
        payload = {
            "tool": call.tool,
            "plugin": call.plugin,
            "risk": call.risk,
            "arguments": dict(call.args),
            "permission": call.permission_key,
            "decision": {
                "effect": decision.effect,
                "source": decision.source,
                "reason": decision.reason,
            },
        }
        for got in await self.fire("before_tool", payload, call.permission_key):
            if got.decision is not None:
                return _decision(got, decision)
        return None

    async def after(self, record: ToolCallRecord) -> None:
        if not self.of("after_tool"):
            return
        call = record.call
        payload = {
            "tool": call.tool,
            "plugin": call.plugin,
            "arguments": dict(call.args),
            "permission": call.permission_key,
            "status": record.status,
            "result": _result_text(record.result),
            "duration_ms": round((record.duration or 0.0) * 1000, 1),
        }
        await self.fire("after_tool", payload, call.permission_key)


def _decision(got: Said, decided: Decision) -> Decision:
    """A hook's word as the policy engine's kind of decision: source ``hook``, the hook's
    name as the rule, its reason said so the model (and the approval prompt) sees it."""
    from dataclasses import replace

    why = got.reason or "no reason given"
    effect: Effect = "deny" if got.decision == "deny" else "ask"
    return replace(
        decided,
        effect=effect,
        source="hook",
        rule=got.hook.name,
        reason=f"{got.hook.named}: {why}",
        pending=decided.pending or (decided.key,),
        asked_by=None,
    )
