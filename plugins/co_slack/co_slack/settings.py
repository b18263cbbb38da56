"""co-slack settings (section ``slack``)."""

from __future__ import annotations

from pydantic import SecretStr

from co_core.settings import SectionModel, setting


class SlackSettings(SectionModel):
    bot_token: SecretStr | None = setting(
        None, env="SLACK_BOT_TOKEN", help="Slack bot token (xoxb-…)"
    )
