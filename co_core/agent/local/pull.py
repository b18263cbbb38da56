"""Download a GGUF file from Hugging Face: resumable, checked, with progress, cancellable.

The hub's side (its URLs, ``HF_ENDPOINT``, ``HF_TOKEN``, the HEAD request that answers the
file's commit, size and LFS sha256, redirects to its CDN, its error types) is
``huggingface_hub``'s. The bytes are ours: ``hf_hub_download`` (2.x) deletes a partial
file when a download stops and does not hash what it receives over HTTP, while a 1 GB
model must survive Ctrl+C or a closed laptop and must be exactly the file that was chosen.
So the file is fetched with HTTP ``Range`` into ``FILE.part``, hashed as it arrives, and
renamed into place only when its size and sha256 match the hub's (and, for a model Co
offers by name, the sha256 pinned in :mod:`co_core.agent.local.catalog`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from co_core.agent.local.catalog import (
    HubFile,
    Offer,
    forget_declined,
    human_size,
    models_dir,
    record_path,
)
from co_core.kernel import paths
from co_core.kernel.errors import CoError

CHUNK = 1 << 20
Progress = Callable[[int, int], None]  # (bytes done, bytes in all)


class PullCancelled(CoError):
    """Stopped by the user; the partial file is kept and the next pull resumes it."""


@dataclass(frozen=True)
class Remote:
    """The file as the hub describes it now."""

    source: HubFile
    url: str  # where the bytes are (the hub's CDN, after its redirect)
    size: int
    sha256: str | None  # the LFS object id; None for a file kept in git itself
    commit: str | None


def _hub() -> Any:
    """``huggingface_hub``, imported with its telemetry off unless the user turned it on:
    it would otherwise add to each request what it detects of this machine and fetch a
    registry of AI agents from the hub (``HF_HUB_DISABLE_TELEMETRY``, read at import)."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    import huggingface_hub

    return huggingface_hub


def offline() -> bool:
    """``HF_HUB_OFFLINE`` is set: the hub is not to be asked anything."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _endpoint() -> str:
    """The hub's address: ``HF_ENDPOINT`` (a mirror, or a stand-in) as it is now."""
    _hub()
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or str(constants.ENDPOINT)).rstrip("/")


def hub_failure(exc: BaseException, source: HubFile) -> CoError:
    """One line for what went wrong talking to the hub."""
    _hub()
    from huggingface_hub import errors

    where = urlsplit(_endpoint()).netloc or _endpoint()
    if isinstance(exc, errors.GatedRepoError):
        return CoError(
            f"{source.repo} is gated: accept its terms on {where} and set HF_TOKEN to download it"
        )
    if isinstance(exc, errors.RepositoryNotFoundError):
        return CoError(f"{where} has no model {source.repo} (or it is private: set HF_TOKEN)")
    if isinstance(exc, errors.RevisionNotFoundError):
        return CoError(f"{source.repo} has no revision {source.revision!r}")
    if isinstance(exc, errors.EntryNotFoundError):
        return CoError(f"{source.repo} has no file {source.filename!r} at {source.revision}")
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return CoError(f"cannot download {source.filename}: HF_HUB_OFFLINE is set")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return CoError(f"cannot reach {where} for {source}: {text}")


def look_up(source: HubFile, timeout: float = 10.0) -> Remote:
    """Ask the hub about ``source`` (a HEAD request); CoError in one line if it cannot say."""
    hub = _hub()
    endpoint = _endpoint()
    url = hub.hf_hub_url(source.repo, source.filename, revision=source.revision, endpoint=endpoint)
    try:
        meta = hub.get_hf_file_metadata(url, timeout=timeout, endpoint=endpoint)
    except Exception as exc:
        raise hub_failure(exc, source) from None
    if meta.size is None:
        raise CoError(f"{_endpoint()} did not say how big {source.filename} is")
    etag = (meta.etag or "").strip('"').lower()
    sha = etag if len(etag) == 64 and all(c in "0123456789abcdef" for c in etag) else None
    return Remote(source, meta.location, meta.size, sha, meta.commit_hash)


def _auth_headers(url: str) -> dict[str, str]:
    """The hub's headers (HF_TOKEN) for the hub itself; none for its CDN's signed URLs."""
    headers = {"Accept-Encoding": "identity"}
    if urlsplit(url).netloc == urlsplit(_endpoint()).netloc:
        from huggingface_hub.utils import build_hf_headers

        headers.update(build_hf_headers())
    return headers


@contextlib.contextmanager
def _one_at_a_time(folder: Path) -> Iterator[None]:
    """One download into the models folder at a time: two Co windows pulling the same file
    would mix their bytes. The lock is on the folder itself, so no lock file is left."""
    import fcntl

    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CoError(f"another Co is downloading a model into {folder} now") from None
        yield
    finally:
        os.close(fd)


@dataclass
class _Part:
    """``FILE.part``: the bytes so far, hashed as they were written."""

    path: Path
    remote: Remote
    done: int = 0
    digest: Any = None

    @property
    def note(self) -> Path:
        return self.path.with_name(self.path.name + ".json")

    def reopen(self) -> None:
        """Keep what belongs to this very file (same sha256, size, commit), hash it again."""
        self.digest = hashlib.sha256()
        self.done = 0
        try:
            wanted = json.loads(self.note.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            wanted = None
        mine = {
            "sha256": self.remote.sha256,
            "size": self.remote.size,
            "commit": self.remote.commit,
        }
        if wanted != mine or not self.path.is_file() or self.path.stat().st_size > self.remote.size:
            self.path.unlink(missing_ok=True)
            paths.write_private(self.note, json.dumps(mine))
            return
        with open(self.path, "rb") as handle:
            for block in iter(lambda: handle.read(CHUNK), b""):
                self.digest.update(block)
                self.done += len(block)

    def fetch(self, progress: Progress, cancel: threading.Event) -> None:
        """GET the rest (``Range``), appending and hashing; a server that ignores the range
        sends everything, so the file starts over."""
        import httpx

        remote = self.remote
        headers = _auth_headers(remote.url)
        if self.done:
            headers["Range"] = f"bytes={self.done}-"
        timeout = httpx.Timeout(30.0, connect=10.0)
        with httpx.stream(
            "GET", remote.url, headers=headers, timeout=timeout, follow_redirects=True
        ) as response:
            if response.status_code == 416 and self.done == remote.size:
                return
            if response.status_code not in (200, 206):
                raise CoError(f"downloading {remote.source.filename}: HTTP {response.status_code}")
            if response.status_code == 200 and self.done:
                self.done, self.digest = 0, hashlib.sha256()
            with open(self.path, "r+b" if self.done else "wb") as out:
                out.seek(self.done)
                out.truncate()
                for chunk in response.iter_bytes(CHUNK):
                    if cancel.is_set():
                        raise PullCancelled(
                            f"download of {remote.source.filename} stopped at "
                            f"{human_size(self.done)} of {human_size(remote.size)}; "
                            "it resumes where it stopped next time"
                        )
                    out.write(chunk)
                    self.digest.update(chunk)
                    self.done += len(chunk)
                    progress(self.done, remote.size)


def pull(
    remote: Remote,
    *,
    pinned: Offer | None = None,
    progress: Progress = lambda done, total: None,
    cancel: threading.Event | None = None,
    folder: Path | None = None,
    attempts: int = 5,
) -> Path:
    """Download ``remote`` into the models folder, resuming a partial download, and return
    the file once its size and sha256 are right. A dropped connection is resumed up to
    ``attempts`` times; ``cancel`` stops it (the partial file stays for next time)."""
    import httpx

    expected = pinned.sha256 if pinned is not None else remote.sha256
    if expected is None:
        raise CoError(f"{remote.source}: the hub gives no sha256 for it, so it cannot be checked")
    if pinned is not None and remote.sha256 not in (None, pinned.sha256):
        raise CoError(
            f"{remote.source} on the hub is not the file Co offers (sha256 "
            f"{remote.sha256[:12]}… instead of {pinned.sha256[:12]}…); not downloaded"
        )
    folder = paths.ensure_dir(folder or models_dir())
    target = folder / Path(remote.source.filename).name
    part = _Part(target.with_name(target.name + ".part"), remote)
    stop = cancel or threading.Event()
    with _one_at_a_time(folder):
        part.reopen()
        progress(part.done, remote.size)
        for attempt in range(attempts):
            try:
                part.fetch(progress, stop)
                break
            except httpx.TransportError as exc:
                if attempt == attempts - 1:
                    raise CoError(
                        f"downloading {remote.source.filename} failed at "
                        f"{human_size(part.done)} of {human_size(remote.size)}: {exc}; "
                        "the same command resumes it"
                    ) from None
                time.sleep(min(2**attempt, 10))
        if part.done != remote.size or part.digest.hexdigest() != expected:
            part.path.unlink(missing_ok=True)
            part.note.unlink(missing_ok=True)
            raise CoError(
                f"{remote.source.filename}: the download does not match its checksum "
                f"({part.done} bytes, sha256 {part.digest.hexdigest()[:12]}… instead of "
                f"{remote.size} bytes, {expected[:12]}…); removed, try again"
            )
        os.replace(part.path, target)
        part.note.unlink(missing_ok=True)
        record = {
            "repo": remote.source.repo,
            "filename": remote.source.filename,
            "revision": remote.commit or remote.source.revision,
            "sha256": expected,
            "size": remote.size,
            "endpoint": _endpoint(),
            "pulled": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        paths.write_private(record_path(target), json.dumps(record, indent=2) + "\n")
    return target


@dataclass(frozen=True)
class DownloadOffer:
    """A model Co can download, put to the user before any byte is fetched."""

    name: str  # what ``local:NAME`` calls it once it is here
    title: str
    source: HubFile
    size: int | None  # pinned for a model Co offers by name; else asked of the hub
    licence: str | None = None
    pinned: Offer | None = None

    @classmethod
    def of(cls, wanted: Offer | HubFile) -> DownloadOffer:
        if isinstance(wanted, Offer):
            return cls(
                wanted.name, wanted.title, wanted.source, wanted.size, wanted.licence, wanted
            )
        from co_core.agent.local.gguf import short_name

        return cls(short_name(Path(wanted.filename)), Path(wanted.filename).name, wanted, None)

    def sized(self) -> DownloadOffer:
        """With its size from the hub (a HEAD request) when it was not known."""
        if self.size is not None:
            return self
        return dataclasses.replace(self, size=look_up(self.source).size)

    @property
    def question(self) -> str:
        where = urlsplit(_endpoint()).netloc or _endpoint()
        size = human_size(self.size) if self.size is not None else "size unknown"
        licence = f", licence {self.licence}" if self.licence else ""
        return (
            f"Download {self.title} ({size}{licence}) from {where}/{self.source.repo} "
            f"into {models_dir()}? [y/N] "
        )

    def run(self, progress: Progress, cancel: threading.Event) -> Path:
        """Download it now (resuming a partial download); the file, checked."""
        forget_declined(self.name)
        return pull(look_up(self.source), pinned=self.pinned, progress=progress, cancel=cancel)
