"""Datasette metadata for the trace database: table and column descriptions, canned queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

_TOKENS_IN = """json_extract(attributes, '$."gen_ai.usage.input_tokens"')"""
_TOKENS_OUT = """json_extract(attributes, '$."gen_ai.usage.output_tokens"')"""
_COST = """json_extract(attributes, '$."co.cost_usd"')"""
_MODEL = (
    """coalesce(json_extract(attributes, '$."gen_ai.response.model"'), """
    """json_extract(attributes, '$."gen_ai.request.model"'))"""
)

RECENT_TURNS = f"""
SELECT t.start_time, t.name, round(t.duration_ms, 1) AS duration_ms,
  json_extract(t.attributes, '$."co.session_id"') AS session,
  (SELECT count(*) FROM spans c WHERE c.trace_id = t.trace_id
     AND json_extract(c.attributes, '$."gen_ai.operation.name"') = 'chat') AS model_requests,
  (SELECT count(*) FROM spans c WHERE c.trace_id = t.trace_id
     AND json_extract(c.attributes, '$."gen_ai.operation.name"') = 'execute_tool') AS tool_calls,
  (SELECT sum({_TOKENS_IN.replace("attributes", "c.attributes")}) FROM spans c
     WHERE c.trace_id = t.trace_id) AS input_tokens,
  (SELECT sum({_TOKENS_OUT.replace("attributes", "c.attributes")}) FROM spans c
     WHERE c.trace_id = t.trace_id) AS output_tokens,
  (SELECT round(sum({_COST.replace("attributes", "c.attributes")}), 6) FROM spans c
     WHERE c.trace_id = t.trace_id) AS cost_usd,
  t.status, t.trace_id
FROM spans t
WHERE t.parent_id IS NULL AND t.name != 'co.startup'
ORDER BY t.start_time DESC
LIMIT 100
"""

_POLICY = """json_extract(attributes, '$."co.policy.effect"')"""
_RETRY = """json_extract(attributes, '$."pydantic_ai.tool.retry.cause"')"""
_EXCEPTION = """(SELECT coalesce(json_extract(e.value, '$.attributes."exception.message"'),
       json_extract(e.value, '$.attributes."exception.type"'))
     FROM json_each(spans.events) e WHERE json_extract(e.value, '$.name') = 'exception')"""

TOOL_CALLS = f"""
SELECT start_time,
  json_extract(attributes, '$."gen_ai.tool.name"') AS tool,
  round(duration_ms, 1) AS duration_ms,
  CASE WHEN status = 'ERROR' AND {_RETRY} = 'model_retry' THEN 'retry'
       WHEN status = 'ERROR' THEN 'error'
       WHEN {_POLICY} = 'deny' THEN 'not run'
       WHEN {_POLICY} IN ('ask', 'ask_once') THEN 'held for approval'
       ELSE 'ok' END AS outcome,
  coalesce(status_message, {_EXCEPTION}) AS error,
  {_POLICY} AS policy,
  json_extract(attributes, '$."co.policy.source"') AS policy_source,
  trace_id, id AS span_id
FROM spans
WHERE json_extract(attributes, '$."gen_ai.operation.name"') = 'execute_tool'
ORDER BY start_time DESC
LIMIT 500
"""

USAGE_BY_MODEL_AND_DAY = f"""
SELECT substr(start_time, 1, 10) AS day,
  {_MODEL} AS model,
  count(*) AS requests,
  sum({_TOKENS_IN}) AS input_tokens,
  sum({_TOKENS_OUT}) AS output_tokens,
  round(sum({_COST}), 6) AS cost_usd,
  sum(CASE WHEN {_COST} IS NULL THEN 1 ELSE 0 END) AS unpriced_requests
FROM spans
WHERE {_TOKENS_IN} IS NOT NULL OR {_TOKENS_OUT} IS NOT NULL
GROUP BY day, model
ORDER BY day DESC, model
"""

QUERIES: dict[str, dict[str, str]] = {
    "recent_turns": {
        "title": "Recent turns",
        "description": "The last 100 turns (root spans), newest first: duration, model "
        "requests, tool calls, tokens and cost (blank cost: no price known).",
        "sql": RECENT_TURNS.strip(),
    },
    "tool_calls": {
        "title": "Tool calls",
        "description": "The last 500 tool executions: duration, outcome (ok; retry: the tool "
        "asked the model to call it differently; error; not run: denied by the policy; held "
        "for approval: an approved call runs again on a row of its own) and the error (its text only when "
        "content is recorded, otherwise its type), and the policy's decision on the call "
        "(allow, deny, ask, ...) with where it came from.",
        "sql": TOOL_CALLS.strip(),
    },
    "usage_by_model_and_day": {
        "title": "Tokens and cost by model and day",
        "description": "Model requests per day and model: tokens in and out, cost in US "
        "dollars from the genai-prices table (local models cost 0; unpriced requests are "
        "counted, not guessed).",
        "sql": USAGE_BY_MODEL_AND_DAY.strip(),
    },
}

COLUMNS = {
    "id": "span id (16 hex digits)",
    "name": "what was traced: invoke_agent (a run), chat <model> (a model request), "
    "execute_tool <tool>, co.* (Co's own work)",
    "context": "JSON: trace_id, span_id",
    "kind": "OpenTelemetry span kind (INTERNAL, CLIENT, ...)",
    "start_time": "UTC, ISO 8601",
    "end_time": "UTC, ISO 8601",
    "attributes": "JSON attributes (secrets masked; prompts and tool output only with "
    "telemetry.include_content)",
    "events": "JSON list of events (exceptions, ...)",
    "status": "UNSET, OK or ERROR",
    "trace_id": "the trace (one turn) this span belongs to",
    "parent_id": "the enclosing span's id; empty for the root of a turn",
    "duration_ms": "end_time - start_time in milliseconds",
    "status_message": "the error, when status is ERROR",
}


def metadata(database: Path) -> dict[str, Any]:
    """Datasette metadata for ``database`` (Datasette names it after the file's stem)."""
    return {
        "title": "Co traces",
        "description": "Turns, model requests and tool calls recorded by Co "
        "(OpenTelemetry spans). Start with the canned queries below.",
        "databases": {
            database.stem: {
                "description": "Co's OpenTelemetry spans, one row per span.",
                "tables": {
                    "spans": {
                        "description": "One row per span; spans of one turn share a "
                        "trace_id and nest through parent_id.",
                        "columns": COLUMNS,
                    }
                },
                "queries": QUERIES,
            }
        },
    }
