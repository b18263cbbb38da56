"""The recipe tools: one file per dish in the workspace's recipes/ folder."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from co_core import CallRefused, CoDeps, ModelRetry, Resolved, ToolContext, ToolResult

FOLDER = "recipes"


def _slug(dish: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", dish.casefold()).strip("-")


def known_dish(args: Mapping[str, Any], deps: CoDeps) -> Resolved:
    """The dish as the recipe box names it ("Pancakes" for "pancakes"); refused when there
    is no such recipe."""
    dish = str(args.get("dish") or "")
    folder = deps.workspace / FOLDER
    for path in sorted(folder.glob("*.txt")) if folder.is_dir() else []:
        title = path.read_text(encoding="utf-8").splitlines()[0]
        if _slug(title) == _slug(dish):
            return Resolved({**args, "dish": title})
    raise CallRefused(f"No recipe named {dish!r}: list_recipes shows them.")


def add_recipe(ctx: ToolContext, dish: str, ingredients: str) -> str:
    """Add a recipe to the recipe box: the dish, and what goes in it."""
    dish, ingredients = " ".join(dish.split()), ingredients.strip()
    if not _slug(dish) or not ingredients:
        raise ModelRetry("give the dish's name and its ingredients")
    path = ctx.deps.workspace / FOLDER / f"{_slug(dish)}.txt"
    ctx.deps.changes.before_write(path)
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"{dish}\n{ingredients}\n", encoding="utf-8")
    return f"Added the recipe for {dish}: {ingredients}"


def read_recipe(ctx: ToolContext, dish: str) -> str:
    """Show the ingredients of a dish in the recipe box."""
    path = ctx.deps.workspace / FOLDER / f"{_slug(dish)}.txt"
    title, _, body = path.read_text(encoding="utf-8").partition("\n")
    return f"{title}: {body.strip()}"


def list_recipes(ctx: ToolContext) -> ToolResult:
    """List the dishes in the recipe box."""
    folder = ctx.deps.workspace / FOLDER
    titles = (
        [p.read_text(encoding="utf-8").splitlines()[0] for p in sorted(folder.glob("*.txt"))]
        if folder.is_dir()
        else []
    )
    if not titles:
        return ToolResult.empty("The recipe box is empty.")
    return ToolResult("\n".join(f"- {t}" for t in titles), len(titles))
