"""``co status`` rows for what a session started here reads besides settings: instruction
files, memory, the user's own commands, and the hooks that will run on this machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from co_core.kernel.status import CheckResult, off, ok, warn


def instructions_check(settings: Any) -> CheckResult:
    from co_core.agent.instructions import InstructionsSettings, for_settings

    found = for_settings(Path.cwd(), settings.find(InstructionsSettings))
    if not found.files and not found.skipped:
        return off("no AGENTS.md here or in the config folder (/init drafts one)")
    state = warn if found.skipped or found.left_out else ok
    return state("; ".join(found.lines()))


def memory_check(settings: Any) -> CheckResult:
    from co_core.agent.memory import MemorySettings, load_memory, user_file

    section = settings.find(MemorySettings)
    memory = load_memory(Path.cwd(), section.max_bytes if section is not None else 16384)
    shown = [f"{f.path} ({f.scope}, {_lines(f.text)} lines)" for f in memory.files]
    if memory.notices:
        return warn("; ".join([*shown, *memory.notices]))
    if not shown:
        return off(f"none yet ({user_file()}; /memory add TEXT)")
    return ok("; ".join(shown))


def _lines(text: str) -> int:
    """Remembered lines: the file's lines without the header Co writes into a new one."""
    from co_core.agent.memory import HEADER

    return len([line for line in text.removeprefix(HEADER).splitlines() if line.strip()])


def commands_check() -> CheckResult:
    from co_core.agent.commands import load_commands, user_folder

    commands = load_commands(Path.cwd())
    names = [f"/{name} ({c.scope})" for name, c in sorted(commands.found.items())]
    if commands.notices:
        return warn("; ".join([", ".join(names), *commands.notices]).lstrip("; "))
    if not names:
        return off(f"none ({user_folder()}/NAME.md makes /NAME)")
    return ok(", ".join(names))


def hooks_check() -> CheckResult:
    """Hooks run on this machine, outside any sandbox: each is listed, with its file."""
    from co_core.agent.user_hooks import collect

    hooks = collect(Path.cwd())
    if not hooks:
        return off("none")
    listed = [f"{h.event}: {h.command} ({h.origin})" for h in hooks]
    return ok("run on this machine, not sandboxed: " + "; ".join(listed))
