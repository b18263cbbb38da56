"""The ``policy`` settings section (registered by the core's own hooks)."""

from __future__ import annotations

from pydantic import field_validator

from co_core.kernel.settings import SectionModel, setting
from co_core.policy.globs import DEFAULT_SHELL_PREFIXES
from co_core.policy.presets import PRESETS
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
    presets: list[str] = setting(
        [],
        env="CO_POLICY_PRESETS",
        help=f"rule sets to turn on ({', '.join(PRESETS)}); your own rules override them",
    )
    shell_prefixes: list[str] = setting(
        list(DEFAULT_SHELL_PREFIXES),
        help="permission-key prefixes followed by a shell command (split before matching)",
    )

    @field_validator("presets")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        for name in names:
            if name not in PRESETS:
                raise ValueError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
        return names
