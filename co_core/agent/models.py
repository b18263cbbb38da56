"""Turn ``--model`` / the ``model`` setting into a pydantic-ai model.

``provider:name`` forms: ``ollama:`` (default, OLLAMA_HOST), ``gemini:`` (GEMINI_API_KEY),
``openai-compatible:`` (with ``--base-url``), ``local`` (llama.cpp started by Co), and any
other pydantic-ai model string (``anthropic:...``, ``openai:...``). ``function:mod:attr``
loads a scripted pydantic-ai model from Python (tests and benchmarks).
With no model chosen (or ``auto``), Co picks Ollama if it answers, else Gemini if a key is
set, else ``local`` if installed: :func:`choose` says which, and why, without starting
anything (the REPL shows it as the chat opens; ``co status`` can too). ``local`` is a GGUF file Co
serves itself (:mod:`co_core.agent.local`): ``local:NAME`` names one from ``co models list``
or a path; ``local`` alone is ``local.model_path``, else the ``local.default_model``, which
Co offers to download on first use (:func:`local_file`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from co_core.agent.local import server as local_model
from co_core.kernel import extras, modelspec
from co_core.kernel.errors import CoError
from co_core.kernel.providers import BuiltModel, ModelProvider, Providers
from co_core.kernel.settings import Settings

if TYPE_CHECKING:
    from co_core.agent.frontend import Frontend

NO_MODEL = (
    "no model available. Pick one of: "
    "(1) run Ollama (https://ollama.com) and `ollama pull qwen3:4b`; "
    '(2) set GEMINI_API_KEY for Gemini (pip install "co-core[gemini]"); '
    '(3) pip install "co-core[local]" for the built-in local model (--model local).'
)


@dataclass
class ResolvedModel:
    """The model to talk to, its label for the user, and what must be stopped on exit.

    ``spec`` is the canonical model string (what sessions record and ``--model`` takes
    back): ``local:qwen2.5-1.5b``, not ``auto`` or ``local``."""

    model: Any
    label: str
    closers: list[Callable[[], None]] = field(default_factory=list)
    spec: str = ""
    provider: ModelProvider | None = None  # its status row, counter and prices

    def __post_init__(self) -> None:
        self.spec = self.spec or self.label
        if self.provider is None:  # made by hand (a test's scripted model): Co's own
            from co_core.kernel.providers import ProviderError

            try:
                self.provider = providers().find(self.spec)[0]
            except ProviderError:
                self.provider = None

    def close(self) -> None:
        while self.closers:
            self.closers.pop()()


@dataclass(frozen=True)
class ModelChoice:
    """Which model Co will use and why, decided without starting or downloading anything."""

    spec: str  # "ollama:qwen3:4b", "local" (the default local model), "local:smollm2"
    reason: str  # "Ollama answers at http://localhost:11434", "--model", "setting model"
    auto: bool = False

    @property
    def line(self) -> str:
        """``model: auto → ollama:qwen3:4b (Ollama answers at …)`` for the REPL and status."""
        if self.auto:
            return f"model: auto → {self.spec} ({self.reason})"
        return f"model: {self.spec} ({self.reason})"


def ollama_answers(host: str, timeout: float = 0.5) -> bool:
    import httpx

    try:
        return httpx.get(f"{host.rstrip('/')}/api/tags", timeout=timeout).status_code == 200
    except httpx.HTTPError:
        return False


def _auto(settings: Settings) -> tuple[str, str]:
    core = settings.core
    if ollama_answers(core.ollama_host):
        return f"ollama:{core.ollama_model}", f"Ollama answers at {core.ollama_host}"
    if core.gemini_api_key is not None and core.gemini_api_key.get_secret_value():
        return f"gemini:{core.gemini_model}", "GEMINI_API_KEY is set"
    if local_model.installed():
        return "local", f"no Ollama at {core.ollama_host}, no GEMINI_API_KEY"
    raise CoError(NO_MODEL)


def auto_choice(settings: Settings) -> str:
    """The model string ``auto`` stands for here and now."""
    return _auto(settings)[0]


def choose(spec: str | None, settings: Settings, host: Any = None) -> ModelChoice:
    """What Co will use for ``spec`` (``--model``; None: the ``model`` setting, else auto):
    the form checked, ``auto`` decided, the ``local`` extra's presence checked. CoError in
    one line otherwise. Nothing is started or downloaded here."""
    if spec is not None and spec.strip():
        reason = "--model"
    else:
        spec = settings.core.model
        source = settings.sources.get("model", "")
        reason = f"setting model ({source})" if source else "setting model"
    if modelspec.is_auto(spec):
        chosen, why = _auto(settings)
        return ModelChoice(chosen, why, auto=True)
    assert spec is not None
    try:
        checked = modelspec.check(spec, providers(host))
    except ValueError as exc:
        raise CoError(f"model {spec!r}: {exc}") from None
    extras.require_for_model(checked)  # one line naming the pip command when an SDK is missing
    if checked.partition(":")[0] == "local" and not local_model.installed():
        raise CoError(f"the local model needs llama-cpp-python: {local_model.INSTALL_HINT}")
    return ModelChoice(checked, reason)


def providers(host: Any = None) -> Providers:
    """The model providers the loaded plugins give (``register_models``); without a host,
    Co's own (co_core.agent.providers)."""
    if host is not None:
        return Providers.of(host)
    from co_core.agent.providers import register
    from co_core.kernel.providers import ModelProvider

    found: dict[str, ModelProvider] = {}

    def add(prefix: str, build: Any, **options: Any) -> None:
        found.setdefault(prefix, ModelProvider(prefix, build, "core", **options))

    register(add)
    return Providers(found)


def resolve(
    spec: str | None,
    settings: Settings,
    base_url: str | None = None,
    frontend: Frontend | None = None,
    host: Any = None,
) -> ResolvedModel:
    """Build the model for ``spec`` (None: the setting, else auto) with its provider
    (``register_models``). Raises CoError with a hint. A provider may start a server (and
    offer a download): ``frontend`` hears about it."""
    from co_core.kernel.providers import ModelRequest, ProviderError

    choice = choose(spec, settings, host)
    spec = choice.spec
    try:
        provider, name = providers(host).find(spec)
    except ProviderError as exc:
        raise CoError(f"model {spec!r}: {exc}") from None
    built = provider.build(ModelRequest(name, settings, base_url, frontend))
    if isinstance(built, BuiltModel):
        found = ResolvedModel(built.model, built.label or spec, built.closers, built.spec or spec)
    else:
        found = ResolvedModel(built, spec)
    found.provider = provider
    if provider.counter is not None and not isinstance(built, BuiltModel):
        try:  # the counting finds it on the model (co_core.agent.counting)
            found.model.co_counter = provider.counter
        except AttributeError:
            pass
    return found


# served models and Co's own llama.cpp, where the providers build them
from co_core.agent.local.start import local_file, local_server, start_local  # noqa: E402
from co_core.agent.served import compat_model, steer  # noqa: E402

__all__ = [
    "NO_MODEL",
    "ModelChoice",
    "ResolvedModel",
    "auto_choice",
    "choose",
    "compat_model",
    "local_file",
    "local_server",
    "providers",
    "resolve",
    "start_local",
    "steer",
]
