"""The undo layer's hook: the change record every session's tools write through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core.kernel.deps import CHANGES, CoDeps
from co_core.kernel.hookspecs import ResourceRegister, hookimpl

if TYPE_CHECKING:
    from co_core.undo.changes import ChangeRecord


def change_record(deps: CoDeps) -> ChangeRecord:
    from co_core.undo.changes import ChangeRecord

    return ChangeRecord(deps.session_id)


@hookimpl
def register_deps(register: ResourceRegister) -> None:
    register(CHANGES, change_record)
