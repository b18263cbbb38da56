"""co-recipes: dishes and what goes in them."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl

CO_HOOKSPEC_VERSION = 5


@hookimpl
def register_tools(register: Any) -> None:
    tools = "co_recipes.tools"
    register(
        f"{tools}:add_recipe",
        risk="write",
        permission="recipe:add:{dish}",
        does="writes",
        roles={"dish": "target", "ingredients": "text"},
    )
    register(
        f"{tools}:read_recipe",
        risk="read",
        permission="recipe:read:{dish}",
        resolve="co_recipes.tools:known_dish",
        does="reads",
        roles={"dish": "target"},
    )
    register(f"{tools}:list_recipes", risk="read", permission="recipe:list", does="lists")
