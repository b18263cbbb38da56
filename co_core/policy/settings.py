"""The ``policy`` settings section (registered by the core's own hooks)."""

from __future__ import annotations

from co_core.kernel.settings import SectionModel, setting
from co_core.policy.globs import DEFAULT_SHELL_PREFIXES
from co_core.policy.rules import RuleModel


class PolicySettings(SectionModel):
    rules: list[RuleModel] = setting(
        [],
        env="CO_POLICY_RULES",
        help='permission rules, e.g. [{"match": "shell:exec:git *", "effect": "allow"}]',
    )
    audit_days: int = setting(
        30, env="CO_AUDIT_DAYS", ge=1, help="days an audit file is kept before it is pruned"
    )
    shell_prefixes: list[str] = setting(
        list(DEFAULT_SHELL_PREFIXES),
        help="permission-key prefixes followed by a shell command (split before matching)",
    )
