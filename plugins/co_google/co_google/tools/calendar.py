"""Calendar tools: events in a date range, optionally matching text (read-only)."""

from __future__ import annotations

import os
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic_ai import ModelRetry, RunContext

from co_core import ToolResult
from co_google.tools._call import call, services

LIST_DAYS = 7
SEARCH_DAYS = 30
MAX_EVENTS = 100
FORMAT_HINT = "Use YYYY-MM-DD (e.g. 2026-03-14), optionally with a time: 2026-03-14T09:30."


def user_zone(name: str | None) -> tzinfo:
    """The configured IANA zone, else this machine's (by name when it can be found)."""
    candidates = [name] if name else []
    if not name:
        candidates.append(os.environ.get("TZ", "").lstrip(":"))
        try:
            link = str(Path("/etc/localtime").resolve())
            if "zoneinfo/" in link:
                candidates.append(link.split("zoneinfo/", 1)[1])
        except OSError:
            pass
    for candidate in candidates:
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                if name:
                    raise ModelRetry(
                        f"google.time_zone {name!r} is not an IANA time zone; ask the user to fix it "
                        "(e.g. Europe/Paris)."
                    ) from None
    return datetime.now().astimezone().tzinfo or ZoneInfo("UTC")


def parse_when(text: str, zone: tzinfo, *, end: bool = False) -> datetime:
    """``YYYY-MM-DD`` (a whole day; as an end, the day is included) or an ISO date-time."""
    raw = text.strip()
    today = datetime.now(zone).date()
    named = {
        "today": today,
        "tomorrow": today + timedelta(days=1),
        "yesterday": today - timedelta(days=1),
    }
    try:
        if raw.lower() in named or len(raw) == 10:
            day = named.get(raw.lower()) or date.fromisoformat(raw)
            moment = datetime.combine(day, time(0), zone)
            return moment + timedelta(days=1) if end else moment
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ModelRetry(f"Invalid date {text!r}. {FORMAT_HINT}") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


def _window(
    ctx: RunContext[Any], start: str | None, end: str | None, days: int
) -> tuple[datetime, datetime, tzinfo]:
    zone = user_zone(services(ctx).section.time_zone)
    begin = (
        parse_when(start, zone)
        if start
        else datetime.combine(datetime.now(zone).date(), time(0), zone)
    )
    finish = parse_when(end, zone, end=True) if end else begin + timedelta(days=days)
    if finish <= begin:
        raise ModelRetry(f"end ({end}) must be after start ({start or 'today'}). {FORMAT_HINT}")
    return begin, finish, zone


def _when(event: dict[str, Any], zone: tzinfo) -> str:
    start, end = event.get("start", {}), event.get("end", {})
    if "date" in start:  # all-day: end.date is exclusive
        first = date.fromisoformat(start["date"])
        last = date.fromisoformat(end.get("date", start["date"])) - timedelta(days=1)
        if last > first:
            return f"{first:%a %Y-%m-%d} → {last:%a %Y-%m-%d} · all day"
        return f"{first:%a %Y-%m-%d} · all day"
    begin = datetime.fromisoformat(start["dateTime"]).astimezone(zone)
    text = f"{begin:%a %Y-%m-%d %H:%M}"
    if end.get("dateTime"):
        finish = datetime.fromisoformat(end["dateTime"]).astimezone(zone)
        text += (
            f"–{finish:%H:%M}"
            if finish.date() == begin.date()
            else f" → {finish:%a %Y-%m-%d %H:%M}"
        )
    return text


def _events(
    ctx: RunContext[Any], begin: datetime, finish: datetime, zone: tzinfo, query: str | None
) -> ToolResult:
    events: list[dict[str, Any]] = []
    token = None
    while True:
        params: dict[str, Any] = {
            "calendarId": "primary",
            "timeMin": begin.isoformat(),
            "timeMax": finish.isoformat(),
            "singleEvents": True,
            "orderBy": "startTime",
            "maxResults": 50,
            "pageToken": token,
        }
        if isinstance(zone, ZoneInfo):
            params["timeZone"] = zone.key
        if query:
            params["q"] = query
        page = call(ctx, "calendar", lambda cal, p=params: cal.events().list(**p))
        events += [e for e in page.get("items", []) if e.get("status") != "cancelled"]
        token = page.get("nextPageToken")
        if not token or len(events) >= MAX_EVENTS:
            break
    span = f"{begin:%Y-%m-%d} to {(finish - timedelta(seconds=1)):%Y-%m-%d}"
    if not events:
        what = f"matching {query!r} " if query else ""
        return ToolResult.empty(f"No events {what}from {span}.")
    shown = events[:MAX_EVENTS]
    lines = [f"Events {span} ({getattr(zone, 'key', str(zone))}):"]
    for event in shown:
        lines.append(f"- {_when(event, zone)} · {event.get('summary') or '(no title)'}")
        if event.get("location"):
            lines.append(f"  at {event['location']}")
        if event.get("htmlLink"):
            lines.append(f"  {event['htmlLink']}")
    more = bool(token) or len(events) > MAX_EVENTS
    if more:
        lines.append(f"Only the first {MAX_EVENTS} events are shown: narrow the dates.")
    return ToolResult(display="\n".join(lines), count=len(shown), has_more=more)


def list_calendar_events(
    ctx: RunContext[Any], start: str | None = None, end: str | None = None
) -> ToolResult:
    """List events in the user's primary Google Calendar.

    Dates are YYYY-MM-DD in the user's time zone (end day included). Default: today and the
    next 7 days.
    """
    begin, finish, zone = _window(ctx, start, end, LIST_DAYS)
    return _events(ctx, begin, finish, zone, None)


def search_calendar_events(
    ctx: RunContext[Any], query: str, start: str | None = None, end: str | None = None
) -> ToolResult:
    """Find events whose title, description, location or attendees contain `query`.

    Dates are YYYY-MM-DD (end day included). Default: today and the next 30 days.
    """
    query = query.strip()
    if not query:
        raise ModelRetry("query is empty: pass words to look for in event titles or details.")
    begin, finish, zone = _window(ctx, start, end, SEARCH_DAYS)
    return _events(ctx, begin, finish, zone, query)
