"""The steering layer's hooks: it gives the agent its steering (co_core.agent.assembly.steering)."""

from __future__ import annotations

from co_core.kernel.hookspecs import ResourceRegister, hookimpl


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    from co_core.agent.assembly.steering import STEERING
    from co_core.steering import Steering

    register(STEERING, Steering)
