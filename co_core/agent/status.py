"""``co status``'s model row: which model Co would talk to, whether it answers, what to do.

With no model chosen (``auto``) the row says which one ``auto`` picks (Ollama if it
answers, else Gemini with a key, else the built-in ``local`` model) and checks that one;
when none can answer, the row fails with the three ways to get one, and ``co status``
exits non-zero. Nothing is started: a local model is found, not run. The row itself is
the provider's (``register_models``' ``status``: co_core.agent.providers).
"""

from __future__ import annotations

from typing import Any

from co_core.kernel.errors import CoError
from co_core.kernel.status import CheckResult, fail, ok

CHECK_TIMEOUT = 8.0  # the whole row (a provider's own check asks its server within 3 s)


def model_check(settings: Any, host: Any = None) -> CheckResult:
    from co_core.agent.models import NO_MODEL, auto_choice

    spec = (settings.core.model or "").strip()
    if spec:
        return _check(spec, settings, host)
    try:
        chosen = auto_choice(settings)
    except CoError:
        return fail(f"auto: {NO_MODEL}")
    result = _check(chosen, settings, host)
    if result.state == "fail":  # the last resort failed: every way to get a model
        return fail(f"auto -> {result.detail}. Or: {NO_MODEL.partition(': ')[2]}")
    return CheckResult(result.state, f"auto -> {result.detail}")


def _check(spec: str, settings: Any, host: Any = None) -> CheckResult:
    """The provider's own row (``register_models``' ``status``), else whether the model
    can be built at all."""
    from co_core.agent.models import providers, resolve
    from co_core.kernel.providers import ProviderError

    try:
        provider, name = providers(host).find(spec)
    except ProviderError as exc:
        return fail(f"model {spec!r}: {exc}")
    if provider.status is not None:
        row: CheckResult = provider.status(name, settings)
        return row
    try:  # another pydantic-ai model, or a scripted one: can it be built?
        resolve(spec, settings, host=host).close()
    except CoError as exc:
        return fail(str(exc))
    return ok(f"{spec} (configured; not contacted)")
