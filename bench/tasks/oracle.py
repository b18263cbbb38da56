"""A scripted "perfect model" for the task suite: it plays each task's ``oracle`` plan.

Smoke check of the suite itself (every task can pass; the judges see what they should):

    uv run python bench/tasks/run.py --model function:bench.tasks.oracle:model

The runner hands the plan to the ``co ask`` process in ``CO_TASKBENCH_PLAN``. First
request: the plan's calls (none for a chat task: it answers at once). Then it answers
with what the tools returned, as a model that relays results faithfully would.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from co_core.testing import scripted_model


def _script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    plan = json.loads(os.environ.get("CO_TASKBENCH_PLAN") or "{}")
    last = messages[-1]
    results = [
        p for p in getattr(last, "parts", []) if isinstance(p, (ToolReturnPart, RetryPromptPart))
    ]
    if isinstance(last, ModelRequest) and results:
        said = [
            str(p.model_response() if isinstance(p, RetryPromptPart) else p.content)
            for p in results
        ]
        return ModelResponse(parts=[TextPart("\n".join([plan.get("say", "Done."), *said]))])
    calls = plan.get("calls") or []
    if calls:
        return ModelResponse(parts=[ToolCallPart(tool, args) for tool, args in calls])
    return ModelResponse(parts=[TextPart(plan.get("answer", "Hi! How can I help?"))])


def model() -> Any:
    return scripted_model(_script, name="taskbench-oracle")


def lazy() -> Any:
    """The opposite check: a model that never calls a tool and answers every prompt with
    a greeting must fail every task but the three plain greetings (judges cannot be fooled
    by words alone)."""
    return scripted_model(lambda m, i: ModelResponse(parts=[TextPart("Hi! How can I help?")]))
