"""People are decided by identity: a DM approved for one member never reaches another.

Each test runs a turn through the real agent, policy engine and tools against the strict
Slack fake, in a workspace where someone else has taken Grace's name.
"""

from __future__ import annotations

import pytest
from slack_fake import _user

from co_core.testing import Approvals, make_app, run_turn, script_calls

GRACE = "slack:post:@grace(U0GRACE001)"


def namesake(fake, **names: str) -> None:
    """Mallory joins, calling herself whatever ``names`` say (listed before Grace, so a
    first-match lookup would pick her)."""
    user = _user(
        "U0MALLORY1", "mallory", names.get("real", "Mallory Evil"), names.get("display", "")
    )
    fake.users = {"U0MALLORY1": user, **fake.users}


def allow(*keys: str) -> dict:
    return {"policy": {"rules": [{"match": key, "effect": "allow"} for key in keys]}}


def dms(fake) -> dict[str, list[str]]:
    """Who received what: DM channel -> texts."""
    out: dict[str, list[str]] = {}
    for post in fake.posted:
        out.setdefault(post.params["channel"], []).append(post.params["markdown_text"])
    return out


@pytest.mark.parametrize(
    "names",
    [
        {"display": "grace"},
        {"display": "Grace"},
        {"display": " GRACE "},
        {"display": "ｇｒａｃｅ"},  # fullwidth letters read the same
        {"real": "grace"},
        {"real": "Grace Hopper"},
    ],
    ids=["display", "capital", "spaced", "fullwidth", "real-name", "full-real-name"],
)
def test_a_shared_name_is_refused_with_the_candidates_and_nothing_is_sent(slack_env, fake, names):
    namesake(fake, **names)
    typed = "@Grace Hopper" if names.get("real") == "Grace Hopper" else "@grace"
    app = make_app(allow(GRACE, "slack:post:@grace", "slack:post:*"))
    turn = run_turn(
        app, "dm grace", script_calls(("post_slack_message", {"channel": typed, "text": "hi"}))
    )
    assert fake.posted == [] and fake.calls("conversations.open") == []
    assert "2 people in Slack are called" in turn.output
    assert "@grace(U0GRACE001)" in turn.output and "@mallory(U0MALLORY1)" in turn.output
    assert turn.approvals.asked == []  # refused before anyone is asked


def test_the_dm_approved_for_grace_goes_to_grace_by_id(slack_env, fake):
    namesake(fake, display="grace")
    app = make_app(allow(GRACE))
    script = script_calls(
        ("post_slack_message", {"channel": "@grace", "text": "ambiguous"}),
        ("post_slack_message", {"channel": "@grace(U0GRACE001)", "text": "your build is green"}),
    )
    turn = run_turn(app, "tell grace", script)
    assert dms(fake) == {"D0GRACE001": ["your build is green"]}
    assert turn.approvals.asked == []  # the rule for Grace's id covered it
    (opened,) = fake.calls("conversations.open")
    assert opened.params["users"] == "U0GRACE001"


@pytest.mark.parametrize(
    "typed",
    [
        "@grace(U0MALLORY1)",  # Grace's handle, Mallory's id
        "<@U0MALLORY1|grace>",  # Slack's mention syntax with a lying label
        "U0MALLORY1",
        "@mallory",
    ],
)
def test_a_rule_for_grace_does_not_cover_her_namesake(slack_env, fake, typed):
    namesake(fake, display="grace")
    app = make_app(allow(GRACE))
    desk = Approvals(False, reason="not her")
    turn = run_turn(
        app,
        "dm",
        script_calls(("post_slack_message", {"channel": typed, "text": "x"})),
        approvals=desk,
    )
    (asked,) = desk.asked
    assert asked.permission_key == "slack:post:@mallory(U0MALLORY1)"
    assert asked.args["channel"] == "@mallory(U0MALLORY1)"
    assert fake.posted == []
    assert "not her" in turn.output


def test_a_rule_written_for_a_name_no_longer_covers_anyone(slack_env, fake):
    """``slack:post:@grace`` once matched whoever "grace" resolved to; keys now carry
    the id, so such a rule allows nothing and the user is asked."""
    app = make_app(allow("slack:post:@grace"))
    desk = Approvals(True)
    run_turn(
        app,
        "dm",
        script_calls(("post_slack_message", {"channel": "@grace", "text": "x"})),
        approvals=desk,
    )
    assert [c.permission_key for c in desk.asked] == [GRACE]
    assert dms(fake) == {"D0GRACE001": ["x"]}


def test_an_always_for_grace_stays_hers_after_someone_takes_her_name(slack_env, fake):
    app = make_app({})
    desk = Approvals(True, scope="project")
    run_turn(
        app,
        "dm",
        script_calls(("post_slack_message", {"channel": "@grace", "text": "one"})),
        approvals=desk,
    )
    assert [c.permission_key for c in desk.asked] == [GRACE]

    namesake(fake, display="grace")  # later, Mallory renames herself
    later = Approvals(False, reason="no")
    app = make_app()
    script = script_calls(
        ("post_slack_message", {"channel": "@grace(U0GRACE001)", "text": "two"}),
        ("post_slack_message", {"channel": "U0MALLORY1", "text": "three"}),
    )
    run_turn(app, "dm", script, approvals=later)
    assert [c.permission_key for c in later.asked] == ["slack:post:@mallory(U0MALLORY1)"]
    assert dms(fake) == {"D0GRACE001": ["one", "two"]}


def test_reading_a_dm_is_keyed_by_the_person_too(slack_env, fake):
    app = make_app({})
    desk = Approvals(True)
    run_turn(
        app, "read", script_calls(("read_slack_channel", {"channel": "D0GRACE001"})), approvals=desk
    )
    # an unknown DM id is refused (the bot has no such conversation yet)
    assert desk.asked == []
    fake.ims["U0GRACE001"] = "D0GRACE001"
    turn = run_turn(app, "read", script_calls(("read_slack_channel", {"channel": "D0GRACE001"})))
    (call,) = turn.calls
    assert call["permission"] == "slack:read:@grace(U0GRACE001)" and call["status"] == "ok"
    assert call["args"]["channel"] == "@grace(U0GRACE001)"


def test_a_text_slack_would_refuse_is_refused_before_asking(slack_env, fake):
    desk = Approvals(True)
    script = script_calls(("post_slack_message", {"channel": "#releases", "text": "x" * 12_001}))
    turn = run_turn(make_app({}), "post", script, approvals=desk)
    assert desk.asked == [] and fake.posted == [] and "Slack allows 12000" in turn.output
