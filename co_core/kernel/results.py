"""The result shape tools that list or search return.

``display`` is pre-formatted text the model is told to show verbatim (URLs included);
``count`` says how many items matched (0 is a valid answer, not an error); ``has_more``
says another page exists. Anything else a tool wants the model to see goes in ``data``.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ToolResult:
    display: str
    count: int | None = None
    has_more: bool = False
    next_page: int | str | None = None
    data: dict[str, object] = field(default_factory=dict)

    @classmethod
    def empty(cls, message: str = "Nothing matched.") -> ToolResult:
        return cls(display=message, count=0, has_more=False)
