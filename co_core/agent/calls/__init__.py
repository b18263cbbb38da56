"""The call pipeline: one tool call's life, from the model's words to its end.

``record`` (the record and its stages), ``pipeline`` (the steps, for every driver),
``outcome`` (how a call ended, from what it raised), ``listeners`` (audit lines and
spans), ``gate`` (pydantic-ai drives the pipeline), ``loops`` (the loop guard).
"""

from co_core.agent.calls.record import FAILED, RAN, Status, ToolCallRecord

__all__ = ["FAILED", "RAN", "Status", "ToolCallRecord"]
