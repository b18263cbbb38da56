"""``co logs`` as a person sees it: real turns of Co traced, Datasette serving them, and
Chromium (headless) rendering each page; screenshots are kept for a human to look at.

Set ``CO_SCREENSHOTS=DIR`` to keep the PNGs (otherwise they live in the test's tmp dir).
Also: stopping ``co logs`` by closing its terminal (SIGHUP) or killing it stops Datasette.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from co_todo import plugin

from co_core.testing import Approvals, run_turn, script_calls, use_plugin

pytestmark = pytest.mark.slow

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = (task / "children").read_text().split()
        found += [int(child) for child in children]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait_until(check, what: str, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {seconds:.0f} s")
        time.sleep(0.2)


@dataclass
class Logs:
    url: str
    process: subprocess.Popen[bytes]
    turns: list[str]  # trace ids, oldest first


def _traced_turns() -> list[str]:
    """Three real turns of Co with co-todo: allowed adds and a list, a call the user's rule
    holds and the user denies, and two calls the model must retry."""
    import sqlite3

    from co_core.kernel import paths

    rules = [{"match": "todo:add:*milk*", "effect": "ask"}]
    settings = {"telemetry": {"include_content": True}, "policy": {"rules": rules}}
    with use_plugin(plugin, name="todo", settings=settings) as app:
        run_turn(
            app,
            "remind me to call Ada and water the plants",
            script_calls(
                ("add_todo", {"title": "call Ada"}),
                ("add_todo", {"title": "water the plants"}),
                ("list_todos", {}),
            ),
        )
        run_turn(
            app,
            "add buy milk",
            script_calls(("add_todo", {"title": "buy milk"})),
            approvals=Approvals(False, reason="not now"),
        )
        run_turn(
            app,
            "add an empty one",
            script_calls(("add_todo", {"title": "  "}), ("list_todos", {"page": 0})),
        )
    db = sqlite3.connect(paths.data_dir() / "traces.db")
    try:
        rows = db.execute(
            "SELECT trace_id FROM spans WHERE name = 'co.turn' ORDER BY start_time"
        ).fetchall()
    finally:
        db.close()
    return [row[0] for row in rows]


def _untraced_content_turn() -> None:
    """One real turn of Co with co-todo traced as Co traces by default (no content): two
    calls and an answer, each streamed response with a finish reason and the provider's
    id, as a real provider's are."""
    from contextlib import asynccontextmanager

    from co_core.testing import scripted_model

    scripted = scripted_model(script_calls(("add_todo", {"title": "call Ada"}), ("list_todos", {})))
    said = iter([("resp-1", "tool_call"), ("resp-2", "tool_call"), ("resp-3", "stop")])

    class Provider(type(scripted)):  # type: ignore[misc]
        @asynccontextmanager
        async def request_stream(self, *args: Any, **kwargs: Any) -> Any:
            async with super().request_stream(*args, **kwargs) as streamed:
                streamed.provider_response_id, streamed.finish_reason = next(said)
                yield streamed

    model = Provider(
        scripted.function, stream_function=scripted.stream_function, model_name="scripted"
    )
    with use_plugin(plugin, name="todo", settings={}) as app:
        run_turn(app, "remind me to call Ada", model)


def _start(port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "co_core", "logs", "--port", str(port), "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _serving(url: str, process: subprocess.Popen[bytes]) -> None:
    def up() -> bool:
        if process.poll() is not None:
            output = process.stdout.read().decode() if process.stdout else ""
            pytest.fail(f"co logs exited: {output}")
        try:
            urllib.request.urlopen(f"{url}/-/versions.json", timeout=5).close()
            return True
        except OSError:
            return False

    _wait_until(up, "co logs serving")


@pytest.fixture
def logs(co_dirs: Path) -> Iterator[Logs]:
    turns = _traced_turns()
    port = _free_port()
    process = _start(port)
    url = f"http://127.0.0.1:{port}"
    _serving(url, process)
    yield Logs(url, process, turns)
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, as a user stops it
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def lean_logs(co_dirs: Path) -> Iterator[str]:
    """``co logs`` serving a turn traced without content (Co's default)."""
    _untraced_content_turn()
    port = _free_port()
    process = _start(port)
    url = f"http://127.0.0.1:{port}"
    try:
        _serving(url, process)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class Page:
    png: Path
    dom: str

    @property
    def text(self) -> str:
        """The page's visible text, roughly: tags dropped, entities as they read."""
        import html

        body = re.sub(r"<(script|style)\b.*?</\1>", "", self.dom, flags=re.S)
        return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))  # \s: nbsp too


def _browse(url: str, name: str, folder: Path, profile: Path) -> Page:
    """Chromium renders ``url``: a screenshot and the DOM after scripts ran."""
    assert BROWSER is not None
    common = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--hide-scrollbars",
        "--window-size=1400,1000",
    ]
    png = folder / f"{name}.png"
    subprocess.run(
        [*common, f"--screenshot={png}", url], capture_output=True, timeout=120, check=True
    )
    dom = subprocess.run(
        [*common, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert png.stat().st_size > 10_000, f"{name}: an empty screenshot"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return Page(png, dom)


@pytest.mark.skipif(BROWSER is None, reason="chromium is not installed (apt-get install chromium)")
def test_pages_read_well_in_a_browser(logs: Logs, tmp_path: Path) -> None:
    kept = os.environ.get("CO_SCREENSHOTS")
    folder = Path(kept) if kept else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    profile = tmp_path / "chromium-profile"

    def browse(path: str, name: str) -> Page:
        return _browse(f"{logs.url}{path}", name, folder, profile)

    home = browse("/", "home")
    assert "Start with one of these" in home.text
    for query in ("recent_turns", "tool_calls", "model_requests", "usage_by_model_and_day"):
        assert f'href="/traces/{query}"' in home.dom  # the front page lists what it promises

    turns = browse("/traces/recent_turns", "recent_turns")
    first, denied, retried = logs.turns
    assert "remind me to call Ada and water the plants" in turns.text  # content was on
    for trace in logs.turns:  # every turn links to its steps
        assert f'href="/traces/turn?trace_id={trace}"' in turns.dom
    assert "SELECT" not in turns.text  # the SQL is one click away, not the page

    steps = browse(f"/traces/turn?trace_id={first}", "turn")
    text = steps.text
    order = [text.index(s) for s in ("co.turn", "invoke_agent co", "execute_tool list_todos")]
    assert order == sorted(order)
    assert text.count("execute_tool add_todo") == 2 and '{"title":"call Ada"}' in text
    assert " todo " in text and " allow " in text  # the plugin and the policy's decision

    calls = browse("/traces/tool_calls", "tool_calls")
    assert "held for approval" in calls.text and " retry " in calls.text
    assert f'href="/traces/turn?trace_id={denied}"' in calls.dom  # a call links to its turn
    assert f'href="/traces/turn?trace_id={retried}"' in calls.dom
    assert "page starts at 1" in calls.text  # a retry's reason (content is on)

    requests = browse("/traces/model_requests", "model_requests")
    assert "scripted" in requests.text and "function" in requests.text

    spans = browse("/traces/spans", "spans")
    assert "sorted by start_time descending" in spans.text
    for facet in ("name", "status", "kind"):
        assert re.search(rf'<p class="facet-info-name">\s*<strong>{facet}\b', spans.dom), facet
    # JSON held in a JSON string (a tool call's arguments) is shown decoded, not escaped twice
    assert re.search(r'"gen_ai.tool.call.arguments": \{ ?"title": "call Ada" ?\}', spans.text)
    assert '{\\"title\\"' not in spans.text
    newest = json.load(urllib.request.urlopen(f"{logs.url}/traces/spans.json?_shape=array"))
    times = [row["start_time"] for row in newest]
    assert times == sorted(times, reverse=True)  # newest first, not by the random span id


@pytest.mark.skipif(BROWSER is None, reason="chromium is not installed (apt-get install chromium)")
def test_without_content_the_pages_still_say_what_each_request_and_call_did(
    lean_logs: str, tmp_path: Path
) -> None:
    """The default: no prompt, arguments or answers recorded, and request spans made without
    their tools' definitions, yet model, tokens, durations, finish reasons, the response's
    id and the tools called are all on the pages."""
    folder = Path(os.environ.get("CO_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    profile = tmp_path / "chromium-profile"

    def browse(path: str, name: str) -> Page:
        return _browse(f"{lean_logs}{path}", f"lean_{name}", folder, profile)

    def rows(path: str, query: str = "") -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.load(
            urllib.request.urlopen(f"{lean_logs}{path}.json?{query}_shape=array")
        )
        return found

    turns = browse("/traces/recent_turns", "recent_turns")
    assert "remind me to call Ada" not in turns.text  # content is off
    (turn,) = rows("/traces/recent_turns")
    assert (turn["model_requests"], turn["tool_calls"]) == (3, 2)
    assert turn["input_tokens"] > 0 and turn["output_tokens"] > 0 and turn["duration_ms"] > 0

    requests = browse("/traces/model_requests", "model_requests")
    columns = ("model", "provider", "duration_ms", "input_tokens", "output_tokens")
    for column in (*columns, "finish_reason", "response_id"):
        assert column in requests.text
    made = rows("/traces/model_requests")
    assert len(made) == 3
    said_first = [(r["response_id"], r["finish_reason"]) for r in reversed(made)]
    assert said_first == [("resp-1", "tool_call"), ("resp-2", "tool_call"), ("resp-3", "stop")]
    assert "resp-3" in requests.text and "tool_call" in requests.text
    for request in made:
        assert (request["model"], request["provider"]) == ("scripted", "function")
        assert request["input_tokens"] > 0 and request["output_tokens"] > 0
        assert request["duration_ms"] is not None and request["status"] != "ERROR"
        assert str(request["input_tokens"]) in requests.text

    calls = browse("/traces/tool_calls", "tool_calls")
    assert calls.text.count("add_todo") >= 1 and "list_todos" in calls.text
    assert [c["tool"] for c in reversed(rows("/traces/tool_calls"))] == ["add_todo", "list_todos"]
    assert all(c["duration_ms"] is not None for c in rows("/traces/tool_calls"))

    spans = browse("/traces/spans?name__startswith=chat", "chat_spans")
    chats = sorted(rows("/traces/spans", "name__startswith=chat&"), key=lambda r: r["start_time"])
    said = [json.loads(chat["attributes"]) for chat in chats]
    assert [a["gen_ai.response.id"] for a in said] == ["resp-1", "resp-2", "resp-3"]
    reasons = [a["gen_ai.response.finish_reasons"] for a in said]
    assert reasons == [["tool_call"], ["tool_call"], ["stop"]]
    for shown in ("gen_ai.response.finish_reasons", "resp-1", "resp-3", "gen_ai.request.model"):
        assert shown in spans.text
    assert "gen_ai.tool.definitions" not in spans.text  # what a lean request span leaves out
    assert "gen_ai.input.messages" not in spans.text


def test_closing_the_terminal_stops_datasette(logs: Logs) -> None:
    datasette = _children(logs.process.pid)
    assert len(datasette) == 1 and _alive(datasette[0])
    os.kill(logs.process.pid, signal.SIGHUP)  # co logs alone, as a closed terminal's HUP
    assert logs.process.wait(timeout=60) == 129
    _wait_until(lambda: not _alive(datasette[0]), "Datasette stopping")
    with pytest.raises(OSError):
        urllib.request.urlopen(logs.url, timeout=5)


def test_killing_co_logs_stops_datasette(logs: Logs) -> None:
    datasette = _children(logs.process.pid)
    assert len(datasette) == 1
    os.kill(logs.process.pid, signal.SIGKILL)  # no chance to clean up: the kernel tells it
    logs.process.wait(timeout=60)
    _wait_until(lambda: not _alive(datasette[0]), "Datasette stopping")
    # what co logs would have removed on its way out is the test's to remove (its metadata)
    for left in Path(tempfile.gettempdir()).glob("co-logs-*"):
        shutil.rmtree(left, ignore_errors=True)
