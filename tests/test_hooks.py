"""One test per hookspec (test_hook_<name>): the meta-test in test_hook_docs.py insists."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from co_core import hookimpl, ok
from co_core.kernel.errors import SettingsError
from co_core.kernel.host import PluginHost
from co_core.kernel.settings import SectionModel, setting
from co_core.kernel.status import collect_status
from co_core.kernel.tools import ToolCall
from co_core.testing import install_fake_plugin, make_app, run_co


class GreeterSettings(SectionModel):
    greeting: str = setting("hello", env="GREETER_GREETING", help="what to say")
    times: int = setting(1, ge=1, help="how often")
    token: SecretStr | None = setting(None, help="a secret")


class Counter:
    """A resource that notes its own life cycle, so the test can see it."""

    built = 0
    closed = 0

    def __init__(self) -> None:
        Counter.built += 1

    def close(self) -> None:
        Counter.closed += 1


class Greeter:
    @hookimpl
    def register_settings(self, register: Any) -> None:
        register("greeter", GreeterSettings)

    @hookimpl
    def register_deps(self, register: Any) -> None:
        register("counter", lambda settings: Counter())

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(greet, risk="read", permission="greeter:greet:{name}")
        register("os.path:join", risk="write", name="join_paths")

    @hookimpl
    def register_status_checks(self, register: Any) -> None:
        register("greeter", lambda settings: ok(f"says {settings.section('greeter').greeting}"))

    @hookimpl
    def approval_policy(self, call: ToolCall) -> str | None:  # takes fewer args than the spec
        return "deny" if "secret" in call.permission_key else None

    @hookimpl
    def system_instructions(self, settings: Any) -> str:
        return "Greet people by name."

    @hookimpl
    def register_slash_commands(self, register: Any) -> None:
        register("hello", lambda arg, deps: f"hello {arg or 'you'}", help="say hello")

    @hookimpl
    def prompt_markers(self, settings: Any) -> str | None:
        return "shouting" if settings.section("greeter").greeting.isupper() else None

    @hookimpl
    def plugin_ready(self, settings: Any) -> str | None:
        if settings.section("greeter").token is None:
            return "no greeter token: run `co config set greeter.token ...`"
        return None


def greet(ctx: Any, name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


def greeter_app(settings: dict[str, Any] | None = None):
    app = make_app(settings)
    app.host.register(Greeter(), "greeter")
    return app


def test_hook_register_tools(co_dirs: Path) -> None:
    app = greeter_app()
    tools = {t.name: t for t in app.host.tools() if t.plugin == "greeter"}
    assert set(tools) == {"greet", "join_paths"}
    assert tools["greet"].risk == "read"
    # a newline is written out, so the key names exactly this value
    assert (
        tools["greet"].permission_key({"name": "Ada\nLovelace"}) == "greeter:greet:Ada\\nLovelace"
    )
    assert tools["join_paths"].load()("a", "b") == "a/b"  # declared by path, imported on demand


def test_hook_register_tools_rejects_bad_risk(co_dirs: Path) -> None:
    messages: list[str] = []
    host = PluginHost(warn=messages.append)

    class Bad:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(greet, risk="dangerous")

    host.register(Bad(), "bad")
    assert host.tools() == []
    assert messages == [
        "plugin 'bad' raised in register_tools and was skipped: "
        "ToolDeclarationError: tool 'greet': risk must be one of read, write, send, exec"
    ]
    assert host.plugins["bad"].status == "failed"


def test_hook_register_deps(co_dirs: Path) -> None:
    Counter.built = Counter.closed = 0
    deps = greeter_app().make_deps()
    assert Counter.built == 0  # lazy: nothing built until a tool asks
    first = deps.resource("counter")
    assert deps.resource("counter") is first and Counter.built == 1
    assert deps.close() == []
    assert Counter.closed == 1


def test_hook_register_settings(co_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GREETER_GREETING", "hi from env")
    settings = greeter_app({"greeter": {"times": 3}}).settings
    section = settings.section("greeter")
    assert (section.greeting, section.times) == ("hi from env", 3)
    assert settings.sources["greeter.greeting"] == "env:GREETER_GREETING"
    assert settings.sources["greeter.times"] == "file"
    with pytest.raises(SettingsError) as error:
        _ = greeter_app({"greeter": {"times": 0}}).settings
    assert str(error.value) == (
        f"{co_dirs / 'settings.json'}: greeter.times: Input should be greater than or equal to 1 (got 0)"
    )


def test_hook_register_status_checks(co_dirs: Path) -> None:
    app = greeter_app({"greeter": {"greeting": "ahoy"}})
    rows = {row.name: row for row in collect_status(app)}
    assert rows["greeter"].state == "ok"
    assert rows["greeter"].detail == "says ahoy"
    assert rows["greeter"].plugin == "greeter"


def test_status_checks_time_out_and_crash_alone(co_dirs: Path) -> None:
    class Flaky:
        @hookimpl
        def register_status_checks(self, register: Any) -> None:
            register("slow", lambda: time.sleep(30), timeout=0.2)
            register("crashy", lambda: 1 / 0)

    app = make_app()
    app.host.register(Flaky(), "flaky")
    rows = {row.name: row for row in collect_status(app)}
    assert (rows["slow"].state, rows["slow"].detail) == ("fail", "timed out after 0.2 s")
    assert (rows["crashy"].state, rows["crashy"].detail) == (
        "fail",
        "ZeroDivisionError: division by zero",
    )
    assert rows["data directory"].state == "ok"


def test_hook_register_commands(co_dirs: Path, site: Path) -> None:
    install_fake_plugin(
        site,
        "hello",
        """
        from co_core import hookimpl

        @hookimpl
        def register_commands(app):
            import typer

            hello = typer.Typer(help="Say hello.")

            @hello.command("world")
            def world(name: str = "world") -> None:
                '''Greet the world.'''
                print(f"hello {name}")

            app.add_typer(hello, name="hello")
        """,
    )
    assert "hello" in run_co("--help").stdout
    result = run_co("hello", "world", "--name", "Ada")
    assert (result.returncode, result.stdout) == (0, "hello Ada\n")


def test_hook_register_slash_commands(co_dirs: Path) -> None:
    app = greeter_app()
    commands = app.host.named("register_slash_commands", "slash command")
    entry = commands["hello"]
    assert entry.plugin == "greeter" and entry.options == {"help": "say hello"}
    assert entry.value("Ada", app.make_deps()) == "hello Ada"


def test_hook_approval_policy(co_dirs: Path) -> None:
    app = greeter_app()
    call = ToolCall("greet", "greeter", {"name": "secret"}, "greeter:greet:secret", "read")
    opinions = dict(app.host.call_each("approval_policy", call=call, settings=app.settings))
    assert opinions["greeter"] == "deny"
    harmless = ToolCall("greet", "greeter", {"name": "Ada"}, "greeter:greet:Ada", "read")
    assert (
        dict(app.host.call_each("approval_policy", call=harmless, settings=app.settings))["greeter"]
        is None
    )


def test_hook_system_instructions(co_dirs: Path) -> None:
    app = greeter_app()
    texts = dict(app.host.call_each("system_instructions", settings=app.settings))
    assert texts["greeter"] == "Greet people by name."


def test_hook_prompt_markers(co_dirs: Path) -> None:
    from co_core.ui.repl import Repl

    calm = dict(greeter_app().host.call_each("prompt_markers", settings=greeter_app().settings))
    assert calm["greeter"] is None
    app = greeter_app({"greeter": {"greeting": "HELLO"}})
    assert (
        dict(app.host.call_each("prompt_markers", settings=app.settings))["greeter"] == "shouting"
    )
    # co chat puts it (and --yolo) in red in the prompt line: --yolo at once, the plugin's
    # marker as soon as settings are validated (in the background, after the prompt appears)
    repl = Repl(app, yolo=True)

    def shown() -> str:
        return "".join(text for _style, text in repl.prompt_text())

    assert shown() == "[yolo] co> "
    repl.settings_checked(None)
    assert shown() == "[yolo] [shouting] co> "


def test_hook_plugin_ready(co_dirs: Path) -> None:
    from co_core.kernel.readiness import readiness

    app = greeter_app()
    assert readiness(app.host, app.settings).why("greeter") == (
        "no greeter token: run `co config set greeter.token ...`"
    )
    rows = {row.name: row for row in collect_status(app)}
    assert rows["greeter tools"].state == "off"
    assert "not offered: no greeter token" in rows["greeter tools"].detail
    ready = greeter_app({"greeter": {"token": "s3cret"}})
    assert readiness(ready.host, ready.settings).why("greeter") is None
    rows = {row.name: row for row in collect_status(ready)}
    assert (rows["greeter tools"].state, rows["greeter tools"].detail) == (
        "ok",
        "offered (2 tools)",
    )


def test_secret_settings_are_masked(co_dirs: Path) -> None:
    (co_dirs / "settings.json").write_text(
        json.dumps({"slack": {"bot_token": "xoxb-123-very-secret"}})
    )
    shown = run_co("config", "show")
    assert "xoxb-123-very-secret" not in shown.stdout
    assert "********" in shown.stdout
    assert run_co("config", "get", "slack.bot_token").stdout == "********\n"


def test_tryfirst_and_trylast_are_honoured(co_dirs: Path) -> None:
    class Early:
        @hookimpl(tryfirst=True)
        def system_instructions(self) -> str:
            return "early"

    class Late:
        @hookimpl(trylast=True)
        def system_instructions(self) -> str:
            return "late"

    class Plain:
        @hookimpl
        def system_instructions(self) -> str:
            return "plain"

    app = make_app({})
    for name, plugin in (("a-late", Late()), ("b-plain", Plain()), ("z-early", Early())):
        app.host.register(plugin, name)  # type: ignore[attr-defined]
    said = [text for _, text in app.host.call_each("system_instructions", settings=app.settings)]  # type: ignore[attr-defined]
    ours = [text for text in said if text in ("early", "plain", "late")]
    assert ours == ["early", "plain", "late"]


def test_a_hook_wrapper_is_refused_with_one_line(co_dirs: Path, site: Path) -> None:
    source = """
        from co_core import hookimpl

        @hookimpl(wrapper=True)
        def system_instructions(settings):
            text = yield
            return text
    """
    install_fake_plugin(site, "wrapping", source)
    result = run_co("plugins", "--json")
    assert result.returncode == 0
    assert (
        "plugin 'wrapping' is incompatible and was skipped: its system_instructions hook is a "
        "hook wrapper" in result.stderr
    )
    listed = {p["name"]: p["status"] for p in json.loads(result.stdout)}
    assert listed["wrapping"] == "failed"
