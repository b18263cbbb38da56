"""How long read_slack_channel takes for 200 messages from 50 people, against a local
Slack Web API (the tests' fake server), first call (names looked up) vs. later calls
(names cached for the session). Network time to the real Slack is not included.

    uv run python bench/slack_read.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "plugins" / "co_slack" / "tests"))

from slack_fake import TOKEN, FakeSlack, SlackServer, _user  # noqa: E402


def main() -> None:
    fake = FakeSlack()
    fake.users = {f"U0P{n:07d}": _user(f"U0P{n:07d}", f"p{n}", f"Person {n}") for n in range(50)}
    fake.history["C0GENERAL1"] = [
        {
            "type": "message",
            "user": f"U0P{n % 50:07d}",
            "text": f"message {n}",
            "ts": f"{1700000000 + n}.000100",
        }
        for n in range(200, 0, -1)
    ]
    with SlackServer(fake) as server, tempfile.TemporaryDirectory() as tmp:
        for kind in ("config", "data", "cache"):
            os.environ[f"CO_{kind.upper()}_DIR"] = str(Path(tmp) / kind)
        os.environ.update(
            SLACK_BOT_TOKEN=TOKEN,
            CO_SLACK_BASE_URL=server.base_url,
            CO_LOAD_PLUGINS="slack",
            NO_PROXY="127.0.0.1",
            no_proxy="127.0.0.1",
        )
        from co_slack.tools import read_slack_channel
        from pydantic_ai import RunContext
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        from co_core.testing import make_deps

        ctx = RunContext(deps=make_deps(), model=TestModel(), usage=RunUsage())
        start = time.perf_counter()
        read_slack_channel(ctx, "general", limit=200)
        first = time.perf_counter() - start
        runs = 20
        start = time.perf_counter()
        for _ in range(runs):
            read_slack_channel(ctx, "general", limit=200)
        later = (time.perf_counter() - start) / runs
    print(f"first read (200 messages, 50 users.info calls): {first * 1000:.1f} ms")
    print(f"later reads (names cached): {later * 1000:.1f} ms each")
    print(
        f"requests: users.info {len(fake.calls('users.info'))}, "
        f"conversations.history {len(fake.calls('conversations.history'))}"
    )


if __name__ == "__main__":
    main()
