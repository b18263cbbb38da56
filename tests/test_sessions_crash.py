"""A process killed with SIGKILL while saving a turn: every earlier turn stays intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from co_core.sessions.history import pairing_problems
from co_core.sessions.recorder import Recorder
from co_core.sessions.store import SessionStore

WRITER = textwrap.dedent(
    """
    import sys
    from co_core.sessions.recorder import Recorder
    from co_core.sessions.store import SessionStore
    from tests.sessions_support import tool_turn

    store = SessionStore()
    recorder = Recorder.start(store, cwd=sys.argv[1], model="m")
    history = []
    n = 0
    while True:
        # big turns (about 1.5 MB each) so that a kill lands mid-write more often than not
        history += tool_turn(f"turn {n}", f"call-{n}", f"output {n} " + "z" * 1_500_000)
        recorder.save(history)
        print(f"saved {n}", flush=True)
        n += 1
    """
)


def test_sigkill_mid_turn_leaves_earlier_turns_intact(co_dirs: Path, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    confirmed = -1
    while confirmed < 3:
        line = child.stdout.readline()
        assert line, "the writer died before saving three turns"
        confirmed = int(line.split()[1])
    os.kill(child.pid, signal.SIGKILL)  # while it is serialising or writing turn 4
    child.wait()

    with SessionStore() as store:
        recorder, history = Recorder.latest(store, cwd=tmp_path)
        info = recorder.info
    assert info.turns >= confirmed + 1
    assert len(history) == info.turns * 4 == info.messages
    assert not pairing_problems(history)
    for n in range(info.turns):
        request, call, returned, answer = history[4 * n : 4 * n + 4]
        assert request.parts[0].content == f"turn {n}"
        assert returned.parts[0].content == f"output {n} " + "z" * 1_500_000
        assert answer.parts[0].content == f"done call-{n}"
    # and the session goes on from there
    with SessionStore() as store:
        recorder, history = Recorder.latest(store, cwd=tmp_path)
        from tests.sessions_support import turn

        recorder.save([*history, *turn("after the crash", "still here")])
        assert store.get(info.id).turns == info.turns + 1
