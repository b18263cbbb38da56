"""What the model typed for a channel or a person, resolved once to Slack's own id.

Names are not identities in Slack. Display names and real names are free text that any
member can set (two people may both be "grace"), a text such as ``GENERAL2024`` may be a
channel's name or an id, and ``<#C0123|general>`` carries a label that Slack never checks.
So the permission resolver turns what was typed into a :class:`Target` (the id, and the
name Slack reports *for that id*), the permission key is built from it, and the tool is
handed :attr:`Target.arg`, which names the id: the post goes to exactly what was decided.

A name that fits more than one person is refused, with the candidates, rather than
guessed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from co_slack.errors import SlackProblem, problem

if TYPE_CHECKING:
    from co_slack.connection import SlackConnection

# Slack's ids: a type letter, then upper-case letters and digits (C012AB3CD, U0G9QF9C6,
# C1234567890). Slack keeps names lower-case, but a name typed in capitals can still have
# this shape (GENERAL2024), so an id-shaped text that Slack does not know as an id is
# looked up as a name.
CHANNEL_ID = re.compile(r"^[CGD](?=[A-Z0-9]*[0-9])[A-Z0-9]{8,}$")
USER_ID = re.compile(r"^[UW](?=[A-Z0-9]*[0-9])[A-Z0-9]{8,}$")
LINK = re.compile(r"^<([#@])([A-Z0-9]+)(?:\|([^>]*))?>$")
EXACT = re.compile(r"^[#@][^()\s]*\(([A-Z0-9]+)\)$")  # Target.arg: "#general(C0123)"
HANDLE_CHARS = re.compile(r"[^a-z0-9._-]")
MAX_CANDIDATES = 5


@dataclass(frozen=True)
class Target:
    """One conversation: a channel (``id`` is the channel's) or a person (the user's)."""

    kind: Literal["channel", "person"]
    id: str
    name: str  # the channel's name, or the person's handle, as Slack reports it for ``id``

    @property
    def key(self) -> str:
        """The permission key's target. A channel's name is unique in its workspace; a
        person is named by handle *and* id, since names can be shared or changed."""
        if self.kind == "channel":
            return f"#{self.name}"
        return f"@{self.name}({self.id})"

    @property
    def arg(self) -> str:
        """What the tool is handed: readable, and exact (the tool uses the id in it)."""
        return f"{'#' if self.kind == 'channel' else '@'}{self.name}({self.id})"

    @property
    def label(self) -> str:
        return f"{'#' if self.kind == 'channel' else '@'}{self.name}"


def folded(text: str) -> str:
    """Names compared the way a reader would confuse them: NFKC, case-folded, trimmed."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def handle_of(user: dict[str, Any]) -> str:
    """A person's handle as it may appear in a key (never glob or bracket characters)."""
    name = str(user.get("name") or "").lower()
    return HANDLE_CHARS.sub("_", name) or str(user.get("id", "?"))


def resolve(slack: SlackConnection, typed: str) -> Target:
    """The conversation ``typed`` names; SlackProblem when Slack has none or several."""
    text = typed.strip()
    exact = EXACT.match(text)
    if exact:  # "#general(C0123)": the id decides, the name is read from Slack again
        return by_id(slack, exact.group(1), typed)
    link = LINK.match(text)
    if link:  # "<#C0123|label>", "<@U0123>": the label is not trusted
        return by_id(slack, link.group(2), typed)
    if text.startswith("@"):
        wanted = text[1:].strip()
        if USER_ID.match(wanted):
            return by_id(slack, wanted, typed)
        return person_named(slack, wanted, typed)
    if not text.startswith("#") and (USER_ID.match(text) or CHANNEL_ID.match(text)):
        try:
            return by_id(slack, text, typed)
        except SlackProblem as exc:
            if exc.code not in ("channel_not_found", "user_not_found"):
                raise
        # not an id Slack knows: a name typed in capitals, such as GENERAL2024
    return channel_named(slack, text.removeprefix("#").strip(), typed)


def by_id(slack: SlackConnection, ident: str, typed: str) -> Target:
    """The conversation with Slack id ``ident``; its name comes from Slack, not from the text."""
    if ident[:1] in ("U", "W"):
        return person(slack, ident)
    info = slack.conversation_info(ident, typed)
    if info.get("is_im") and info.get("user"):
        return person(slack, str(info["user"]))
    return Target("channel", ident, str(info.get("name") or ident).lower())


def person(slack: SlackConnection, user_id: str) -> Target:
    user = slack.user(user_id)
    if not user:
        raise problem("user_not_found", {}, user_id)
    return Target("person", str(user.get("id") or user_id), handle_of(user))


def person_named(slack: SlackConnection, wanted: str, typed: str) -> Target:
    """The one member whose handle, display name or real name is ``wanted``."""
    name = folded(wanted)
    if not name:
        raise problem("user_not_found", {}, typed)
    found = [user for user in slack.everyone() if name in _names(user)]
    if not found:
        raise problem("user_not_found", {}, typed)
    if len(found) > 1:
        raise ambiguous(typed, found)
    return Target("person", str(found[0]["id"]), handle_of(found[0]))


def _names(user: dict[str, Any]) -> set[str]:
    profile = user.get("profile") or {}
    names = (
        user.get("name"),
        user.get("real_name"),
        profile.get("real_name"),
        profile.get("real_name_normalized"),
        profile.get("display_name"),
        profile.get("display_name_normalized"),
    )
    return {folded(str(n)) for n in names if n}


def ambiguous(typed: str, found: list[dict[str, Any]]) -> SlackProblem:
    shown = []
    for user in found[:MAX_CANDIDATES]:
        profile = user.get("profile") or {}
        real = profile.get("real_name") or user.get("real_name") or ""
        display = profile.get("display_name") or ""
        about = ", ".join(
            part for part in (real, f'display name "{display}"' if display else "") if part
        )
        shown.append(f"@{handle_of(user)}({user.get('id')})" + (f" {about}" if about else ""))
    more = f" and {len(found) - MAX_CANDIDATES} more" if len(found) > MAX_CANDIDATES else ""
    return SlackProblem(
        "ambiguous_person",
        f"{len(found)} people in Slack are called {typed!r}: {'; '.join(shown)}{more}. "
        "Ask the user which one they mean, then name that person exactly, "
        "e.g. channel='" + f"@{handle_of(found[0])}({found[0].get('id')})" + "'.",
    )


def channel_named(slack: SlackConnection, name: str, typed: str) -> Target:
    ident = slack.channel_named(name.lower(), typed)
    return Target("channel", ident, name.lower())
