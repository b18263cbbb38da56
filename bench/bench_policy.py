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
    from co_core.kernel.tools import Resolved, ToolRegistry
    from co_core.policy import PolicyEngine
    from co_core.policy.shell import canonical_shell_command, read_script

    def spelled(args: dict, deps: object) -> Resolved:  # co-shell's resolver, in short
        return Resolved({**args, "cmd": canonical_shell_command(args["cmd"])})

    registry = ToolRegistry("bench")
    registry(
        lambda: None, risk="exec", permission="shell:exec:{cmd}", name="run_shell", resolve=spelled
    )
    registry(lambda: None, risk="write", permission="fs:write:{path}", name="write_file")
    engine = PolicyEngine(tools=registry.specs, workspace=tmp)
    for i in range(200):
        engine.grant_session(f"shell:exec:tool{i} *")
    cases = {
        "fs key, 200 session rules": ("write_file", {"path": "src/a.py"}),
        "simple command": ("run_shell", {"cmd": "git status --short"}),
        "ls -la src": ("run_shell", {"cmd": "ls -la src"}),
        "compound command (6 parts)": (
            "run_shell",
            {"cmd": "cd src && ls -la | grep py; echo 'a b' > /dev/null; make -j4 test"},
        ),
        "not literal (asks; tree-sitter)": (
            "run_shell",
            {"cmd": "cd src && ls -la | grep py; echo $(date) > /dev/null; make -j4 test"},
        ),
        "find -delete (program knowledge)": ("run_shell", {"cmd": "find . -name x -delete"}),
        "4 KB command": ("run_shell", {"cmd": " && ".join(["echo hello world"] * 240)}),
    }
    for name, (tool, args) in cases.items():
        runs = 200 if "4 KB" not in name else 20
        start = time.perf_counter()
        for _ in range(runs):
            read_script.cache_clear()  # every call reads its command once (resolver + engine)
            call = engine.make_call(tool, args, deps=object())  # type: ignore[arg-type]
            engine.decide(call)
        per = (time.perf_counter() - start) / runs * 1000
        print(f"{name:34} {per:8.3f} ms/call")


if __name__ == "__main__":
    main()
