"""What an ``add_todo`` call will really add, for its permission key (``resolve=``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from co_core import CoDeps, Resolved


# docs: resolver
def todo_title(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """``todo:add:<title>`` names the todo as it will be saved: "buy  milk " is "buy milk"."""
    title = args.get("title")
    if not isinstance(title, str):
        return Resolved(dict(args))  # the tool's own checks answer the model
    return Resolved({**args, "title": " ".join(title.split())})


# /docs
