"""``co status`` check: is the vault there, and how many notes does it hold."""

from __future__ import annotations

from typing import Any

from co_core import CheckResult, fail, off, ok
from co_obsidian.vault import VaultError, walk


def vault_check(settings: Any) -> CheckResult:
    if not settings.section("obsidian").vault_path:
        return off("no vault configured (co config set obsidian.vault_path PATH)")
    from co_obsidian.vault import vault_root

    try:
        root = vault_root(settings)
    except VaultError as exc:
        return fail(str(exc))
    count = sum(1 for _ in walk(root, sizes=False))  # names only: status must be quick
    return ok(f"{root} ({count:,} notes)")
