"""Calendar tools through the real google-api-python-client against the local fake."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from co_google.tools.calendar import list_calendar_events, search_calendar_events
from fake_google import not_enabled
from pydantic_ai import ModelRetry

PARIS = ZoneInfo("Europe/Paris")


def timed(event_id, summary, start, end, **extra):
    return {
        "kind": "calendar#event",
        "id": event_id,
        "status": "confirmed",
        "htmlLink": f"https://www.google.com/calendar/event?eid={event_id}",
        "summary": summary,
        "start": {"dateTime": start, "timeZone": "Europe/Paris"},
        "end": {"dateTime": end, "timeZone": "Europe/Paris"},
        **extra,
    }


def all_day(event_id, summary, first, after_last):
    return {
        "kind": "calendar#event",
        "id": event_id,
        "status": "confirmed",
        "htmlLink": f"https://www.google.com/calendar/event?eid={event_id}",
        "summary": summary,
        "start": {"date": first},
        "end": {"date": after_last},
    }


@pytest.fixture
def calendar(fake):
    fake.events = [
        timed(
            "e1",
            "Dentist",
            "2026-03-10T09:30:00+01:00",
            "2026-03-10T10:15:00+01:00",
            location="12 rue X",
        ),
        # Stored in UTC: shown in the user's zone (Paris, UTC+1 in March).
        timed("e2", "Standup", "2026-03-11T08:00:00Z", "2026-03-11T08:15:00Z"),
        all_day("e3", "Holiday", "2026-03-12", "2026-03-15"),
        all_day("e4", "Birthday", "2026-03-20", "2026-03-21"),
        {
            **timed(
                "e5", "Cancelled sync", "2026-03-10T11:00:00+01:00", "2026-03-10T12:00:00+01:00"
            ),
            "status": "cancelled",
        },
    ]
    return fake


def test_range_lists_timed_and_all_day_events_in_the_users_zone(calendar, run_tool):
    result = run_tool(list_calendar_events, start="2026-03-10", end="2026-03-14")
    assert result.count == 3
    lines = result.display
    assert "Tue 2026-03-10 09:30–10:15 · Dentist" in lines and "at 12 rue X" in lines
    assert "Wed 2026-03-11 09:00–09:15 · Standup" in lines
    assert "Thu 2026-03-12 → Sat 2026-03-14 · all day · Holiday" in lines
    assert "Birthday" not in lines and "Cancelled" not in lines
    assert "· Dentist · id: e1" in lines
    (request,) = calendar.reached("/calendar/v3/calendars/primary/events")
    assert request["params"]["timeMin"] == "2026-03-10T00:00:00+01:00"
    assert request["params"]["timeMax"] == "2026-03-15T00:00:00+01:00"  # end day included
    assert request["params"]["singleEvents"] == "true"
    assert request["params"]["timeZone"] == "Europe/Paris"


def test_single_all_day_event(calendar, run_tool):
    result = run_tool(list_calendar_events, start="2026-03-20", end="2026-03-20")
    assert result.count == 1 and "Fri 2026-03-20 · all day · Birthday" in result.display


def test_default_is_today_and_the_next_seven_days(calendar, run_tool):
    today = datetime.now(PARIS).replace(hour=0, minute=0, second=0, microsecond=0)
    soon, late = today + timedelta(days=6, hours=10), today + timedelta(days=8, hours=10)
    calendar.events = [
        timed("s", "Soon", soon.isoformat(), (soon + timedelta(hours=1)).isoformat()),
        timed("l", "Later", late.isoformat(), (late + timedelta(hours=1)).isoformat()),
    ]
    result = run_tool(list_calendar_events)
    assert result.count == 1 and "Soon" in result.display and "Later" not in result.display
    params = calendar.reached("/calendar/v3/calendars/")[0]["params"]
    assert datetime.fromisoformat(params["timeMin"]) == today
    assert datetime.fromisoformat(params["timeMax"]) == today + timedelta(days=7)


def test_no_events_is_count_zero(calendar, run_tool):
    result = run_tool(list_calendar_events, start="2027-01-01", end="2027-01-02")
    assert result.count == 0 and "No events" in result.display


@pytest.mark.parametrize("bad", ["next tuesday", "2026-02-30", "10/03/2026"])
def test_bad_dates_are_a_retry_with_the_format(calendar, run_tool, bad):
    with pytest.raises(ModelRetry, match="Use YYYY-MM-DD"):
        run_tool(list_calendar_events, start=bad)
    assert calendar.reached("/calendar/") == []


def test_end_before_start_is_a_retry(calendar, run_tool):
    with pytest.raises(ModelRetry, match="must be after start"):
        run_tool(list_calendar_events, start="2026-03-10", end="2026-03-01")


def test_search_sends_the_query_and_defaults_to_a_month(calendar, run_tool):
    result = run_tool(search_calendar_events, query="dentist", start="2026-03-01")
    assert result.count == 1 and "Dentist" in result.display
    params = calendar.reached("/calendar/v3/calendars/")[0]["params"]
    assert params["q"] == "dentist"
    assert params["timeMax"].startswith("2026-03-31")


def test_events_across_pages_are_all_listed(calendar, run_tool):
    calendar.events = [
        timed(
            f"p{n}",
            f"Meeting {n}",
            f"2026-05-04T{8 + n // 6:02d}:{(n % 6) * 10:02d}:00+02:00",
            f"2026-05-04T{8 + n // 6:02d}:{(n % 6) * 10 + 5:02d}:00+02:00",
        )
        for n in range(60)
    ]
    result = run_tool(list_calendar_events, start="2026-05-04", end="2026-05-04")
    assert result.count == 60 and not result.has_more
    # maxResults=50, then the next page
    assert len(calendar.reached("/calendar/v3/calendars/primary/events")) == 2


def test_calendar_api_not_enabled(calendar, run_tool):
    calendar.fail("/calendar/", (403, not_enabled("calendar-json.googleapis.com")))
    with pytest.raises(ModelRetry, match="gcloud services enable calendar-json.googleapis.com"):
        run_tool(list_calendar_events, start="2026-03-10")


@pytest.fixture
def calendars(calendar):
    calendar.calendars = [
        {"id": "team@group.calendar.google.com", "summary": "Team", "selected": True},
        {"id": "fr#holiday@group.v.calendar.google.com", "summary": "Holidays", "selected": True},
        {"id": "old@group.calendar.google.com", "summary": "Old project"},  # not shown
    ]
    calendar.calendar_events = {
        "team@group.calendar.google.com": [
            timed(
                "t1",
                "Sprint review",
                "2026-03-10T14:00:00+01:00",
                "2026-03-10T15:00:00+01:00",
                attendees=[
                    {"email": "me@example.com", "self": True, "responseStatus": "accepted"},
                    {
                        "email": "bob@example.org",
                        "displayName": "Bob",
                        "responseStatus": "declined",
                    },
                    {"email": "ann@example.org", "optional": True, "responseStatus": "needsAction"},
                ],
                organizer={"email": "bob@example.org", "displayName": "Bob"},
                conferenceData={
                    "entryPoints": [
                        {"entryPointType": "video", "uri": "https://meet.google.com/abc-defg-hij"},
                        {"entryPointType": "phone", "label": "+33 1 23 45 67 89", "pin": "123456"},
                    ]
                },
                description="<p>Demo the <b>search</b></p>",
            )
        ],
        "fr#holiday@group.v.calendar.google.com": [
            all_day("h1", "Fête", "2026-03-11", "2026-03-12")
        ],
        "old@group.calendar.google.com": [
            timed("o1", "Old sync", "2026-03-10T08:00:00+01:00", "2026-03-10T08:30:00+01:00")
        ],
    }
    return calendar


def test_events_of_every_shown_calendar_are_merged_in_time_order(calendars, run_tool):
    result = run_tool(list_calendar_events, start="2026-03-10", end="2026-03-11")
    lines = result.display.splitlines()[1:]
    titles = [line.split(" · ")[1] for line in lines if line.startswith("- ")]
    assert titles == ["Dentist", "Sprint review [Team]", "all day", "Standup"]
    assert "Fête [Holidays]" in result.display and "Old sync" not in result.display
    # the calendar list once, then every calendar's events in one batch request
    batch = [r for r in calendars.reached("/calendar/v3/calendars/") if r["in_batch"]]
    assert len(batch) == 3
    assert calendars.http_requests == 2


def test_one_calendar_by_name(calendars, run_tool):
    result = run_tool(list_calendar_events, start="2026-03-10", calendar="old project")
    assert result.count == 1 and "Old sync [Old project]" in result.display
    with pytest.raises(ModelRetry, match="Calendars: .*Team, Holidays, Old project"):
        run_tool(list_calendar_events, calendar="Gym")


def test_event_details_show_attendees_answers_and_the_meeting_link(calendars, run_tool):
    from co_google.tools.calendar import read_calendar_event

    run_tool(list_calendar_events, start="2026-03-10")
    text = run_tool(read_calendar_event, event_id="t1")
    assert text.startswith("# Sprint review\nWhen: Tue 2026-03-10 14:00–15:00\nCalendar: Team")
    assert (
        "Meeting: https://meet.google.com/abc-defg-hij; phone +33 1 23 45 67 89 PIN 123456" in text
    )
    assert "Organizer: Bob <bob@example.org>" in text
    assert "- me@example.com: accepted (you)" in text
    assert "- Bob <bob@example.org>: declined" in text
    assert "- ann@example.org: no answer (optional)" in text
    assert "Demo the search" in text and "<b>" not in text
    (got,) = calendars.reached("/calendar/v3/calendars/team%40group.calendar.google.com/events/t1")
    with pytest.raises(ModelRetry, match="No event has id 'nope'"):
        run_tool(read_calendar_event, event_id="nope")


def test_free_busy_for_me_and_others_with_the_slots_we_share(calendars, run_tool):
    from co_google.tools.calendar import free_busy

    calendars.calendar_events["bob@example.org"] = [
        timed("b1", "Bob busy", "2026-03-10T11:00:00+01:00", "2026-03-10T12:30:00+01:00")
    ]
    result = run_tool(free_busy, start="2026-03-10", people="bob@example.org, who@else.org")
    text = result.display
    assert "- you: Tue 2026-03-10 09:30–10:15" in text
    assert "- bob@example.org: Tue 2026-03-10 11:00–12:30" in text
    assert (
        "- who@else.org: unknown — Google shows no calendar for it (notFound: it has none, "
        "or it is not shared with the user)" in text
    )
    assert (
        "Free for everyone Google showed (weekdays 09:00–18:00): Tue 2026-03-10 09:00–09:30, "
        "Tue 2026-03-10 10:15–11:00, Tue 2026-03-10 12:30–18:00" in text
    )
    (query,) = calendars.reached("/calendar/v3/freeBusy", "POST")
    sent = __import__("json").loads(query["body"])
    assert [i["id"] for i in sent["items"]] == ["primary", "bob@example.org", "who@else.org"]
    assert sent["timeZone"] == "Europe/Paris"


def test_busy_calendars_are_cut_in_merged_order_not_one_calendar_at_a_time(calendars, run_tool):
    """My calendar has 150 events over the week, Team 60 on Monday alone: the first 100
    in time are Team's 60 and my first 40; none of Team's is lost from the middle."""
    monday = datetime(2026, 3, 9, 8, 0, tzinfo=PARIS)
    mine = [monday + timedelta(minutes=67 * n) for n in range(150)]
    team = [monday + timedelta(minutes=5 * n + 2) for n in range(60)]
    calendars.events = [
        timed(f"m{n}", f"Mine {n}", t.isoformat(), (t + timedelta(minutes=1)).isoformat())
        for n, t in enumerate(mine)
    ]
    calendars.calendar_events["team@group.calendar.google.com"] = [
        timed(f"t{n}", f"Team {n}", t.isoformat(), (t + timedelta(minutes=1)).isoformat())
        for n, t in enumerate(team)
    ]
    calendars.calendar_events["fr#holiday@group.v.calendar.google.com"] = []
    result = run_tool(list_calendar_events, start="2026-03-09", end="2026-03-15")
    shown = [line.split(" · ")[1] for line in result.display.splitlines() if line.startswith("- ")]
    expected = sorted(
        [(t, f"Mine {n}") for n, t in enumerate(mine)]
        + [(t, f"Team {n} [Team]") for n, t in enumerate(team)]
    )[:100]
    assert shown == [title for _t, title in expected]
    assert all(f"Team {n} [Team]" in shown for n in range(60))
    assert result.count == 100 and result.has_more
    last = expected[-1][0]
    assert f"Only the first 100 events, up to {last:%a %Y-%m-%d %H:%M}, are shown" in result.display
    assert "(in: your calendar)" in result.display and f"start={last:%Y-%m-%d}" in result.display


def test_short_and_empty_pages_are_followed_while_merging(calendars, run_tool):
    calendars.page_size_cap = 3
    result = run_tool(list_calendar_events, start="2026-03-10", end="2026-03-11")
    titles = [line.split(" · ")[1] for line in result.display.splitlines() if line.startswith("- ")]
    assert titles == ["Dentist", "Sprint review [Team]", "all day", "Standup"]
    assert not result.has_more


def test_free_busy_errors_are_told_by_googles_reason(calendars, run_tool):
    from co_google.tools.calendar import free_busy

    calendars.calendar_events["ok@example.org"] = []
    calendars.calendar_events["flaky@example.org"] = []
    calendars.failing_calendars = {"flaky@example.org"}
    result = run_tool(
        free_busy, start="2026-03-10", people="ok@example.org, flaky@example.org, nobody@x.org"
    )
    text = result.display
    assert "- ok@example.org: free the whole time" in text
    assert "- flaky@example.org: unknown — Google could not work it out this time " in text
    assert "(internalError: ask again)" in text
    assert "- nobody@x.org: unknown — Google shows no calendar for it (notFound" in text
    assert "Free for everyone Google showed" in text
    assert "not shared" not in text.split("flaky@example.org")[1].split("\n")[0]


def test_more_people_than_googles_50_calendars_is_a_retry_before_asking(calendars, run_tool):
    from co_google.tools.calendar import free_busy

    people = ", ".join(f"p{n}@example.org" for n in range(50))  # with yours: 51
    with pytest.raises(ModelRetry, match="at most 50 calendars.*49 people"):
        run_tool(free_busy, start="2026-03-10", people=people)
    assert calendars.reached("/calendar/v3/freeBusy", "POST") == []
    fits = ", ".join(f"p{n}@example.org" for n in range(49))
    for n in range(49):
        calendars.calendar_events[f"p{n}@example.org"] = []
    text = run_tool(free_busy, start="2026-03-10", people=fits).display
    assert "unknown" not in text and "- p48@example.org: free the whole time" in text


def test_a_calendar_google_leaves_out_past_its_limit_is_named_with_the_limit(calendars, run_tool):
    from co_google.tools.calendar import free_busy

    calendars.calendar_groups["team@example.org"] = [f"m{n}@example.org" for n in range(60)]
    for n in range(60):
        calendars.calendar_events[f"m{n}@example.org"] = []
    text = run_tool(free_busy, start="2026-03-10", people="team@example.org").display
    assert "- m0@example.org (team@example.org): free the whole time" in text
    assert (
        "- m59@example.org (team@example.org): unknown — past the 50 calendars Google answers "
        "in one query (tooManyCalendarsRequested): ask for fewer people at once" in text
    )


def test_a_group_too_big_to_expand_says_so(calendars, run_tool):
    from co_google.tools.calendar import free_busy

    calendars.calendar_groups["all@example.org"] = [f"a{n}@example.org" for n in range(101)]
    text = run_tool(free_busy, start="2026-03-10", people="all@example.org").display
    assert "- all@example.org: unknown — the group has more members than the 100 Google " in text
    assert "(groupTooBig)" in text
    assert "free the whole time" not in text.split("all@example.org")[1]


def test_a_calendar_google_says_nothing_about_is_not_called_free(calendars, run_tool):
    from co_google.tools.calendar import free_busy

    calendars.calendar_groups["pair@example.org"] = ["x@example.org"]
    calendars.calendar_events["x@example.org"] = []
    text = run_tool(free_busy, start="2026-03-10", people="pair@example.org").display
    assert "- x@example.org (pair@example.org): free the whole time" in text
    assert "- pair@example.org: free" not in text
