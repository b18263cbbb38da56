"""Calendar tools (read-only): events of every calendar the user shows, one event's details
(attendees, meeting link), and free/busy times."""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from co_core import ModelRetry, ToolContext, ToolResult
from co_google.tools._call import call, call_many, cap, services
from co_google.tools.gmail import html_to_text

LIST_DAYS = 7
SEARCH_DAYS = 30
MAX_EVENTS = 100
PAGE = 50  # events per Calendar request
FORMAT_HINT = "Use YYYY-MM-DD (e.g. 2026-03-14), optionally with a time: 2026-03-14T09:30."
EVENT_ID = re.compile(r"^[A-Za-z0-9_@.\-]{1,1100}$")
WORK_HOURS = (9, 18)  # free slots are looked for on weekdays between these hours
MIN_FREE = timedelta(minutes=30)
RESPONSES = {
    "accepted": "accepted",
    "declined": "declined",
    "tentative": "maybe",
    "needsAction": "no answer",
}


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
    ctx: ToolContext, start: str | None, end: str | None, days: int
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


def _calendars(ctx: ToolContext) -> list[dict[str, Any]]:
    """The user's calendar list, asked once per session."""
    google = services(ctx)
    if google.calendars is None:
        entries: list[dict[str, Any]] = []
        token = None
        while True:
            page = call(
                ctx,
                "calendar",
                partial(_calendar_page, token=token),
            )
            entries += page.get("items", [])
            token = page.get("nextPageToken")
            if not token:
                break
        google.calendars = entries
    return google.calendars


def _name(entry: dict[str, Any]) -> str:
    return str(entry.get("summaryOverride") or entry.get("summary") or entry.get("id"))


def _chosen(ctx: ToolContext, calendar: str) -> list[tuple[str, str]]:
    """(calendar id, name to show or "" for the primary) for ``calendar``, or every calendar
    the user shows in Google Calendar when it is empty."""
    wanted = calendar.strip().lower()
    if wanted in ("primary", "me"):
        return [("primary", "")]
    entries = _calendars(ctx)
    if not wanted:
        shown = [e for e in entries if e.get("primary") or e.get("selected")]
    else:
        shown = [e for e in entries if wanted in (_name(e).lower(), str(e.get("id")).lower())]
        if not shown:
            names = ", ".join(_name(e) for e in entries) or "none"
            raise ModelRetry(f"There is no calendar {calendar!r}. Calendars: {names}")
    return [("primary", "") if e.get("primary") else (str(e["id"]), _name(e)) for e in shown] or [
        ("primary", "")
    ]


@dataclass
class _Feed:
    """One calendar's events in start order, a page at a time (Calendar orders each
    calendar's events by start with orderBy=startTime; a page may hold fewer events than
    asked for, even none, while a nextPageToken follows)."""

    calendar_id: str
    shown: str
    fetch: Callable[[str, str], Any]  # (calendar id, page token) -> events page
    events: deque[dict[str, Any]] = field(default_factory=deque)
    token: str | None = None

    def take(self, page: Any) -> None:
        if page is None:  # the calendar went away since it was listed
            self.token = None
            return
        self.events.extend(e for e in page.get("items", []) if e.get("status") != "cancelled")
        self.token = page.get("nextPageToken")

    def head(self) -> dict[str, Any] | None:
        """The next event, fetching pages while this calendar may still have one."""
        while not self.events and self.token:
            self.take(self.fetch(self.calendar_id, self.token))
        return self.events[0] if self.events else None


def _events(
    ctx: ToolContext,
    begin: datetime,
    finish: datetime,
    zone: tzinfo,
    query: str | None,
    calendar: str = "",
) -> ToolResult:
    google = services(ctx)
    chosen = _chosen(ctx, calendar)

    def params(calendar_id: str, token: str | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {
            "calendarId": calendar_id,
            "timeMin": begin.isoformat(),
            "timeMax": finish.isoformat(),
            "singleEvents": True,
            "orderBy": "startTime",
            "maxResults": PAGE,
            "pageToken": token,
        }
        if isinstance(zone, ZoneInfo):
            found["timeZone"] = zone.key
        if query:
            found["q"] = query
        return found

    def fetch(calendar_id: str, token: str) -> Any:
        return call(ctx, "calendar", partial(_events_page, params=params(calendar_id, token)))

    if len(chosen) == 1:
        pages = [call(ctx, "calendar", lambda cal: cal.events().list(**params(chosen[0][0])))]
    else:  # every calendar's first page in one HTTP request
        pages = call_many(
            ctx, "calendar", lambda cal: [cal.events().list(**params(c)) for c, _n in chosen]
        )
    feeds = [_Feed(calendar_id, shown, fetch) for calendar_id, shown in chosen]
    for feed, page in zip(feeds, pages, strict=True):
        feed.take(page)
    # The calendars merged in start order; the cut applies to the merged order, so no
    # calendar loses events from the middle of the range.
    merged: list[tuple[dict[str, Any], str]] = []
    while len(merged) < MAX_EVENTS:
        heads = [(f, f.head()) for f in feeds]
        ready = [(_start(event, zone), n, f) for n, (f, event) in enumerate(heads) if event]
        if not ready:
            break
        _moment, _order, feed = min(ready, key=lambda item: (item[0], item[1]))
        event = feed.events.popleft()
        google.event_calendars[str(event.get("id"))] = feed.calendar_id
        merged.append((event, feed.shown))
    left = [f for f in feeds if f.head() is not None]
    span = f"{begin:%Y-%m-%d} to {(finish - timedelta(seconds=1)):%Y-%m-%d}"
    if not merged:
        what = f"matching {query!r} " if query else ""
        return ToolResult.empty(f"No events {what}from {span}.")
    lines = [f"Events {span} ({getattr(zone, 'key', str(zone))}):"]
    for event, where in merged:
        title = event.get("summary") or "(no title)"
        label = f" [{where}]" if where else ""
        lines.append(f"- {_when(event, zone)} · {title}{label} · id: {event.get('id')}")
        if event.get("location"):
            lines.append(f"  at {event['location']}")
    if left:
        last = _start(merged[-1][0], zone).astimezone(zone)
        names = ", ".join(f.shown or "your calendar" for f in left)
        lines.append(
            f"Only the first {MAX_EVENTS} events, up to {last:%a %Y-%m-%d %H:%M}, are shown; "
            f"later ones in this range are not (in: {names}). To see them, list again "
            f"with start={last:%Y-%m-%d}, or narrow the dates."
        )
    return ToolResult(display="\n".join(lines), count=len(merged), has_more=bool(left))


def _start(event: dict[str, Any], zone: tzinfo) -> datetime:
    start = event.get("start", {})
    if "dateTime" in start:
        return datetime.fromisoformat(start["dateTime"])
    return datetime.combine(date.fromisoformat(start["date"]), time(0), zone)


def list_calendar_events(
    ctx: ToolContext, start: str = "", end: str = "", calendar: str = ""
) -> ToolResult:
    """List Google Calendar events (default: the next 7 days).

    Args:
        start: YYYY-MM-DD.
        end: YYYY-MM-DD, included.
        calendar: one calendar's name.
    """
    begin, finish, zone = _window(ctx, start, end, LIST_DAYS)
    return _events(ctx, begin, finish, zone, None, calendar)


def search_calendar_events(
    ctx: ToolContext,
    query: str,
    start: str = "",
    end: str = "",
    calendar: str = "",
) -> ToolResult:
    """Search Google Calendar events by words (default: the next 30 days).

    Args:
        start: YYYY-MM-DD.
        end: YYYY-MM-DD, included.
        calendar: one calendar's name.
    """
    query = query.strip()
    if not query:
        raise ModelRetry("query is empty: pass words to look for in event titles or details.")
    begin, finish, zone = _window(ctx, start, end, SEARCH_DAYS)
    return _events(ctx, begin, finish, zone, query, calendar)


def _meeting(event: dict[str, Any]) -> str | None:
    """The video link (Meet or another conference), and a phone entry when there is one."""
    points = (event.get("conferenceData") or {}).get("entryPoints") or []
    video = next((p.get("uri") for p in points if p.get("entryPointType") == "video"), None)
    video = video or event.get("hangoutLink")
    phone = next((p for p in points if p.get("entryPointType") == "phone"), None)
    if not video and not phone:
        return None
    text = video or ""
    if phone:
        dial = phone.get("label") or str(phone.get("uri", "")).removeprefix("tel:")
        pin = f" PIN {phone['pin']}" if phone.get("pin") else ""
        text += ("; " if text else "") + f"phone {dial}{pin}"
    return text


def _person(who: dict[str, Any]) -> str:
    name, mail = who.get("displayName"), who.get("email", "?")
    return f"{name} <{mail}>" if name else str(mail)


def read_calendar_event(ctx: ToolContext, event_id: str) -> str:
    """Read a calendar event: time, place, link, attendees.

    Args:
        event_id: from list or search_calendar_events.
    """
    event_id = event_id.strip()
    if not EVENT_ID.match(event_id):
        raise ModelRetry(f"{event_id!r} is not an event id; use an id from list_calendar_events.")
    google = services(ctx)
    calendar_id = google.event_calendars.get(event_id, "primary")
    event = call(
        ctx,
        "calendar",
        lambda cal: cal.events().get(calendarId=calendar_id, eventId=event_id),
        not_found=f"No event has id {event_id!r}; use an id from list_calendar_events.",
    )
    zone = user_zone(google.section.time_zone)
    lines = [f"# {event.get('summary') or '(no title)'}", f"When: {_when(event, zone)}"]
    if calendar_id != "primary":
        entry = next((e for e in google.calendars or [] if e.get("id") == calendar_id), None)
        lines.append(f"Calendar: {_name(entry) if entry else calendar_id}")
    if event.get("recurringEventId"):
        lines.append("Repeats: one occurrence of a recurring event")
    if event.get("location"):
        lines.append(f"Where: {event['location']}")
    meeting = _meeting(event)
    if meeting:
        lines.append(f"Meeting: {meeting}")
    if event.get("organizer"):
        lines.append(f"Organizer: {_person(event['organizer'])}")
    attendees = event.get("attendees") or []
    if attendees:
        lines.append(f"Attendees ({len(attendees)}):")
        for who in attendees:
            answer = RESPONSES.get(who.get("responseStatus", ""), who.get("responseStatus", "?"))
            extra = " (optional)" if who.get("optional") else ""
            extra += " (you)" if who.get("self") else ""
            lines.append(f"- {_person(who)}: {answer}{extra}")
    for item in event.get("attachments") or []:
        lines.append(f"Attachment: {item.get('title', 'file')} {item.get('fileUrl', '')}".rstrip())
    if event.get("htmlLink"):
        lines.append(f"Link: {event['htmlLink']}")
    description = event.get("description")
    if description:
        text = html_to_text(description) if "<" in description else description
        lines.append("\n" + cap(text.strip(), google.section.max_chars))
    return "\n".join(lines)


def _free(
    busy: list[tuple[datetime, datetime]], begin: datetime, finish: datetime, zone: tzinfo
) -> list[tuple[datetime, datetime]]:
    """Gaps of at least MIN_FREE in working hours on weekdays, outside every busy block."""
    slots = []
    day = begin.astimezone(zone).date()
    while datetime.combine(day, time(0), zone) < finish:
        if day.weekday() < 5:
            lo = max(begin, datetime.combine(day, time(WORK_HOURS[0]), zone))
            hi = min(finish, datetime.combine(day, time(WORK_HOURS[1]), zone))
            for start, stop in sorted(busy):
                if stop <= lo or start >= hi:
                    continue
                if start - lo >= MIN_FREE:
                    slots.append((lo, start))
                lo = max(lo, stop)
            if hi - lo >= MIN_FREE:
                slots.append((lo, hi))
        day += timedelta(days=1)
    return slots


def _span(start: datetime, stop: datetime, zone: tzinfo) -> str:
    a, b = start.astimezone(zone), stop.astimezone(zone)
    tail = f"{b:%H:%M}" if a.date() == b.date() else f"{b:%a %Y-%m-%d %H:%M}"
    return f"{a:%a %Y-%m-%d %H:%M}–{tail}"


# FreeBusyRequest: "calendarExpansionMax ... Maximum value is 50", "groupExpansionMax ...
# Maximum value is 100"; the Error schema's documented reasons, in the user's words.
FREEBUSY_CALENDARS = 50
FREEBUSY_GROUP = 100
WHY_UNKNOWN = {
    "notFound": "Google shows no calendar for it (notFound: it has none, or it is not "
    "shared with the user)",
    "tooManyCalendarsRequested": f"past the {FREEBUSY_CALENDARS} calendars Google answers "
    "in one query (tooManyCalendarsRequested): ask for fewer people at once",
    "groupTooBig": f"the group has more members than the {FREEBUSY_GROUP} Google expands in "
    "one query (groupTooBig): name the people instead",
    "internalError": "Google could not work it out this time (internalError: ask again)",
    "noAnswer": "Google's answer said nothing about it",
}


def _why_unknown(errors: list[dict[str, Any]]) -> str:
    """Google's reasons for a calendar or group it could not answer, as the user reads them."""
    reasons = list(dict.fromkeys(str(e.get("reason") or "unknown") for e in errors))
    return "; ".join(WHY_UNKNOWN.get(r, f"Google could not tell ({r})") for r in reasons)


def free_busy(ctx: ToolContext, start: str, end: str = "", people: str = "") -> ToolResult:
    """Busy times, and free slots shared with others (weekdays 9-18).

    Args:
        start: YYYY-MM-DD.
        end: YYYY-MM-DD, included.
        people: email addresses, comma-separated.
    """
    zone = user_zone(services(ctx).section.time_zone)
    begin = parse_when(start, zone)
    finish = parse_when(end or start, zone, end=True)
    if finish <= begin:
        raise ModelRetry(f"end ({end}) must be after start ({start}). {FORMAT_HINT}")
    if finish - begin > timedelta(days=62):
        raise ModelRetry("Ask for at most 62 days at once (Google's free/busy limit).")
    others = list(dict.fromkeys(p.strip() for p in people.split(",") if p.strip()))
    if len(others) >= FREEBUSY_CALENDARS:
        raise ModelRetry(
            f"Google answers free/busy for at most {FREEBUSY_CALENDARS} calendars at once: "
            f"yours and {FREEBUSY_CALENDARS - 1} people; ask for fewer ({len(others)} given)."
        )
    body: dict[str, Any] = {
        "timeMin": begin.isoformat(),
        "timeMax": finish.isoformat(),
        "items": [{"id": "primary"}] + [{"id": who} for who in others],
    }
    if isinstance(zone, ZoneInfo):
        body["timeZone"] = zone.key
    answer = call(ctx, "calendar", lambda cal: cal.freebusy().query(body=body))
    calendars = answer.get("calendars", {})
    groups = answer.get("groups", {})
    lines = [
        f"Busy times {begin:%Y-%m-%d} to {(finish - timedelta(seconds=1)):%Y-%m-%d} "
        f"({getattr(zone, 'key', str(zone))}):"
    ]
    # (shown name, calendar id or None, errors): a group stands for its members' calendars.
    rows: list[tuple[str, str | None, list[dict[str, Any]]]] = []
    for who in ["primary", *others]:
        group = groups.get(who)
        if group is None:
            rows.append(("you" if who == "primary" else who, who, []))
        elif group.get("errors"):
            rows.append((who, None, group["errors"]))
        else:
            rows += [(f"{member} ({who})", member, []) for member in group.get("calendars", [])]
    everyone: list[tuple[datetime, datetime]] = []
    unknown = 0
    for name, calendar, errors in rows:
        entry = calendars.get(calendar, {}) if calendar else {}
        errors = errors or entry.get("errors") or []
        if calendar and calendar not in calendars and not errors:
            errors = [{"reason": "noAnswer"}]
        if errors:
            unknown += 1
            lines.append(f"- {name}: unknown — {_why_unknown(errors)}")
            continue
        blocks = [
            (datetime.fromisoformat(b["start"]), datetime.fromisoformat(b["end"]))
            for b in entry.get("busy", [])
        ]
        everyone += blocks
        shown = ", ".join(_span(a, b, zone) for a, b in blocks) or "free the whole time"
        lines.append(f"- {name}: {shown}")
    slots = _free(everyone, begin, finish, zone)
    lines.append(
        f"Free for everyone{' Google showed' if unknown else ''} (weekdays 09:00–18:00): "
        + (", ".join(_span(a, b, zone) for a, b in slots) or "no slot of 30 minutes or more")
    )
    return ToolResult(display="\n".join(lines), count=len(slots), has_more=False)


def _calendar_page(cal: Any, token: str | None) -> Any:
    return cal.calendarList().list(maxResults=250, pageToken=token)


def _events_page(cal: Any, params: dict[str, Any]) -> Any:
    return cal.events().list(**params)
