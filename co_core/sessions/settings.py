"""The ``sessions`` settings section: where memory ends and when to compact."""

from __future__ import annotations

from pydantic import model_validator

from co_core.kernel.settings import SectionModel, setting


class SessionSettings(SectionModel):
    save: bool = setting(
        True, env="CO_SESSIONS_SAVE", help="keep every conversation in the session store"
    )
    context_window: int | None = setting(
        None,
        env="CO_CONTEXT_WINDOW",
        ge=512,
        help="tokens the model accepts; default: the model's profile, else default_context_window",
    )
    default_context_window: int = setting(
        8192, ge=512, help="context window assumed when the model does not say (local models)"
    )
    reserve_output: int = setting(
        1024, ge=0, help="tokens kept free for the model's reply when fitting the history"
    )
    suggest_compact_at: float = setting(
        0.5, gt=0, le=1, help="fraction of the context window at which /compact is suggested"
    )
    auto_compact_at: float = setting(
        0.9, gt=0, le=1, help="fraction of the context window at which Co compacts by itself"
    )
    keep_recent_turns: int = setting(
        2, ge=1, help="turns kept word for word when older ones are compacted"
    )
    trim_tool_output: int = setting(
        2000,
        ge=100,
        help="tool outputs in older turns longer than this many tokens are cut to head and tail",
    )

    @model_validator(mode="after")
    def _thresholds(self) -> SessionSettings:
        if self.suggest_compact_at > self.auto_compact_at:
            raise ValueError("suggest_compact_at must not be above auto_compact_at")
        return self
