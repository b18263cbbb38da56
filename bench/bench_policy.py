"""How long the policy engine takes per decision (run: uv run python bench/bench_policy.py).

Uses private XDG dirs under a temp folder; no audit file is written.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    for kind in ("config", "data", "cache"):
        os.environ[f"CO_{kind.upper()}_DIR"] = str(tmp / kind)
    from co_core.kernel.tools import ToolCall, ToolRegistry
    from co_core.policy import PolicyEngine

    registry = ToolRegistry("bench")
    registry(lambda: None, risk="exec", permission="shell:exec:{cmd}", name="run_shell")
    registry(lambda: None, risk="write", permission="fs:write:{path}", name="write_file")
    engine = PolicyEngine(tools=registry.specs, workspace=tmp)
    for i in range(200):
        engine.grant_session(f"shell:exec:tool{i} *")
    cases = {
        "fs key, 200 session rules": ("write_file", {"path": "src/a.py"}),
        "simple command": ("run_shell", {"cmd": "git status --short"}),
        "compound command (6 parts)": (
            "run_shell",
            {"cmd": "cd src && ls -la | grep py; echo $(date) > /dev/null; make -j4 test"},
        ),
        "4 KB command": ("run_shell", {"cmd": " && ".join(["echo hello world"] * 240)}),
    }
    for name, (tool, args) in cases.items():
        spec = engine.specs[tool]
        call = ToolCall(tool, "bench", args, spec.permission_key(args), spec.risk)
        engine.decide(call)
        runs = 200 if "4 KB" not in name else 20
        start = time.perf_counter()
        for _ in range(runs):
            engine.decide(call)
        per = (time.perf_counter() - start) / runs * 1000
        print(f"{name:32} {per:8.2f} ms/decision")


if __name__ == "__main__":
    main()
