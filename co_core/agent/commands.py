"""The user's own slash commands: Markdown files that become ``/name``.

A file ``review.md`` in the config folder's ``commands/`` (the user's) or in a trusted
project's ``.co/commands/`` (the project's; it wins over a user's of the same name) is the
command ``/review``; ``git/commit.md`` is ``/git:commit``. Its text is the prompt sent to
the model, with ``$ARGUMENTS`` (all that follows the command), ``$1`` … ``$9`` (its
words, as a shell would split them) and ``$$`` (a dollar) filled in; when the text names
none of them, the arguments are added after it. YAML front matter may say::

    ---
    description: Review a file for bugs
    argument-hint: FILE
    tools: [read_file, search_files]
    ---

``tools`` (or Claude Code's ``allowed-tools``) are the only tools offered to the model for
that turn. It limits, never allows: each call is still decided by the policy and asked
about as usual. An untrusted project's command files are never loaded (a cloned
repository cannot add commands), and Co says so once, naming ``co trust``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from co_core.kernel import paths, trust
from co_core.kernel.userfiles import read_text, why_unreadable

Scope = Literal["user", "project"]
FOLDER = "commands"
MAX_BYTES = 64 * 1024
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(:[A-Za-z0-9][A-Za-z0-9_.-]*)*")
PLACEHOLDER = re.compile(r"\$(\$|ARGUMENTS\b|[1-9])")
KNOWN_KEYS = {"description", "argument-hint", "tools", "allowed-tools"}
IGNORED_KEYS = {"model", "disable-model-invocation"}  # Claude Code's, which Co does not use


@dataclass(frozen=True)
class UserCommand:
    name: str
    path: Path
    scope: Scope
    body: str
    description: str = ""
    argument_hint: str = ""
    tools: tuple[str, ...] | None = None  # None: the tools every turn gets

    @property
    def help(self) -> str:
        what = self.description or _first_line(self.body)
        hint = f" {self.argument_hint}" if self.argument_hint else ""
        return f"{what}{hint} ({self.scope}: {self.path.name})"

    def prompt(self, arguments: str) -> str:
        """The text sent to the model for ``/name ARGUMENTS``."""
        return expand(self.body, arguments)


@dataclass
class Commands:
    found: dict[str, UserCommand] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # said once, at the start


def user_folder() -> Path:
    return paths.config_dir() / FOLDER


def expand(body: str, arguments: str) -> str:
    """``$ARGUMENTS``, ``$1``…``$9`` and ``$$`` filled in from ``arguments``."""
    text = arguments.strip()
    try:
        words = shlex.split(text)
    except ValueError:  # an unclosed quote: split on white space instead
        words = text.split()
    used = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used
        token = match.group(1)
        if token == "$":
            return "$"
        used = True
        if token == "ARGUMENTS":
            return text
        index = int(token) - 1
        return words[index] if index < len(words) else ""

    out = PLACEHOLDER.sub(fill, body).strip()
    if text and not used:
        out = f"{out}\n\n{text}"
    return out


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:60]
    return ""


def _front_matter(text: str) -> tuple[dict[str, object], str]:
    """The YAML front matter (``---`` lines around it) and the body after it."""
    if not text.startswith("---"):
        return {}, text
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            import yaml

            raw = "".join(lines[1:index])
            try:
                data = yaml.safe_load(raw) if raw.strip() else {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" (line {mark.line + 2})" if mark is not None else ""
                raise ValueError(f"front matter is not YAML{where}") from None
            if not isinstance(data, dict):
                raise ValueError("front matter must be key: value lines")
            return {str(k): v for k, v in data.items()}, "".join(lines[index + 1 :])
    raise ValueError("front matter has no closing --- line")


def _tools(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(t for t in re.split(r"[,\s]+", value) if t)
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return tuple(t.strip() for t in value if t.strip())
    raise ValueError("tools must be a list of tool names")


def read_command(path: Path, name: str, scope: Scope) -> tuple[UserCommand, list[str]]:
    """One command file; raises ValueError or OSError saying what is wrong with it."""
    found = read_text(path, MAX_BYTES)
    if found.cut:
        raise ValueError(f"longer than {MAX_BYTES // 1024} KiB")
    meta, body = _front_matter(found.text)
    notes = [
        f"{path}: front matter key {key!r} is not one Co reads ({', '.join(sorted(KNOWN_KEYS))})"
        for key in meta
        if key not in KNOWN_KEYS | IGNORED_KEYS
    ]
    if not body.strip():
        raise ValueError("it has no prompt text")
    tools_value = meta.get("tools", meta.get("allowed-tools"))
    description = meta.get("description", "")
    hint = meta.get("argument-hint", "")
    command = UserCommand(
        name,
        path,
        scope,
        body.strip(),
        str(description).strip() if description else "",
        str(hint).strip() if hint else "",
        None if tools_value is None else _tools(tools_value),
    )
    return command, notes


def _files(folder: Path) -> list[tuple[str, Path]]:
    """(command name, file) for the Markdown files under ``folder``, links left out."""
    out: list[tuple[str, Path]] = []
    if not folder.is_dir() or folder.is_symlink():
        return out
    for path in sorted(folder.rglob("*.md")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts):
            continue
        out.append((":".join(relative.with_suffix("").parts), path))
    return out


def load_commands(cwd: Path) -> Commands:
    """The commands a session in ``cwd`` has: the user's, then a trusted project's."""
    commands = Commands()
    places: list[tuple[Scope, Path]] = [("user", user_folder())]
    root = trust.project_root(cwd)
    if root is not None:
        folder = root / ".co" / FOLDER
        if trust.is_trusted(root):
            places.append(("project", folder))
        else:
            count = len(_files(folder))
            if count:
                files = "file" if count == 1 else "files"
                commands.notices.append(
                    f"ignoring {count} command {files} in {folder}: folder not trusted "
                    f"(run `co trust {root}` to use them)"
                )
    for scope, folder in places:
        for name, path in _files(folder):
            if not NAME.fullmatch(name):
                commands.notices.append(
                    f"{path}: skipped: a command name is letters, digits, '-', '_' and '.'"
                )
                continue
            try:
                command, notes = read_command(path, name, scope)
            except (OSError, ValueError) as exc:
                why = why_unreadable(exc) if isinstance(exc, OSError) else str(exc)
                commands.notices.append(f"{path}: skipped: {why}")
                continue
            commands.notices += notes
            commands.found[name] = command  # a project's wins over the user's
    return commands
