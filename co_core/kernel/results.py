"""The result shape tools that list or search return.

``display`` is pre-formatted text the model is told to show verbatim (URLs included);
``count`` says how many items matched (0 is a valid answer, not an error); ``has_more``
says another page exists. Anything else a tool wants the model to see goes in ``data``.

A search that matched nothing but offers close items apart ("notes holding some of the
words") keeps ``count`` 0 and lists them in ``data["near"]``: Co then knows the result
is worth reading, not a search to make again (:meth:`ToolResult.found_nothing`).
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

    @property
    def found_nothing(self) -> bool:
        """Nothing matched, and nothing close was offered either."""
        return self.count == 0 and not self.data.get("near")
