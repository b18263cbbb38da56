"""Gmail tools through the real google-api-python-client against the local fake."""

from __future__ import annotations

import base64
import email
from email import policy

import pytest
from co_google.keys import GOOGLE
from co_google.tools.gmail import draft_email, list_emails, read_email, search_emails
from fake_google import RATE_LIMITED, gmail_message, not_enabled
from pydantic_ai import ModelRetry


@pytest.fixture
def mailbox(fake):
    fake.labels = [
        {"id": "INBOX", "name": "INBOX", "type": "system"},
        {"id": "Label_7", "name": "Receipts", "type": "user"},
    ]
    for message in (
        gmail_message(
            "m1",
            sender="Alice <alice@example.com>",
            subject="Lunch on Friday?",
            plain="Shall we try the new place? It's on me.",
            html="<p>Shall we try the <b>new place</b>?</p>",
            labels=("INBOX", "UNREAD"),
        ),
        gmail_message(
            "m2",
            sender="shop@example.net",
            subject="Your receipt",
            html="<html><style>p{color:red}</style><body><p>Total: 42 EUR</p>"
            "<script>alert(1)</script><p>Thanks &amp; bye</p></body></html>",
            attachment=("receipt.pdf", "application/pdf", b"%PDF" + bytes(96)),
            labels=("INBOX", "Label_7"),
        ),
        gmail_message(
            "m3",
            sender="Bob <bob@example.org>",
            subject="Re: project",
            plain="Ça marche — see you ✓",
            labels=("SENT",),
        ),
    ):
        fake.messages[message["id"]] = message
    return fake


def test_list_inbox_shows_sender_subject_and_ids(mailbox, run_tool):
    result = run_tool(list_emails)
    assert result.count == 2 and not result.has_more
    assert "Lunch on Friday? [unread]" in result.display
    assert "from Alice <alice@example.com>" in result.display and "id: m1" in result.display
    assert "It's on me" in result.display  # snippet HTML entities decoded
    assert "Re: project" not in result.display


def test_list_by_user_label_name_resolves_its_id(mailbox, run_tool):
    result = run_tool(list_emails, label="receipts")
    assert result.count == 1 and "Your receipt" in result.display
    listed = mailbox.reached("/gmail/v1/users/me/messages", "GET")[0]
    assert listed["multi"]["labelIds"] == ["Label_7"]


def test_unknown_label_is_a_retry_listing_the_labels(mailbox, run_tool):
    with pytest.raises(ModelRetry, match="Labels: INBOX, Receipts"):
        run_tool(list_emails, label="Travel")


def test_limit_and_has_more(mailbox, run_tool):
    result = run_tool(list_emails, limit=1)
    assert result.count == 1 and result.has_more
    with pytest.raises(ModelRetry, match="between 1 and 50"):
        run_tool(list_emails, limit=500)


def test_search_uses_gmail_query_syntax(mailbox, run_tool):
    result = run_tool(search_emails, query="from:alice")
    assert result.count == 1 and "Lunch" in result.display
    assert mailbox.reached("/gmail/v1/users/me/messages")[0]["params"]["q"] == "from:alice"
    empty = run_tool(search_emails, query="from:nobody")
    assert empty.count == 0 and "No emails" in empty.display


def test_read_prefers_the_text_part_and_shows_headers(mailbox, run_tool):
    text = run_tool(read_email, email_id="m1")
    assert "From: Alice <alice@example.com>" in text and "Subject: Lunch on Friday?" in text
    assert "Shall we try the new place? It's on me." in text
    assert "<b>" not in text


def test_read_html_only_mail_as_text_and_lists_attachments(mailbox, run_tool):
    text = run_tool(read_email, email_id="m2")
    assert "Total: 42 EUR" in text and "Thanks & bye" in text
    assert "alert(1)" not in text and "color:red" not in text and "<p>" not in text
    assert "Attachments: 1. receipt.pdf (application/pdf, 100 bytes)" in text


def test_read_decodes_utf8_base64url(mailbox, run_tool):
    assert "Ça marche — see you ✓" in run_tool(read_email, email_id="m3")


def test_read_unknown_id_is_a_retry(mailbox, run_tool):
    with pytest.raises(ModelRetry, match="No email has id 'zzz'"):
        run_tool(read_email, email_id="zzz")


def _sent_mime(fake, index=-1):
    raw = fake.drafts[index]["raw"]
    return email.message_from_bytes(
        base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)), policy=policy.default
    )


def test_draft_is_created_never_sent_and_linked(mailbox, run_tool):
    out = run_tool(
        draft_email, to="carol@example.com", subject="Notes", body="Here are my notes.\n"
    )
    assert "not sent" in out
    assert "https://mail.google.com/mail/u/0/#drafts?compose=draft-msg-1" in out
    mime = _sent_mime(mailbox)
    assert mime["To"] == "carol@example.com" and mime["Subject"] == "Notes"
    assert mime.get_content().strip() == "Here are my notes."
    assert mailbox.reached("/gmail/v1/users/me/drafts", "POST")
    assert not [r for r in mailbox.requests if r["path"].endswith("/send")]


def test_reply_draft_keeps_the_subject_and_joins_the_thread(mailbox, run_tool):
    out = run_tool(draft_email, body="Yes!", reply_to_id="m1")
    mime = _sent_mime(mailbox)
    assert mime["To"] == "Alice <alice@example.com>"
    assert mime["Subject"] == "Re: Lunch on Friday?"
    assert mime["In-Reply-To"] == "<m1@mail.example.com>"
    assert "<m1@mail.example.com>" in mime["References"]
    # Gmail puts a draft in the thread only when the Subject matches the thread's.
    assert mailbox.drafts[-1]["message"]["threadId"] == "t-m1"
    assert "Re: Lunch on Friday?" in out


def test_a_reply_subject_the_model_made_up_is_replaced_by_the_original(mailbox, run_tool):
    run_tool(
        draft_email, to="alice@example.com", subject="Re: Lunch", body="Yes!", reply_to_id="m1"
    )
    assert _sent_mime(mailbox)["Subject"] == "Re: Lunch on Friday?"
    assert mailbox.drafts[-1]["message"]["threadId"] == "t-m1"


def test_reply_to_a_reply_keeps_a_single_re(mailbox, run_tool):
    run_tool(draft_email, body="ok", reply_to_id="m3")
    assert _sent_mime(mailbox)["Subject"] == "Re: project"


def test_cc_and_bcc_reach_the_draft(mailbox, run_tool):
    out = run_tool(
        draft_email,
        to="carol@example.com",
        cc="Dan <dan@example.com>",
        bcc="eve@example.com",
        subject="Notes",
        body="x",
    )
    mime = _sent_mime(mailbox)
    assert mime["To"] == "carol@example.com" and mime["Cc"] == "Dan <dan@example.com>"
    assert mime["Bcc"] == "eve@example.com"
    assert "cc Dan <dan@example.com>" in out and "bcc eve@example.com" in out


def test_reply_all_answers_the_sender_and_everyone_else_but_me(mailbox, run_tool):
    mailbox.messages["m5"] = gmail_message(
        "m5",
        sender="Alice <alice@example.com>",
        to="me@example.com, Bob <bob@example.org>",
        cc="carol@example.com, ME@example.com",
        subject="Offsite",
        plain="Who comes?",
    )
    run_tool(draft_email, body="Count me in", reply_to_id="m5", reply_all=True)
    mime = _sent_mime(mailbox)
    assert mime["To"] == "Alice <alice@example.com>, Bob <bob@example.org>"
    assert mime["Cc"] == "carol@example.com"
    assert mime["Subject"] == "Re: Offsite"


def test_reply_goes_to_reply_to_when_the_sender_set_one(mailbox, run_tool):
    mailbox.messages["m6"] = gmail_message(
        "m6",
        sender="News <noreply@example.com>",
        reply_to="team@example.com",
        subject="Weekly",
        plain="hi",
    )
    run_tool(draft_email, body="thanks", reply_to_id="m6")
    assert _sent_mime(mailbox)["To"] == "team@example.com"


def test_a_new_email_without_recipient_or_subject_is_a_retry(mailbox, run_tool):
    with pytest.raises(ModelRetry, match="to"):
        run_tool(draft_email, subject="x", body="y")
    with pytest.raises(ModelRetry, match="subject"):
        run_tool(draft_email, to="carol@example.com", body="y")
    assert mailbox.drafts == []


def test_a_listing_fetches_its_emails_in_one_batch_not_one_request_each(mailbox, run_tool):
    for n in range(60):
        message = gmail_message(f"b{n:02d}", sender="bulk@example.com", subject=f"Bulk {n:02d}")
        mailbox.messages[message["id"]] = message
    mailbox.http_requests = 0
    result = run_tool(search_emails, query="bulk", limit=50)
    assert result.count == 50 and result.has_more
    assert "1. Bulk 00" in result.display and "50. Bulk 49" in result.display
    assert mailbox.http_requests == 2  # messages.list, then one batch of 50 messages.get
    gets = mailbox.reached("/gmail/v1/users/me/messages/")
    assert len(gets) == 50 and all(r["in_batch"] for r in gets)


def test_an_email_deleted_while_listing_is_left_out(mailbox, run_tool):
    from fake_google import NOT_FOUND

    mailbox.fail("/gmail/v1/users/me/messages/m2", (404, NOT_FOUND))
    result = run_tool(list_emails)
    assert result.count == 1 and "Lunch on Friday?" in result.display
    assert "Your receipt" not in result.display


def test_labels_are_looked_up_once_per_session(mailbox, run_tool):
    run_tool(list_emails, label="receipts")
    run_tool(list_emails, label="Receipts")
    assert len(mailbox.reached("/gmail/v1/users/me/labels")) == 1


@pytest.mark.parametrize(
    ("to", "subject"),
    [
        ("carol@example.com\nBcc: all@example.com", "hi"),
        ("carol@example.com", "hi\r\nBcc: all@example.com"),
        ("not an address", "hi"),
        ("", "hi"),
    ],
)
def test_header_injection_and_bad_addresses_are_refused(mailbox, run_tool, to, subject):
    with pytest.raises(ModelRetry):
        run_tool(draft_email, to=to, subject=subject, body="x")
    assert mailbox.drafts == []


def test_rate_limit_is_retried_with_backoff(mailbox, run_tool, deps):
    slept = []
    google = deps.resource(GOOGLE)
    google.sleep = slept.append
    google.section.retry_delay = 0.5
    mailbox.fail("/gmail/v1/users/me/messages", (429, RATE_LIMITED), (429, RATE_LIMITED))
    result = run_tool(search_emails, query="from:alice")
    assert result.count == 1
    assert slept == [0.5, 1.0]


def test_rate_limit_that_never_ends_is_a_retry(mailbox, run_tool, deps):
    deps.resource(GOOGLE).sleep = lambda seconds: None
    mailbox.fail("/gmail/", *[(429, RATE_LIMITED)] * 10)
    with pytest.raises(ModelRetry, match="rate-limited"):
        run_tool(search_emails, query="x")
    assert len(mailbox.reached("/gmail/")) == 5  # first try + 4 retries


def test_gmail_api_not_enabled(mailbox, run_tool):
    mailbox.fail("/gmail/", (403, not_enabled("gmail.googleapis.com")))
    with pytest.raises(ModelRetry, match="gcloud services enable gmail.googleapis.com"):
        run_tool(list_emails)


def test_single_part_latin1_message_is_decoded_with_its_charset(mailbox, run_tool):
    from fake_google import b64url

    mailbox.messages["m4"] = {
        "id": "m4",
        "threadId": "t-m4",
        "labelIds": ["INBOX"],
        "snippet": "Grüße",
        "payload": {
            "partId": "",
            "mimeType": "text/plain",
            "filename": "",
            "headers": [
                {"name": "From", "value": "hans@example.de"},
                {"name": "Subject", "value": "Hallo"},
                {"name": "Content-Type", "value": "text/plain; charset=ISO-8859-1"},
            ],
            "body": {"size": 12, "data": b64url("Viele Grüße".encode("latin-1"))},
        },
    }
    assert "Viele Grüße" in run_tool(read_email, email_id="m4")


def test_server_error_on_draft_is_not_retried_so_no_duplicate_drafts(mailbox, run_tool, deps):
    from fake_google import error_body

    deps.resource(GOOGLE).sleep = lambda seconds: None
    mailbox.fail(
        "/gmail/v1/users/me/drafts",
        (503, error_body(503, "Backend Error", "backendError", "UNAVAILABLE")),
    )
    with pytest.raises(ModelRetry, match="busy"):
        run_tool(draft_email, to="carol@example.com", subject="x", body="y")
    assert len(mailbox.reached("/gmail/v1/users/me/drafts", "POST")) == 1


def test_server_error_on_a_read_is_retried(mailbox, run_tool, deps):
    from fake_google import error_body

    deps.resource(GOOGLE).sleep = lambda seconds: None
    mailbox.fail(
        "/gmail/v1/users/me/messages/m1",
        (500, error_body(500, "Backend Error", "backendError", "INTERNAL")),
    )
    assert "Lunch" in run_tool(read_email, email_id="m1")


@pytest.fixture
def conversation(mailbox):
    """A three-email thread: Alice asks, I answer, Bob answers with a CSV attached."""
    thread = [
        gmail_message(
            "c1",
            sender="Alice <alice@example.com>",
            to="me@example.com, bob@example.org",
            subject="Budget",
            plain="Numbers please.",
            thread_id="t-budget",
        ),
        gmail_message(
            "c2",
            sender="me@example.com",
            to="alice@example.com",
            subject="Re: Budget",
            plain="Bob has them.",
            thread_id="t-budget",
            labels=("SENT",),
        ),
        gmail_message(
            "c3",
            sender="Bob <bob@example.org>",
            to="alice@example.com, me@example.com",
            subject="Re: Budget",
            plain="Attached.",
            thread_id="t-budget",
            attachments=[
                ("budget.csv", "text/csv", b"item,cost\ntea,3\n"),
                ("scan.pdf", "application/pdf", b"%PDF-1.7" + bytes(50)),
            ],
        ),
    ]
    for message in thread:
        mailbox.messages[message["id"]] = message
    return mailbox


def test_a_whole_conversation_is_read_oldest_first(conversation, run_tool):
    text = run_tool(read_email, email_id="c3", thread=True)
    assert text.startswith("Conversation of 3 emails, oldest first.")
    assert text.index("Numbers please.") < text.index("Bob has them.") < text.index("Attached.")
    assert "── 3 of 3 · id: c3" in text and "1. budget.csv (text/csv, 16 bytes)" in text
    (thread,) = conversation.reached("/gmail/v1/users/me/threads/")
    assert thread["path"].endswith("/t-budget")


def test_a_text_attachment_is_read_by_name_or_number(conversation, run_tool):
    from co_google.tools.gmail import read_email_attachment

    by_name = run_tool(read_email_attachment, email_id="c3", attachment="budget.csv")
    assert "item,cost\ntea,3" in by_name
    assert "item,cost" in run_tool(read_email_attachment, email_id="c3", attachment="1")
    pdf = run_tool(read_email_attachment, email_id="c3", attachment="2")
    assert "scan.pdf is application/pdf (58 bytes)" in pdf and "%PDF" not in pdf
    with pytest.raises(ModelRetry, match="budget.csv, scan.pdf"):
        run_tool(read_email_attachment, email_id="c3", attachment="minutes.docx")


def test_labels_and_archive_change_the_whole_conversation(conversation, run_tool):
    from co_google.tools.gmail import label_email

    out = run_tool(label_email, email_id="c3", add="receipts", remove="unread", archive=True)
    assert (
        out == "Conversation 'Re: Budget' (3 emails): added Receipts; archived it; removed UNREAD."
    )
    for msg_id in ("c1", "c3"):
        labels = conversation.messages[msg_id]["labelIds"]
        assert "Label_7" in labels and "INBOX" not in labels
    (modify,) = conversation.reached("/gmail/v1/users/me/threads/t-budget/modify", "POST")
    with pytest.raises(ModelRetry, match="There is no Gmail label 'Travel'"):
        run_tool(label_email, email_id="c3", add="Travel")
    with pytest.raises(ModelRetry, match="Nothing to change"):
        run_tool(label_email, email_id="c3")


def test_draft_recipients_are_one_normalised_address_each(conversation, deps):
    from co_google.recipients import BadDraft, draft_recipients

    google = deps.resource(GOOGLE)
    new = {
        "to": "Carol <Carol@Example.com>, dan@example.com",
        "cc": "carol@example.com",
        "bcc": "EVE@example.com",
        "body": "x",
        "subject": "s",
    }
    assert draft_recipients(google, new) == [
        "carol@example.com",
        "dan@example.com",
        "eve@example.com",
    ]
    reply = {"reply_to_id": "c3", "body": "x"}
    assert draft_recipients(google, reply) == ["bob@example.org"]
    everyone = {"reply_to_id": "c3", "reply_all": True, "cc": "zed@example.com"}
    assert draft_recipients(google, everyone) == [
        "bob@example.org",
        "alice@example.com",
        "zed@example.com",
    ]
    mine = {"reply_to_id": "c2"}  # my own email: the reply goes to whom I wrote
    assert draft_recipients(google, mine) == ["alice@example.com"]
    with pytest.raises(BadDraft):
        draft_recipients(google, {"to": "not an address"})
    # the drafts that follow reuse the headers fetched for the keys
    fetched = len(conversation.reached("/gmail/v1/users/me/messages/c3"))
    from co_google.tools.gmail import draft_email
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    ctx = RunContext(deps=deps, model=TestModel(), usage=RunUsage())
    draft_email(ctx, body="x", reply_to_id="c3", reply_all=True, cc="zed@example.com")
    assert len(conversation.reached("/gmail/v1/users/me/messages/c3")) == fetched
    mime = _sent_mime(conversation)
    assert (
        mime["To"] == "Bob <bob@example.org>, alice@example.com" and mime["Cc"] == "zed@example.com"
    )
