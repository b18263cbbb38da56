"""What each tool says of itself, as the steering reads it: what it does, and what each of
its arguments is (declared with ``register(..., does=, roles=)``, else read from its
signature: co_core.kernel.tools). Nothing here reads a tool's or an argument's name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from co_core.kernel.tools import Does, Role, ToolSpec, default_does, default_roles, params_of

# The effect (risk) a call has, by what the tool does.
EFFECT: dict[Does, str] = {
    "lists": "read",
    "searches": "read",
    "reads": "read",
    "writes": "write",
    "sends": "send",
    "runs": "exec",
}
CHANGES: tuple[Does, ...] = ("writes", "sends", "runs")


@dataclass(frozen=True)
class Contract:
    """One tool's declaration: what it does, its arguments' roles, its parameters' schema
    and description (what the model reads)."""

    name: str
    does: Does
    roles: Mapping[str, Role]
    schema: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    spec: ToolSpec | None = None

    def with_role(self, role: Role, *, required: bool = False) -> list[str]:
        """The arguments of ``role`` (only those the call must give, with ``required``)."""
        need = set(self.schema.get("required") or ())
        return [k for k, r in self.roles.items() if r == role and (not required or k in need)]


class Described(Protocol):
    """What the toolbox says of a tool (co_core.agent.tools.toolbox)."""

    def spec(self, name: str) -> ToolSpec | None: ...
    def parameters(self, name: str) -> dict[str, Any]: ...
    def tool_description(self, name: str) -> str: ...


def contract_of(tools: Described, name: str) -> Contract:
    spec, schema, doc = tools.spec(name), tools.parameters(name), tools.tool_description(name)
    return read_contract(name, spec, schema, doc)


def read_contract(
    name: str, spec: ToolSpec | None, schema: Mapping[str, Any], description: str
) -> Contract:
    params = params_of(schema)
    if spec is None:  # a tool nobody declared (never one of a plugin's)
        does = default_does(None, description)
        return Contract(name, does, default_roles(params, "", does), schema, description)
    does = spec.what_it_does(description)
    return Contract(name, does, spec.roles_of(params, description), schema, description, spec)
