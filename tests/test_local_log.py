"""``local-model.log`` holds this run of the local model server and the one before, no
more (issue 36.7: appended to forever, it reached 3 MB in twenty minutes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from co_core.agent.local import catalog
from co_core.agent.local import server as local_model

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (local_model.installed() and catalog.built_in()),
        reason="needs the local extra: uv sync --all-packages --extra local",
    ),
]


def test_three_starts_leave_two_logs_each_of_one_run(co_dirs: Path) -> None:
    data = Path(os.environ["CO_DATA_DIR"])
    model = catalog.built_in()
    assert model is not None
    for _ in range(3):
        server = local_model.LocalServer(model, context_size=2048, startup_timeout=120)
        server.start()
        server.stop()
    logs = sorted(p.name for p in data.iterdir() if p.name.startswith("local-model"))
    assert logs == ["local-model.log", "local-model.log.1"]
    for name in logs:
        text = (data / name).read_text(errors="replace")
        assert text.count("loaded meta data") == 1, name  # one run's start, not three
