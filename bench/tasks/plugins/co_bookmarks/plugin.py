"""co-bookmarks: a list of web links with labels."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl

CO_HOOKSPEC_VERSION = 5


@hookimpl
def register_tools(register: Any) -> None:
    tools = "co_bookmarks.tools"
    register(
        f"{tools}:save_bookmark",
        risk="write",
        permission="bookmark:save:{url}",
        does="writes",
        roles={"url": "target", "label": "text"},
    )
    register(
        f"{tools}:list_bookmarks",
        risk="read",
        permission="bookmark:list",
        does="lists",
        roles={"contains": "query"},
    )
    register(
        f"{tools}:find_bookmark",
        risk="read",
        permission="bookmark:find",
        does="searches",
        roles={"words": "query"},
    )
