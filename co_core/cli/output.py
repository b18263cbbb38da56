"""How ``co`` commands print: a rich console, and one error line with an exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.console import Console


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``co: error: MESSAGE`` (rich markup allowed) and return the Exit to raise."""
    console(stderr=True).print(f"[red]co: error:[/red] {message}", markup=True, soft_wrap=True)
    return typer.Exit(code)
