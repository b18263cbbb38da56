"""``co status``'s model row: which model Co would talk to, whether it answers, what to do.

With no model chosen (``auto``) the row says which one ``auto`` picks (Ollama if it
answers, else Gemini with a key, else the built-in ``local`` model) and checks that one;
when none can answer, the row fails with the three ways to get one, and ``co status``
exits non-zero. Nothing is started: a local model is found, not run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.agent.frontend import NoTerminal
from co_core.agent.local.catalog import human_size
from co_core.kernel.errors import CoError
from co_core.kernel.status import CheckResult, fail, ok, warn

if TYPE_CHECKING:
    from co_core.agent.local.pull import DownloadOffer

CHECK_TIMEOUT = 8.0
ASK_TIMEOUT = 3.0  # seconds a model server has to answer the check
GEMINI = "https://generativelanguage.googleapis.com/v1beta/models"


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


def ollama_row(name: str, settings: Any) -> CheckResult:
    return _ollama(f"ollama:{name}", name, settings.core.ollama_host)


def gemini_row(name: str, settings: Any) -> CheckResult:
    key = settings.core.gemini_api_key
    return _gemini(f"gemini:{name}", name, key.get_secret_value() if key is not None else "")


def compatible_row(name: str, settings: Any) -> CheckResult:
    secret = settings.core.api_key.get_secret_value() if settings.core.api_key else None
    return _compatible(f"openai-compatible:{name}", settings.core.base_url, secret)


def local_row(name: str, settings: Any) -> CheckResult:
    return _local(name, settings)


class _Looking(NoTerminal):
    """The conversation's frontend as ``co status`` plays it: a download the chat would
    offer is noted, not made, and what the chat would say instead is kept."""

    def __init__(self) -> None:
        self.offered: DownloadOffer | None = None
        self.said: list[str] = []

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        self.offered = offer
        return None

    def notice(self, message: str) -> None:
        self.said.append(message)

    warn = notice


def _local(name: str, settings: Any) -> CheckResult:
    """The file ``local``/``local:NAME`` would run, found the way the chat finds it."""
    from co_core.agent.local import server as local_model
    from co_core.agent.models import local_file

    if not local_model.installed():
        return fail(f"local: not installed; {local_model.INSTALL_HINT}")
    looking = _Looking()
    try:
        path, spec = local_file(name, settings.section("local"), looking)
    except CoError as exc:
        return fail(f"local: {exc}")
    if not path.is_file():
        return fail(f"{spec}: {path} does not exist; set local.model_path to a GGUF file")
    offered = looking.offered
    if offered is not None:  # the model wanted is not here: the chat offers it first
        size = f" ({human_size(offered.size)})" if offered.size else ""
        return warn(
            f"{spec} for now; local:{offered.name}{size} is not downloaded: "
            f"`co models pull {offered.name}`, or co chat offers it"
        )
    return ok(f"{spec} ({path.name}; Co starts it when a turn needs it)")


def _get(url: str, headers: dict[str, str] | None = None) -> Any:
    import httpx

    return httpx.get(url, headers=headers, timeout=ASK_TIMEOUT)


def _unreachable(exc: Exception) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _ollama(spec: str, name: str, host: str) -> CheckResult:
    import httpx

    try:
        answer = _get(f"{host.rstrip('/')}/api/tags")
        answer.raise_for_status()
        listed = answer.json().get("models") or []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return fail(
            f"{spec}: Ollama does not answer at {host} ({_unreachable(exc)}); start it with "
            "`ollama serve`, or set OLLAMA_HOST"
        )
    names = {str(m.get("name") or m.get("model")) for m in listed if isinstance(m, dict)}
    if names and name not in names and f"{name}:latest" not in names:
        return fail(f"{spec}: Ollama at {host} does not have {name}: run `ollama pull {name}`")
    return ok(f"{spec} (Ollama answers at {host})")


def _gemini(spec: str, name: str, key: str) -> CheckResult:
    import httpx

    if not key:
        return fail(f"{spec}: no API key; set GEMINI_API_KEY (or `co config set gemini_api_key`)")
    try:
        answer = _get(f"{GEMINI}/{name}", headers={"x-goog-api-key": key})
    except httpx.HTTPError as exc:
        return fail(f"{spec}: Google's API cannot be reached ({_unreachable(exc)})")
    if answer.status_code in (400, 401, 403):
        return fail(f"{spec}: the API key was refused (HTTP {answer.status_code}); check it")
    if answer.status_code == 404:
        return fail(f"{spec}: Gemini has no model {name!r}; pick another with --model")
    if answer.status_code != 200:
        return fail(f"{spec}: Google's API answered HTTP {answer.status_code}")
    return ok(f"{spec} (Google's API answers)")


def _compatible(spec: str, base_url: str | None, key: str | None) -> CheckResult:
    import httpx

    if not base_url:
        return fail(f"{spec}: no server URL; set base_url (or CO_BASE_URL)")
    headers = {"Authorization": f"Bearer {key}"} if key else None
    try:
        answer = _get(f"{base_url.rstrip('/')}/models", headers=headers)
    except httpx.HTTPError as exc:
        return fail(f"{spec}: the server does not answer at {base_url} ({_unreachable(exc)})")
    if answer.status_code in (401, 403):
        return fail(f"{spec}: the server refused the API key (HTTP {answer.status_code})")
    if answer.status_code >= 500:
        return fail(f"{spec}: the server at {base_url} answered HTTP {answer.status_code}")
    return ok(f"{spec} (the server at {base_url} answers)")
