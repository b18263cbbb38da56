"""Effects, levels and rules: the vocabulary of the policy engine.

A rule says "keys matching this glob get this effect"; every rule belongs to a level
(where it came from). Levels, weakest first, are listed in :data:`LEVELS`; the engine
lets the strongest level that has a matching rule decide (see docs/policy.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from co_core.policy.globs import specificity

Effect = Literal["allow", "deny", "ask", "ask_once"]
EFFECTS: tuple[Effect, ...] = ("allow", "ask_once", "ask", "deny")  # least to most restrictive
Level = Literal["default", "plugin", "user", "project", "grant", "session", "flag"]
LEVELS: tuple[Level, ...] = ("default", "plugin", "user", "project", "grant", "session", "flag")
LEVEL_HELP: dict[Level, str] = {
    "default": "built-in default by the tool's risk",
    "plugin": "a plugin's approval_policy hook",
    "user": "your settings.json (policy.rules)",
    "project": "the project's .co/policy.json (trusted folders only)",
    "grant": "'always for this project' answers, kept in the data dir",
    "session": "'yes for this session' answers",
    "flag": "--approve PATTERN / --yolo on the command line",
}


def restrictiveness(effect: Effect) -> int:
    return EFFECTS.index(effect)


@dataclass(frozen=True)
class Rule:
    """One rule, with the level it belongs to and where exactly it came from."""

    match: str
    effect: Effect
    level: Level
    origin: str  # a file path, a plugin name, "--yolo", ...
    reason: str | None = None
    tool: str | None = None  # grants remember the tool they were given for

    def rank(self) -> tuple[int, int]:
        """Within one level: the most specific pattern wins, then the most restrictive effect."""
        return (specificity(self.match), restrictiveness(self.effect))

    def describe(self) -> str:
        where = f"{self.level} rule {self.match!r} ({self.origin})"
        return f"{where}: {self.reason}" if self.reason else where


class RuleModel(BaseModel):
    """A rule as written in settings.json or .co/policy.json."""

    model_config = ConfigDict(extra="forbid")

    match: str = Field(min_length=1, description="glob over permission keys")
    effect: Effect
    reason: str | None = Field(None, description="shown when the rule decides")
