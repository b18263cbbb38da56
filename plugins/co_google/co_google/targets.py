"""What a co-google call will really touch, for its permission keys (``resolve=``).

A draft is decided per recipient: ``gmail:draft:<address>`` for each address in To, Cc
and Bcc, and for the people a reply or reply-all goes to, so a rule about one address
holds however the model spelled the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from co_core import CallRefused, CoDeps, Resolved
from co_google.keys import GOOGLE


def draft(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    from co_google.auth import GoogleAuthProblem
    from co_google.recipients import draft_recipients
    from co_google.services import GoogleApiError

    try:
        addresses = draft_recipients(deps.resource(GOOGLE), args)
    except (GoogleAuthProblem, GoogleApiError) as exc:
        raise CallRefused(f"cannot tell who this draft goes to: {exc}") from exc
    return Resolved(dict(args), tuple(f"gmail:draft:{address}" for address in addresses))
