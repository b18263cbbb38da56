"""What ``co logs`` shows in Datasette: titles, descriptions, sorting, facets, canned queries.

The trace database is one ``spans`` table (co_core/telemetry/store.py). People ask of it:
what happened in my last turns, what did this turn do step by step, which tool calls
failed or were stopped by the policy, what did each model request cost. Each question is a
canned query, its SQL one click away; a ``trace_id`` cell is drawn by
``co_core/telemetry/datasette_cells.py`` as a link to that turn's steps.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any


def _attr(name: str, table: str = "") -> str:
    prefix = f"{table}." if table else ""
    return f"""json_extract({prefix}attributes, '$."{name}"')"""


_OPERATION = _attr("gen_ai.operation.name")
_TOKENS_IN = _attr("gen_ai.usage.input_tokens")
_TOKENS_OUT = _attr("gen_ai.usage.output_tokens")
_COST = _attr("co.cost_usd")
_MODEL = f"coalesce({_attr('gen_ai.response.model')}, {_attr('gen_ai.request.model')})"
_POLICY = _attr("co.policy.effect")
_RETRY = _attr("pydantic_ai.tool.retry.cause")
_PLUGIN = _attr("co.plugin")
_STATUS = _attr("co.call.status")
_EXCEPTION = """(SELECT coalesce(json_extract(e.value, '$.attributes."exception.message"'),
       json_extract(e.value, '$.attributes."exception.type"'))
     FROM json_each(spans.events) e WHERE json_extract(e.value, '$.name') = 'exception')"""
_ERROR = f"CASE WHEN status = 'ERROR' THEN coalesce(status_message, {_EXCEPTION}) END"
_FINISH = """(SELECT group_concat(f.value, ', ')
     FROM json_each(json_extract(spans.attributes, '$."gen_ai.response.finish_reasons"')) f)"""


def _settled(field: str) -> str:
    """An approval field: the call's own (an approved run), else its ``co.approval`` span's."""
    return f"""coalesce(json_extract(attributes, '$."co.approval.{field}"'),
    (SELECT json_extract(a.attributes, '$."co.approval.{field}"') FROM spans a
     WHERE a.trace_id = spans.trace_id AND a.name = 'co.approval'
       AND json_extract(a.attributes, '$."gen_ai.tool.call.id"')
         = json_extract(spans.attributes, '$."gen_ai.tool.call.id"')))"""


_OUTCOME = f"""CASE WHEN {_STATUS} IS NOT NULL THEN {_STATUS}
       WHEN status = 'ERROR' AND {_RETRY} = 'model_retry' THEN 'retry'
       WHEN status = 'ERROR' THEN 'error'
       WHEN {_POLICY} = 'deny' OR {_settled("answer")} = 'no' THEN 'denied'
       WHEN {_settled("answer")} LIKE 'yes%' THEN 'approved'
       WHEN {_POLICY} IN ('ask', 'ask_once') THEN 'held for approval'
       ELSE 'ok' END"""


def _in_turn(expression: str, where: str) -> str:
    """A sum or count over the spans of turn ``t``."""
    return f"(SELECT {expression} FROM spans c WHERE c.trace_id = t.trace_id AND {where})"


_CHAT = f"{_attr('gen_ai.operation.name', 'c')} = 'chat'"
_TOOL = f"{_attr('gen_ai.operation.name', 'c')} = 'execute_tool'"

RECENT_TURNS = f"""
SELECT t.trace_id, t.start_time,
  {_attr("co.session_id", "t")} AS session,
  nullif({_attr("co.model", "t")}, '') AS model,
  {_attr("co.prompt", "t")} AS prompt,
  round(t.duration_ms, 1) AS duration_ms,
  {_in_turn("count(*)", _CHAT)} AS model_requests,
  {_in_turn("count(*)", _TOOL)} AS tool_calls,
  {_in_turn("count(*)", "c.status = 'ERROR'")} AS errors,
  coalesce({_attr("co.input_tokens", "t")},
    {_in_turn(f"sum({_attr('gen_ai.usage.input_tokens', 'c')})", _CHAT)}) AS input_tokens,
  coalesce({_attr("co.output_tokens", "t")},
    {_in_turn(f"sum({_attr('gen_ai.usage.output_tokens', 'c')})", _CHAT)}) AS output_tokens,
  coalesce({_attr("co.cost_usd", "t")},
    {_in_turn(f"round(sum({_attr('co.cost_usd', 'c')}), 6)", _CHAT)}) AS cost_usd,
  t.status, t.name
FROM spans t
WHERE t.parent_id IS NULL AND t.name NOT IN ('co.startup', 'co.mcp.start')
ORDER BY t.start_time DESC
LIMIT 100
"""

TURN = f"""
WITH RECURSIVE tree(id, depth, path) AS (
  SELECT id, 0, start_time FROM spans WHERE trace_id = :trace_id AND parent_id IS NULL
  UNION ALL
  SELECT s.id, tree.depth + 1, tree.path || ' ' || s.start_time
  FROM spans s JOIN tree ON s.parent_id = tree.id
)
SELECT CASE WHEN tree.depth = 0 THEN spans.name ELSE
    replace(substr('                    ', 1, 2 * min(tree.depth - 1, 10)) || '└ ' || spans.name,
      ' ', char(160)) END AS step,
  round((julianday(spans.start_time) - julianday(
    (SELECT min(start_time) FROM spans WHERE trace_id = :trace_id))) * 86400000.0, 1)
    AS started_ms,
  round(spans.duration_ms, 1) AS duration_ms,
  CASE WHEN {_OPERATION} = 'execute_tool' THEN {_OUTCOME}
       WHEN spans.status = 'ERROR' THEN 'error' ELSE 'ok' END AS outcome,
  {_PLUGIN} AS plugin,
  {_MODEL} AS model,
  {_TOKENS_IN} AS input_tokens,
  {_TOKENS_OUT} AS output_tokens,
  {_POLICY} AS policy,
  {_ERROR} AS error,
  substr(coalesce({_attr("gen_ai.tool.call.arguments")}, {_attr("co.prompt")}), 1, 200)
    AS detail,
  spans.id AS span_id
FROM tree JOIN spans ON spans.id = tree.id
ORDER BY tree.path
"""

TOOL_CALLS = f"""
SELECT trace_id, start_time,
  {_attr("gen_ai.tool.name")} AS tool,
  CASE WHEN {_PLUGIN} LIKE 'mcp:%' THEN 'mcp' ELSE {_PLUGIN} END AS plugin,
  CASE WHEN {_PLUGIN} LIKE 'mcp:%' THEN substr({_PLUGIN}, 5) END AS server,
  {_OUTCOME} AS outcome,
  {_settled("answer")} AS answer,
  {_settled("by")} AS answered_by,
  round(duration_ms, 1) AS duration_ms,
  coalesce(status_message, {_EXCEPTION}, {_settled("reason")}) AS error,
  {_POLICY} AS policy,
  {_attr("co.policy.source")} AS policy_source,
  id AS span_id
FROM spans
WHERE {_OPERATION} = 'execute_tool'
ORDER BY start_time DESC
LIMIT 500
"""

MODEL_REQUESTS = f"""
SELECT trace_id, start_time,
  {_MODEL} AS model,
  {_attr("gen_ai.provider.name")} AS provider,
  {_attr("server.address")} AS server,
  round(duration_ms, 1) AS duration_ms,
  {_TOKENS_IN} AS input_tokens,
  {_TOKENS_OUT} AS output_tokens,
  {_COST} AS cost_usd,
  {_FINISH} AS finish_reason,
  {_attr("gen_ai.response.id")} AS response_id,
  status,
  {_ERROR} AS error,
  id AS span_id
FROM spans
WHERE {_OPERATION} = 'chat'
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
WHERE {_OPERATION} = 'chat' AND ({_TOKENS_IN} IS NOT NULL OR {_TOKENS_OUT} IS NOT NULL)
GROUP BY day, model
ORDER BY day DESC, model
"""

_QUERIES: dict[str, dict[str, Any]] = {
    "recent_turns": {
        "title": "Recent turns",
        "description": "The last 100 turns, newest first: the model, how long each took, its "
        "model requests, tool calls and errors, tokens and cost (blank cost: no price "
        "known; the prompt only when content is recorded). Open a turn to see its steps.",
        "sql": RECENT_TURNS.strip(),
    },
    "turn": {
        "title": "One turn, step by step",
        "description": "Every span of one turn in order, indented under the one it ran in: "
        "the agent run, each model request with its tokens, each tool call with its plugin, "
        "outcome and the policy's decision (detail: the prompt and the tool arguments, when "
        "content is recorded). Open a span for all its attributes. Give the turn's id, or "
        "open it from Recent turns, Tool calls or Model requests.",
        "sql": TURN.strip(),
    },
    "tool_calls": {
        "title": "Tool calls",
        "description": "The last 500 tool executions, newest first: the plugin (mcp, with "
        "the server's name, for MCP tools), the outcome (ok; retry: the model was asked to "
        "call it differently; error; timed out; denied: by the policy, by the user, or with "
        "nobody to ask; approved: the call then runs on a row of its own, which shows the "
        "answer too; held for approval: not settled), the answer to the approval question "
        "(yes once, yes session, yes project, no) and who gave it (user; grant: a yes for the "
        "session given to an earlier call; policy; nobody: no terminal), the error or the "
        "reason for a denial (its text only when content is recorded, otherwise its type), "
        "and the policy's decision (allow, deny, ask, ...) with where it came from.",
        "sql": TOOL_CALLS.strip(),
    },
    "model_requests": {
        "title": "Model requests",
        "description": "The last 500 requests to a model, newest first: model, provider, "
        "the server asked (for local and OpenAI-compatible servers), duration, tokens in "
        "and out, cost in US dollars, why the model stopped (stop, tool_call, length, ...) "
        "and the provider's id for the response.",
        "sql": MODEL_REQUESTS.strip(),
    },
    "usage_by_model_and_day": {
        "title": "Tokens and cost by model and day",
        "description": "Model requests per day and model: tokens in and out, cost in US "
        "dollars from the genai-prices table (local models cost 0; unpriced requests are "
        "counted, not guessed).",
        "sql": USAGE_BY_MODEL_AND_DAY.strip(),
    },
}

QUERIES = {name: {**query, "hide_sql": True} for name, query in _QUERIES.items()}

COLUMNS = {  # the columns whose meaning is not plain from their name
    "name": "what was traced: co.turn (a turn), invoke_agent (the agent's run), chat <model> "
    "(a model request), execute_tool <tool>, co.* (Co's own work)",
    "attributes": "JSON (secrets masked; prompts and tool output only with "
    "telemetry.include_content)",
    "trace_id": "the turn this span belongs to (a link to its steps)",
    "parent_id": "the span this one ran in; empty for the root of a turn",
    "status_message": "the error, when status is ERROR",
}


# the front page's list: where to start, in one line each
START = {
    "recent_turns": "what happened in your last turns; open one to see its steps",
    "tool_calls": "which tools ran, failed, were denied or approved, and by whom",
    "model_requests": "each request to a model, with its tokens, cost and server",
    "usage_by_model_and_day": "tokens and cost per model and day",
}


def _links(database: str) -> str:
    items = "".join(
        f'<li><a href="/{escape(database)}/{name}">{escape(QUERIES[name]["title"])}</a>: '
        f"{escape(summary)}</li>"
        for name, summary in START.items()
    )
    return (
        f"<p>Turns, model requests and tool calls recorded by Co (OpenTelemetry spans). "
        f"Start with one of these:</p><ul>{items}</ul>"
        f'<p>Every span is in the <a href="/{escape(database)}/spans">spans</a> table; '
        f"the spans of one turn share a trace_id.</p>"
    )


def metadata(database: Path) -> dict[str, Any]:
    """Datasette metadata for ``database`` (Datasette names it after the file's stem)."""
    name = database.stem
    return {
        "title": "Co traces",
        "description_html": _links(name),
        "databases": {
            name: {
                "title": "Co traces",
                "description_html": _links(name),
                "tables": {
                    "spans": {
                        "title": "All spans",
                        "description": "One row per span, newest first; the spans of one "
                        "turn share a trace_id and nest through parent_id.",
                        "sort_desc": "start_time",
                        "facets": ["status", "kind", "name"],
                        "label_column": "name",
                        "columns": COLUMNS,
                    }
                },
                "queries": QUERIES,
            }
        },
    }
