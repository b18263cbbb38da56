"""A Datasette plugin for ``co logs``: turn ids become links to the turn, JSON is readable.

Loaded only inside the Datasette process that ``co logs`` starts (``--plugins-dir`` holds
one line importing :func:`render_cell`), so Co itself never imports Datasette.

- a ``trace_id`` cell (in the spans table and the canned queries) links to the "One turn,
  step by step" query for that turn;
- a ``span_id`` cell links to that span's row, with all its attributes;
- ``attributes``, ``events`` and ``context`` (JSON text) are shown on one line, unfolding
  to the whole value, indented, with JSON held inside string values (messages, tool
  arguments) decoded instead of escaped twice.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from datasette import hookimpl
from markupsafe import Markup

TURN_COLUMNS = {"trace_id"}
JSON_COLUMNS = {"attributes", "events", "context"}


def _decoded(value: Any) -> Any:
    """``value`` with JSON held in strings parsed, all the way down."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return _decoded(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, dict):
        return {key: _decoded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    return value


SHORT = 100  # characters of JSON shown on one line; longer values fold open on a click


def json_cell(text: str) -> Markup | None:
    """A JSON cell: one line when short, else its start, unfolding to the whole, indented.
    None when it is not JSON (Datasette shows it as it is)."""
    try:
        value = _decoded(json.loads(text))
    except ValueError:
        return None
    if value in ({}, []):
        return Markup("&nbsp;")  # nothing to show (an empty value is not shown as text)
    line = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if len(line) <= SHORT:
        return Markup("<code>{}</code>").format(line)
    whole = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True)
    return Markup(
        "<details><summary><code>{}…</code></summary>"
        '<pre style="margin:0;white-space:pre-wrap">{}</pre></details>'
    ).format(line[: SHORT - 1], whole)


@hookimpl
def render_cell(value: Any, column: str, database: str, datasette: Any) -> Markup | None:
    if not isinstance(value, str) or not value:
        return None
    if column in TURN_COLUMNS and len(value) == 32 and value.isalnum():
        url = datasette.urls.database(database) + "/turn?trace_id=" + quote(value)
        return Markup('<a href="{}" title="{}">turn {}…</a>').format(url, value, value[:8])
    if column == "span_id" and len(value) == 16 and value.isalnum():
        url = datasette.urls.table(database, "spans") + "/" + quote(value)
        return Markup('<a href="{}">{}</a>').format(url, value)
    if column in JSON_COLUMNS:
        return json_cell(value)
    return None
