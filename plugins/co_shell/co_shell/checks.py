"""``co status`` row for the shell sandbox: is the chosen backend ready, and is it a sandbox at all."""

from __future__ import annotations

from typing import Any

from co_core import CheckResult, fail, ok, warn


def _probe(backend: str, settings: Any) -> CheckResult:

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
    from co_shell import engine_probe
    from co_shell.sandbox.docker_sandbox import engine_address

    try:
        version = engine_probe.get("/version", timeout=4)
    except OSError as exc:
        return fail(
            f"Docker engine not reachable at {engine_address()} ({type(exc).__name__}: {exc}); start it "
            "(e.g. `sudo systemctl start docker`), point DOCKER_HOST at one, or set "
            "shell.sandbox to bubblewrap"
        )
    if version is None:
        return _probe_with_docker_py(settings)
    found, _ = engine_probe.get(engine_probe.image_path(settings.image), timeout=4) or (0, None)
    where = f"Docker {(version[1] or {}).get('Version', '?')} at {engine_address()}"
    if found != 200:
        return warn(
            f"{where}, but image {settings.image} is not there yet "
            "(it is pulled on first use; pull or build it if offline)"
        )
    return ok(f"{where}, image {settings.image} present")


def _probe_with_docker_py(settings: Any) -> CheckResult:
    """Engines behind TLS or SSH: only docker-py speaks those."""
    from co_shell.sandbox.base import SandboxUnavailable
    from co_shell.sandbox.docker_sandbox import connect, engine_address

    try:
        client = connect(timeout=4)
    except SandboxUnavailable as exc:
        return fail(str(exc))
    try:
        version = client.version().get("Version", "?")
        try:
            client.images.get(settings.image)
        except Exception:
            return warn(
                f"Docker {version} at {engine_address()}, but image {settings.image} is not there yet"
            )
        return ok(f"Docker {version} at {engine_address()}, image {settings.image} present")
    finally:
        client.close()


def _auto(shell: Any) -> CheckResult:
    """``auto``: which backend it picks here, why not a better one, and that one's probe."""
    from co_shell.sandbox.base import SandboxUnavailable
    from co_shell.sandbox.choice import choose

    try:
        choice = choose(shell)
    except SandboxUnavailable as exc:
        return fail(str(exc))
    result = _probe(choice.backend, shell)
    note = f" ({choice.note})" if choice.note else ""
    return CheckResult(result.state, f"auto chose {choice.backend}{note}: {result.detail}")


def sandbox_check(settings: Any) -> CheckResult:
    shell = settings.section("shell")
    if shell.sandbox == "auto":
        return _auto(shell)
    result = _probe(shell.sandbox, shell)
    if result.state == "fail" and shell.fallback and shell.fallback != shell.sandbox:
        backup = _probe(shell.fallback, shell)
        if backup.state != "fail":
            return warn(f"{result.detail}; falling back to {shell.fallback}: {backup.detail}")
    return result
