"""Co's start-up stays light: the hook module pulls in neither slack_sdk nor pydantic-ai."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from slack_fake import TOKEN

CO = str(Path(sys.executable).with_name("co"))

PROBE = """
import sys
from co_core.testing import make_app
app = make_app()
app.host.tools()
app.host.named("register_status_checks", "check")["slack"].value(app.settings)
app.host.named("register_deps", "resource")
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"slack_sdk", "pydantic_ai"})
print(",".join(heavy) or "none")
"""


def test_hooks_and_the_off_status_check_import_nothing_heavy(co_dirs):
    env = {**os.environ, "CO_LOAD_PLUGINS": "slack"}
    env.pop("SLACK_BOT_TOKEN", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "none"


def test_config_show_masks_the_token(co_dirs):
    env = {**os.environ, "CO_LOAD_PLUGINS": "slack", "SLACK_BOT_TOKEN": TOKEN}
    out = subprocess.run([CO, "config", "show", "--json"], env=env, capture_output=True, text=True)
    shown = json.loads(out.stdout)["slack.bot_token"]
    assert shown["source"] == "env:SLACK_BOT_TOKEN" and TOKEN not in out.stdout
