"""``co status`` row for the shell sandbox: is the chosen backend ready, and is it a sandbox at all."""

from __future__ import annotations

from typing import Any

from co_core.status import CheckResult, fail, ok, warn


def _probe(backend: str, settings: Any) -> CheckResult:
    from co_shell.sandbox.base import SandboxUnavailable

    if backend == "none":
        from co_shell.sandbox.host_sandbox import WARNING

        return warn(f"NO SANDBOX: {WARNING}")
    if backend == "bubblewrap":
        from co_shell.sandbox.base import sandbox_ids
        from co_shell.sandbox.bwrap_sandbox import FIX, probe

        problem = probe(*sandbox_ids())
        if problem:
            return fail(f"bubblewrap unavailable: {problem}; {FIX}")
        from co_shell.sandbox.cgroups import describe

        return ok(f"bubblewrap works: no network, read-only system, {describe()}")
    try:
        from co_shell.sandbox.docker_sandbox import connect, engine_address

        client = connect(timeout=4)
    except SandboxUnavailable as exc:
        return fail(str(exc))
    try:
        version = client.version().get("Version", "?")
        try:
            client.images.get(settings.image)
            image = f"image {settings.image} present"
        except Exception:
            return warn(
                f"Docker {version} at {engine_address()}, but image {settings.image} is not "
                "there yet (it is pulled on first use; pull or build it if offline)"
            )
        return ok(f"Docker {version} at {engine_address()}, {image}")
    finally:
        client.close()


def sandbox_check(settings: Any) -> CheckResult:
    shell = settings.section("shell")
    result = _probe(shell.sandbox, shell)
    if result.state == "fail" and shell.fallback and shell.fallback != shell.sandbox:
        backup = _probe(shell.fallback, shell)
        if backup.state != "fail":
            return warn(f"{result.detail}; falling back to {shell.fallback}: {backup.detail}")
    return result
