"""Counting for the ``local`` model as it really reads a request.

Co's local model (co_core.agent.local.constrained) does not send tool calls and results
as the OpenAI format has them: it writes them into the conversation as text (a result as
``Result of NAME:`` and its display text, cut to a few thousand characters; a call as a
``<tool_call>`` block), all of a request's results in one user message, and lists the
tools as one-line signatures in the system prompt. This counter counts exactly that, with
the llama.cpp server's tokenizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from co_core.agent.counting.server import FRAME, ServerCounter
from co_core.agent.local.constrained import HOW_TO_CALL, call_text, result_text, signature


class LocalCounter(ServerCounter):
    tool_frame = 1  # one signature a line

    def __init__(self, base_url: str, model_name: str = "local") -> None:
        super().__init__(base_url, model_name)
        self.label = "counted with the local model's tokenizer (llama.cpp)"

    def part_text(self, part: Any) -> str:
        kind = part.part_kind
        if kind == "tool-return":
            if getattr(part, "outcome", "success") != "success":
                return f"{part.tool_name} failed: {result_text(part)}"
            return f"Result of {part.tool_name}:\n{result_text(part)}"
        if kind == "retry-prompt":
            where = f"{part.tool_name} failed" if part.tool_name else "Not accepted"
            return f"{where}: {part.model_response()}"
        if kind == "tool-call":
            return call_text(part)
        return super().part_text(part)

    def tool_text(self, tool: Any) -> str:
        return signature(tool)

    def frame(self, message: Any) -> int:
        if message.kind == "response":
            return FRAME + len(message.parts) - 1  # parts joined in one assistant message
        results = sum(1 for p in message.parts if p.part_kind in ("tool-return", "retry-prompt"))
        others = len(message.parts) - results
        # the results become one user message, joined by blank lines
        return FRAME * (others + (1 if results else 0)) + max(results - 1, 0)

    async def fixed(self, system: Sequence[str], tools: Sequence[Any]) -> tuple[int, int]:
        """The tool list is one more system message: its heading and how to call count
        with the prompt, the signatures as the tools (as the tool budget counts them)."""
        prompt, tokens = await super().fixed(system, tools)
        if tools:
            (how,) = await self.count([f"### Tools\n\n{HOW_TO_CALL}"])
            prompt += how + FRAME
        return prompt, tokens
