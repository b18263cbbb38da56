"""The model is checked where it is written, `auto` is said out loud, and sessions record
the model that answered (issue 28.5)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from openai_server import Server
from pty_chat import co_chat, leave

from co_core.agent.models import choose
from co_core.kernel import modelspec
from co_core.kernel.errors import SettingsError
from co_core.testing import make_app, run_co

CO = str(Path(sys.executable).parent / "co")

BAD_MODELS = [
    "bogus",  # no provider at all
    "nosuch:model",  # an unknown provider
    "olama:qwen3:4b",  # a typo of one
    "ollama:",  # no model name
    "gemini: ",
    "function:onlymodule",  # a scripted model needs MODULE:ATTRIBUTE
    "Local",  # providers are lower-case
]
GOOD_MODELS = [
    "auto",
    "local",
    "local:smollm2",
    "local:~/models/x.gguf",
    "ollama:qwen3:4b",
    "gemini:gemini-2.5-flash",
    "openai-compatible:tiny",
    "anthropic:claude-sonnet-4-5",
    "gateway/openai:gpt-5",
    "function:co_scripts:chat",
]


@pytest.mark.parametrize("spec", BAD_MODELS)
def test_bad_model_strings_are_refused_with_one_line(spec: str) -> None:
    from co_core.agent.models import providers

    with pytest.raises(ValueError) as caught:
        modelspec.check(spec, providers())
    message = str(caught.value)
    assert "\n" not in message
    assert "ollama:qwen3:4b" in message or "function:MODULE:ATTRIBUTE" in message


@pytest.mark.parametrize("spec", GOOD_MODELS)
def test_good_model_strings_pass(spec: str) -> None:
    from co_core.agent.models import providers

    assert modelspec.check(f" {spec} ", providers()) == spec


def test_a_typo_gets_a_suggestion() -> None:
    from co_core.agent.models import providers

    with pytest.raises(ValueError, match="did you mean 'ollama'"):
        modelspec.check("olama:qwen3:4b", providers())


def test_known_providers_are_exactly_pydantic_ais_plus_cos() -> None:
    """A pydantic-ai upgrade that adds or drops a provider shows up here."""
    import inspect

    from pydantic_ai.providers import infer_provider_class

    source = inspect.getsource(infer_provider_class)
    theirs = {
        name
        for case in re.findall(r"case (.+?):\n", source)
        for name in re.findall(r"'([^']+)'", case)
    }
    from co_core.agent.providers import PYDANTIC_AI_PROVIDERS

    assert set(PYDANTIC_AI_PROVIDERS) | {"ollama"} == theirs  # ollama: Co's own, steered


def test_config_set_model_bogus_is_refused_and_nothing_is_written(co_dirs: Path) -> None:
    result = run_co("config", "set", "model", "bogus")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "model" in lines[0] and "provider:name" in lines[0], result.stderr
    assert "Traceback" not in result.stderr and "Value error" not in result.stderr
    assert not (co_dirs / "settings.json").exists()
    good = run_co("config", "set", "model", "ollama:qwen3:4b")
    assert good.returncode == 0, good.stderr
    assert json.loads((co_dirs / "settings.json").read_text())["model"] == "ollama:qwen3:4b"


def test_a_bad_model_in_the_settings_file_or_env_names_where_it_came_from(
    co_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (co_dirs / "settings.json").write_text('{"model": "nosuch:model"}')
    with pytest.raises(SettingsError) as caught:
        make_app().settings  # noqa: B018 - validation happens on access
    assert "settings.json: model: unknown model provider 'nosuch'" in str(caught.value)
    (co_dirs / "settings.json").write_text("{}")
    monkeypatch.setenv("CO_MODEL", "bogus")
    with pytest.raises(SettingsError, match="environment variable CO_MODEL: model: "):
        make_app().settings  # noqa: B018


@pytest.mark.usefixtures("testplug")
def test_chat_with_an_unknown_model_stops_before_the_prompt(tmp_path: Path) -> None:
    child = pexpect.spawn(
        CO, ["chat", "--model", "nosuch:model"], env=dict(os.environ), cwd=str(tmp_path),
        encoding="utf-8", timeout=60, dimensions=(40, 200),
    )  # fmt: skip
    index = child.expect(["unknown model provider 'nosuch'", "co>"])
    assert index == 0, "the chat opened with a model that cannot work"
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "Traceback" not in (child.before or "")


@pytest.mark.usefixtures("testplug")
def test_ask_with_an_unknown_model_is_a_usage_error() -> None:
    result = run_co("ask", "-m", "nosuch:model", "hi")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "unknown model provider" in result.stderr


def test_choose_says_what_auto_is_and_why(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CO_MODEL", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing answers there
    settings = make_app({}).settings
    auto = choose(None, settings)
    assert (auto.spec, auto.auto) == ("gemini:gemini-2.5-flash", True)
    assert auto.line == "model: auto → gemini:gemini-2.5-flash (GEMINI_API_KEY is set)"
    named = choose("ollama:llama3", settings)
    assert (named.spec, named.reason, named.auto) == ("ollama:llama3", "--model", False)
    configured = choose(None, make_app({"model": "ollama:qwen3:4b"}).settings)
    assert configured.spec == "ollama:qwen3:4b" and configured.reason.startswith("setting model")


def _text_reply(body: dict) -> dict:
    return {"text": "hello from the stand-in"}


@pytest.mark.usefixtures("testplug")
def test_auto_is_shown_in_the_chat_and_sessions_record_the_real_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ollama's API stands in (it answers /api/tags and chat completions on /v1): `auto`
    picks it, the chat says so before any message, and the session records
    ``ollama:qwen3:4b``, not ``auto``."""
    monkeypatch.delenv("CO_MODEL", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with Server(_text_reply) as server:
        host = server.base_url.removesuffix("/v1")
        monkeypatch.setenv("OLLAMA_HOST", host)
        with co_chat(cwd=tmp_path) as child:
            child.expect("model: auto")  # the banner
            child.expect(re.escape(f"model: auto → ollama:qwen3:4b (Ollama answers at {host})"))
            child.sendline("hi")
            child.expect("hello from the stand-in")
            leave(child)
    listed = run_co("sessions", "list", "--json", cwd=tmp_path)
    assert [s["model"] for s in json.loads(listed.stdout)] == ["ollama:qwen3:4b"]


@pytest.mark.usefixtures("testplug")
def test_a_model_that_cannot_start_is_reported_before_the_first_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    with co_chat("--model", "gemini:gemini-2.5-flash", cwd=tmp_path) as child:
        child.expect("co>")
        child.expect("gemini needs an API key")  # without typing anything
        leave(child)


def test_model_flag_help_names_local_and_auto() -> None:
    result = subprocess.run([CO, "chat", "--help"], capture_output=True, text=True, timeout=60)
    assert "local:NAME" in result.stdout and "auto" in result.stdout


def _local_servers() -> list[int]:
    """Co's local model servers this test process started (its tether children)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"tether" in cmdline:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.slow
def test_a_model_chosen_while_the_local_model_loads_is_kept_and_the_local_one_stopped(
    testplug: Path, tmp_path: Path
) -> None:
    """``/model`` typed while ``local`` is still starting: the user's choice stays, and
    the local server that finished starting behind it is stopped, not left running."""
    import time

    from co_core.agent.conversation import Conversation
    from co_core.agent.local import server as local_model

    if not (local_model.installed() and local_model.default_gguf()):
        pytest.skip("needs the local extra (the SmolLM2 GGUF)")
    app = make_app({}, cwd=tmp_path)
    others = set(_local_servers())  # other tests' servers (a session's fixture) stay
    chat = Conversation(app, model_spec="local:smollm2")

    def started() -> set[int]:
        return set(_local_servers()) - others

    try:
        chat.prepare_in_background()
        deadline = time.monotonic() + 60
        while not started() and time.monotonic() < deadline:
            time.sleep(0.02)  # the server is starting: now the user types /model
        assert started(), "the local model did not start"
        assert chat.set_model("function:co_scripts:chat") == "function:co_scripts:chat"
        assert chat._model_ready.wait(120)  # the local model finished starting behind it
        assert chat.model is not None and chat.model.label == "function:co_scripts:chat"
        deadline = time.monotonic() + 10
        while started() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started() == set(), "the local server that lost the race is still running"
    finally:
        chat.close()
