"""A draft holds exactly what was approved: the recipients keyed, and the subject shown.

The approval prompt shows the call's *resolved* arguments; these tests run drafts through
the real agent and policy and compare what the user was asked about with the MIME
message that reached the fake Gmail, and attack the address parsing with text that mail
programs could read as other recipients.
"""

from __future__ import annotations

import base64
import email
import email.utils
import random
from email import policy

import pytest
from co_google.keys import GOOGLE
from fake_google import gmail_message

from co_core.testing import Approvals, make_app, run_turn, script_calls


@pytest.fixture
def mailbox(fake):
    fake.labels = [
        {"id": "INBOX", "name": "INBOX", "type": "system"},
        {"id": "Label_7", "name": "Receipts", "type": "user"},
    ]
    fake.messages["m1"] = gmail_message(
        "m1",
        sender="Alice <alice@example.com>",
        to="me@example.com, Bob <bob@example.org>",
        cc="carol@example.com",
        subject="Lunch on Friday?",
        plain="Shall we?",
    )
    return fake


@pytest.fixture
def app(co_dirs, token, google_settings, monkeypatch):
    monkeypatch.setenv("CO_LOAD_PLUGINS", "google")
    return make_app({**google_settings, "tool_budget": 100_000})  # every tool, every turn


def sent(fake, index: int = -1) -> email.message.EmailMessage:
    raw = fake.drafts[index]["raw"]
    data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    return email.message_from_bytes(data, policy=policy.default)


def addresses(message, field: str) -> list[str]:
    return [a.addr_spec for h in message.get_all(field, []) for a in h.addresses]


def test_a_reply_is_approved_with_the_subject_and_recipients_it_will_have(mailbox, app):
    desk = Approvals(True)
    args = {"reply_to_id": "m1", "reply_all": True, "subject": "Quick question", "body": "Yes!"}
    run_turn(app, "reply", script_calls(("draft_email", args)), approvals=desk)
    (asked,) = desk.asked
    shown = dict(asked.args)
    assert shown["subject"] == "Re: Lunch on Friday?"  # not the model's "Quick question"
    assert shown["to"] == "Alice <alice@example.com>, Bob <bob@example.org>"
    assert shown["cc"] == "carol@example.com"
    assert asked.all_keys == (
        "gmail:draft:alice@example.com",
        "gmail:draft:bob@example.org",
        "gmail:draft:carol@example.com",
    )
    message = sent(mailbox)
    assert message["Subject"] == shown["subject"]
    assert message["To"] == shown["to"] and message["Cc"] == shown["cc"]
    assert mailbox.drafts[-1]["message"]["threadId"] == "t-m1"


def test_what_the_prompt_shows_for_a_new_email_is_what_the_draft_holds(mailbox, app):
    desk = Approvals(True)
    args = {
        "to": "Carol <Carol@EXAMPLE.com>, dan@bücher.example",
        "cc": '"boss@example.com" <eve@example.net>',
        "subject": "  Notes   for\tFriday ",
        "body": "x",
    }
    run_turn(app, "draft", script_calls(("draft_email", args)), approvals=desk)
    (asked,) = desk.asked
    assert asked.args["to"] == "Carol <carol@example.com>, dan@xn--bcher-kva.example"
    assert asked.args["cc"] == "eve@example.net"  # a name holding an address is dropped
    assert asked.args["subject"] == "Notes for Friday"
    message = sent(mailbox)
    assert (message["To"], message["Cc"], message["Subject"]) == (
        asked.args["to"],
        asked.args["cc"],
        asked.args["subject"],
    )
    keyed = [k.removeprefix("gmail:draft:") for k in asked.all_keys]
    assert keyed == addresses(message, "to") + addresses(message, "cc")


@pytest.mark.parametrize(
    "to",
    [
        "alice@example.org)<bob@example.org>",  # CVE-2023-27043: parsers disagree
        "Bob <bob@example.org> Eve <eve@example.net>",
        "a@example.org;b@example.org",
        "=?utf-8?b?PGV2ZUBleGFtcGxlLm5ldD4s?= <a@example.org>",  # "<eve@example.net>,"
        "friends: a@example.org, b@example.org;",
        '"eve mallory"@example.net',
        "a@[127.0.0.1]",
        "ｅｖｅ@example.net",  # non-ASCII local part
        "eve@exa_mple.net",
        "eve@localhost",
    ],
)
def test_text_mail_programs_could_read_differently_is_refused(mailbox, app, to):
    desk = Approvals(True)
    args = {"to": to, "subject": "s", "body": "x"}
    turn = run_turn(app, "draft", script_calls(("draft_email", args)), approvals=desk)
    assert desk.asked == [] and mailbox.drafts == []
    assert "use e.g. 'alice@example.com" in turn.output  # one line saying how to write it


@pytest.mark.parametrize(
    ("to", "key"),
    [
        ("Alice@Example.COM", "alice@example.com"),
        ("eve@ｅｘａｍｐｌｅ.net", "eve@example.net"),  # fullwidth domain: the same domain
        ("pay@pаypal.com", "pay@xn--pypal-4ve.com"),  # a Cyrillic "а" shows as punycode
        ("a@example.org (bob@example.org)", "a@example.org"),  # a comment is no recipient
        ("Ünïcode Nàme <u@example.org>", "u@example.org"),
        ("\u202eevil <u@example.org>", "u@example.org"),
    ],
)
def test_each_recipient_is_keyed_as_the_header_carries_it(mailbox, app, to, key):
    desk = Approvals(True)
    run_turn(
        app,
        "draft",
        script_calls(("draft_email", {"to": to, "subject": "s", "body": "x"})),
        approvals=desk,
    )
    (asked,) = desk.asked
    assert asked.all_keys == (f"gmail:draft:{key}",)
    assert addresses(sent(mailbox), "to") == [key]
    assert key in asked.args["to"] and "\u202e" not in asked.args["to"]


def test_a_rule_for_one_domain_cannot_be_dodged_by_spelling(mailbox, app, google_settings):
    deny = {
        "policy": {"rules": [{"match": "gmail:draft:*@xn--bcher-kva.example", "effect": "deny"}]}
    }
    app = make_app({**google_settings, **deny})
    for spelled in ("a@BÜCHER.example", "a@xn--bcher-kva.EXAMPLE", "A@bu\u0308cher.example"):
        turn = run_turn(
            app,
            "draft",
            script_calls(("draft_email", {"to": spelled, "subject": "s", "body": "x"})),
        )
        assert "Denied by policy" in turn.output, spelled
    assert mailbox.drafts == []


PIECES = [
    "alice@example.com",
    "Bob@Example.org",
    "<carol@example.net>",
    "Dan <dan@example.com>",
    '"Doe, John" <john@example.com>',
    '"x@evil.test" <eve@example.net>',
    "Jürgen <j@bücher.example>",
    "(comment) k@example.com",
    "l@example.com (Lou)",
    "m@example.com)",
    "<n@example.com",
    '"o" <o@example.com>>',
    "p@@example.com",
    "q@example.com <r@example.com>",
    "=?utf-8?q?S?= <s@example.com>",
    "t;u@example.com",
    "v@example.com\\",
    "w@exa mple.com",
    "\u200bx@example.com",
    "grp: y@example.com;",
]


def test_generated_recipient_lists_are_keyed_as_both_parsers_read_the_draft(mailbox, deps):
    """Differential: for random lists of tricky pieces, whatever Co accepts is keyed
    exactly as Python's strict and lenient parsers read the bytes it would send, and
    planning the shown arguments again gives the same draft."""
    from co_google.recipients import BadDraft, check, plan, resolved_args

    google = deps.resource(GOOGLE)
    rng = random.Random(2026)
    accepted = refused = 0
    for _ in range(600):
        text = rng.choice([", ", ",", " , ", " "]).join(rng.sample(PIECES, rng.randint(1, 4)))
        args = {"to": text, "subject": "s", "body": "x"}
        try:
            draft = plan(google, args)
            raw = check(draft, "x")
        except BadDraft:
            refused += 1
            continue
        accepted += 1
        parsed = email.message_from_bytes(raw, policy=policy.default)
        strict = addresses(parsed, "to")
        loose = [
            a for _n, a in email.utils.getaddresses([str(v) for v in parsed.get_all("to", [])])
        ]
        assert strict == loose == draft.addresses, text
        assert plan(google, resolved_args(draft, args)) == draft, text
    print(f"generated: {accepted} accepted, {refused} refused")
    assert accepted > 50 and refused > 50


def test_the_label_prompt_names_the_labels_that_will_change(mailbox, app):
    desk = Approvals(True)
    args = {"email_id": "m1", "add": "receipts", "remove": "unread"}
    run_turn(app, "label the email", script_calls(("label_email", args)), approvals=desk)
    (asked,) = desk.asked
    assert (asked.args["add"], asked.args["remove"]) == ("Receipts", "UNREAD")
    assert "Label_7" in mailbox.messages["m1"]["labelIds"]
    unknown = Approvals(True)
    turn = run_turn(
        app,
        "file it",
        script_calls(("label_email", {"email_id": "m1", "add": "Travel"})),
        approvals=unknown,
    )
    assert unknown.asked == [] and "There is no Gmail label 'Travel'" in turn.output


def test_a_subject_of_several_lines_is_refused_before_asking(mailbox, app):
    desk = Approvals(True)
    args = {"to": "carol@example.com", "subject": "hi\r\nBcc: all@example.com", "body": "x"}
    turn = run_turn(app, "draft", script_calls(("draft_email", args)), approvals=desk)
    assert desk.asked == [] and mailbox.drafts == [] and "subject must be one line" in turn.output
