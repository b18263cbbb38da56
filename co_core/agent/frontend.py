"""How a conversation reaches the person at the keyboard, or learns there is none.

A :class:`Frontend` is given to the conversation once: the REPL implements it with prompts
and tool lines; ``co ask`` and ``co mcp serve`` use :class:`NoTerminal`, which never asks
(the policy engine already turns "ask" into a denial that says which flag allows it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from co_core.kernel.errors import print_warning

if TYPE_CHECKING:
    from co_core.agent.calls import ToolCallRecord
    from co_core.agent.local.pull import DownloadOffer
    from co_core.policy.engine import Scope

NO_TERMINAL = (
    "it needs the user's approval and no one is at a terminal to give it "
    "(run in `co chat`, or rerun with --approve PATTERN or --yolo)"
)


@dataclass(frozen=True)
class Answer:
    """The user's answer to an approval prompt; ``scope`` is what a yes covers. ``by`` is
    "grant" when the user's yes "for the session" to an earlier call answered this one."""

    approved: bool
    reason: str = ""
    scope: Scope = "once"
    by: Literal["user", "grant"] = "user"


class Frontend(Protocol):
    interactive: bool  # False: nobody can answer, calls needing approval are denied

    async def approve(self, record: ToolCallRecord) -> Answer:
        """Ask about one call that needs approval."""
        ...

    async def announce(self, records: Sequence[ToolCallRecord]) -> None:
        """Several calls of one response need approval: list them before the first question."""
        ...

    def show(self, record: ToolCallRecord) -> None:
        """A call was resolved (its arguments are those it will run with), or has ended
        (``record.resolved`` False: it never got that far): draw its line."""
        ...

    def warn(self, message: str) -> None:
        """Something the user should know that does not stop the turn."""
        ...

    def notice(self, message: str) -> None:
        """News that needs nothing from the user: what ``auto`` chose, a model loading."""
        ...

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        """Ask whether to download a model (from any thread; ``offer.sized()`` first when
        its size is not known); if yes, download it with progress. The file, or None when
        the user said no or stopped it. Nothing is asked of the hub when nobody is asked."""
        ...


class NoTerminal:
    """Nobody to ask: calls needing approval are denied with the reason."""

    interactive = False

    async def approve(self, record: ToolCallRecord) -> Answer:
        return Answer(False, NO_TERMINAL)

    async def announce(self, records: Sequence[ToolCallRecord]) -> None:
        return None

    def show(self, record: ToolCallRecord) -> None:
        return None

    def warn(self, message: str) -> None:
        print_warning(message)

    def notice(self, message: str) -> None:
        return None

    def offer_download(self, offer: DownloadOffer) -> Path | None:
        return None  # nobody to ask: nothing is downloaded
