"""The core's ``co status`` checks."""

from __future__ import annotations

import os
import tempfile

from co_core import paths
from co_core.settings import Settings
from co_core.status import CheckResult, fail, ok


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
    try:
        paths.ensure(folder)
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return fail(f"{folder}: not writable ({exc.strerror})")
    free = os.statvfs(folder)
    return ok(f"{folder} ({free.f_bavail * free.f_frsize // 2**30} GiB free)")
