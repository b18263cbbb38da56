"""The kernel's own hooks: the first rows of ``co status`` (settings, data directory)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from co_core.kernel import paths
from co_core.kernel.hookspecs import StatusCheckRegister, hookimpl
from co_core.kernel.status import CheckResult, fail, ok

if TYPE_CHECKING:
    from co_core.kernel.settings import Settings


def settings_check(settings: Settings) -> CheckResult:
    where = (
        str(settings.user_file)
        if settings.user_file.exists()
        else f"{settings.user_file} (not created yet)"
    )
    if settings.project_file:
        where += f" + project {settings.project_file}"
    return ok(where)


def data_dir_check() -> CheckResult:
    folder = paths.data_dir()
    problem = paths.writable("data")
    if problem is not None:
        return fail(str(problem))
    free = os.statvfs(folder)
    return ok(f"{folder} ({free.f_bavail * free.f_frsize // 2**30} GiB free)")


@hookimpl
def register_status_checks(register: StatusCheckRegister) -> None:
    register("settings", settings_check)
    register("data directory", data_dir_check)
