"""What a co-google call will really touch, for its permission keys (``resolve=``).

A draft is decided per recipient: ``gmail:draft:<address>`` for each address in To, Cc
and Bcc, and for the people a reply or reply-all goes to, each in the one canonical form
the header will carry (:mod:`co_google.recipients`). The call's arguments become the
draft's own (the final recipients, and for a reply the ``Re:`` subject Gmail threads on),
so the approval prompt shows what the draft will hold and the tool writes exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from co_core import CallRefused, CoDeps, Resolved
from co_google.keys import GOOGLE


def draft(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    from co_google.auth import GoogleAuthProblem
    from co_google.recipients import BadDraft, check, plan, resolved_args
    from co_google.services import GoogleApiError

    try:
        planned = plan(deps.resource(GOOGLE), args)
        check(planned)
    except BadDraft as exc:
        raise CallRefused(str(exc)) from exc
    except (GoogleAuthProblem, GoogleApiError) as exc:
        raise CallRefused(f"cannot tell who this draft goes to: {exc}") from exc
    keys = tuple(f"gmail:draft:{address}" for address in planned.addresses)
    return Resolved(resolved_args(planned, args), keys)


def labels(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """``label_email``: the labels by their exact names, so the prompt shows which ones
    change; an unknown label is refused before anyone is asked."""
    from co_google import labels as L
    from co_google.auth import GoogleAuthProblem
    from co_google.services import GoogleApiError

    google = deps.resource(GOOGLE)
    try:
        named = {f: L.exact(google, str(args.get(f) or "")) for f in ("add", "remove")}
    except L.UnknownLabel as exc:
        raise CallRefused(str(exc)) from exc
    except (GoogleAuthProblem, GoogleApiError) as exc:
        raise CallRefused(f"cannot look up Gmail labels: {exc}") from exc
    return Resolved({**args, **named})
