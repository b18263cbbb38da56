"""Which tool does a job the user asks of Co himself: run the command typed after ``!``,
read the file (or list the folder) named by ``@path``, write the file ``/init`` drafted.

Co never picks such a tool by its name (the bundled ones are plugins like any other). It
reads what tools declare:

- the **key family** of the permission template, the shared families of
  docs/plugins.md ("Key conventions"): a template that is ``fs:read:{ARG}`` reads
  workspace files, ``fs:write:{ARG}`` writes them, and one that is a shell prefix of the
  policy (``policy.shell_prefixes``, ``shell:exec:`` by default) followed by ``{ARG}``
  runs a shell command; ``ARG`` is the argument the job fills in;
- the **risk** (``read``, ``write``, ``exec``), which must agree;
- what the tool **does** (``lists``, ``reads``, ``writes``, ``runs``): as declared
  (``register_tools(does=...)``), else as :meth:`ToolSpec.what_it_does` reads its risk
  and docstring;
- for a write, which argument is the new **content** (its role, declared or read from
  the signature by :meth:`ToolSpec.roles_of`).

Exactly one tool must fit a job; none, or several, is said in one line.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from co_core.kernel.errors import CoError
from co_core.kernel.tools import Param, ToolSpec, params_of

Job = Literal["run", "read", "list", "write"]
FAMILY: dict[Job, str] = {"read": "fs:read:", "list": "fs:read:", "write": "fs:write:"}
RISK: dict[Job, str] = {"run": "exec", "read": "read", "list": "read", "write": "write"}
DOES: dict[Job, str] = {"run": "runs", "read": "reads", "list": "lists", "write": "writes"}
WHAT: dict[Job, str] = {
    "run": "runs shell commands",
    "read": "reads workspace files",
    "list": "lists workspace folders",
    "write": "writes workspace files",
}


class NoTool(CoError):
    """No tool, or more than one, does the job (the message says which and how to fix it)."""


@dataclass(frozen=True)
class Chosen:
    spec: ToolSpec
    argument: str  # what the job fills in: the path, the command
    content: str | None = None  # a write's new content


def _field(template: str, prefix: str) -> str | None:
    """The one argument of ``template`` when it is exactly ``prefix{ARG}``."""
    if not template.startswith(prefix):
        return None
    rest = template[len(prefix) :]
    parsed = list(string.Formatter().parse(rest))
    if len(parsed) != 1:
        return None
    literal, name, spec, conversion = parsed[0]
    if literal or not name or spec or conversion or not name.isidentifier():
        return None
    return name


def _read(spec: ToolSpec) -> tuple[list[Param], str]:
    """The tool's parameters, as the model is shown them, and its description."""
    try:
        from pydantic_ai import Tool

        tool_def = Tool(spec.load(), name=spec.name).tool_def
    except Exception:
        return [], ""
    return params_of(tool_def.parameters_json_schema), tool_def.description or ""


def does(spec: ToolSpec) -> str:
    """What a tool does: as declared, else read from its risk and docstring (the same
    reading the steering and ``co plugins --json`` use: ``ToolSpec.what_it_does``)."""
    if spec.does is not None:
        return spec.does
    return spec.what_it_does(_read(spec)[1])


def _content(spec: ToolSpec, argument: str) -> str | None:
    """A write tool's content argument: the one of role ``content`` (declared, or read
    from the signature by ``ToolSpec.roles_of``), else its one other ``text`` argument."""
    params, doc = _read(spec)
    roles = spec.roles_of(params, doc)
    for role in ("content", "text"):
        found = [name for name, r in roles.items() if r == role and name != argument]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def fits(
    spec: ToolSpec, job: Job, shell_prefixes: Iterable[str] = ("shell:exec:",)
) -> Chosen | None:
    """``spec`` as the tool for ``job``, or None when it is not one."""
    if spec.risk != RISK[job]:
        return None
    prefixes = tuple(shell_prefixes) if job == "run" else (FAMILY[job],)
    argument = next((f for p in prefixes if (f := _field(spec.permission, p))), None)
    if argument is None or does(spec) != DOES[job]:
        return None
    if job != "write":
        return Chosen(spec, argument)
    content = _content(spec, argument)
    return Chosen(spec, argument, content) if content is not None else None


def choose(
    specs: Iterable[ToolSpec], job: Job, shell_prefixes: Iterable[str] = ("shell:exec:",)
) -> Chosen:
    """The one tool that does ``job``; raises NoTool when none or several do."""
    prefixes = tuple(shell_prefixes)
    found = [c for spec in specs if (c := fits(spec, job, prefixes)) is not None]
    if len(found) == 1:
        return found[0]
    if not found:
        raise NoTool(
            f"no installed tool {WHAT[job]} (co-shell has one: `co plugins` lists what is "
            "installed)"
        )
    names = ", ".join(f"{c.spec.name} ({c.spec.plugin})" for c in found)
    raise NoTool(f"several tools {WHAT[job]}: {names}; disable all but one (disabled_plugins)")
