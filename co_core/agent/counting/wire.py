"""What an OpenAI-compatible request carries of each part: the texts the server reads.

pydantic-ai sends a user prompt as a user message, a tool result as a ``tool`` message
(its JSON, or the string as it is), a retry as the feedback text, a response's text parts
joined in one assistant message with its tool calls (name and JSON arguments).
"""

from __future__ import annotations

from typing import Any


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # files count as nothing here: only their text is known
        return "\n".join(c for c in content if isinstance(c, str))
    return str(content)


def wire_text(part: Any) -> str:
    kind = part.part_kind
    if kind == "tool-return":
        return str(part.model_response_str())
    if kind == "retry-prompt":
        return str(part.model_response())
    if kind == "tool-call":
        return f"{part.tool_name} {part.args_as_json_str()}"
    if kind in ("user-prompt", "system-prompt", "text"):
        return _content(part.content)
    return ""  # thinking and the like are not sent back
