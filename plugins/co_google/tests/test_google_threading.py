"""A reply's In-Reply-To and References are RFC 5322 msg-ids on the wire, never encoded
words, however long the ids are (Outlook's, Exchange's and SES's pass 77 characters).

Read back from the draft's bytes by ``email.parser`` in strict mode (a defect raises), by
compat32 as a mail server sees the raw field, and by the fake Gmail, which threads a draft
only when those fields name a message of the thread as msg-ids.
"""

from __future__ import annotations

import base64
import email
import email.parser
import email.policy
import random
import re

import pytest
from co_google import recipients as R
from co_google.tools.gmail import draft_email
from fake_google import MSG_ID, gmail_message

# Message-IDs as these providers write them (shape and length from real headers).
REAL_IDS = {
    "outlook": "<PH0PR11MB5642D3C1A9B8E7F6A5B4C3D2E1F0A9B8C7D6@PH0PR11MB5642.namprd11.prod.outlook.com>",
    "exchange-online": "<DB9PR08MB6588C4A1D2E3F4A5B6C7D8E9F0A1B2C3D4E5F@DB9PR08MB6588.eurprd08.prod.outlook.com>",
    "exchange-onprem": "<5F2C8E1A7B3D4C6E9A0B1C2D3E4F5A6B@EXMBX02.corp.contoso-holdings.example.com>",
    "amazon-ses": "<0100018c7f3a2b1e-4d5c6b7a-8e9f-4a0b-b1c2-d3e4f5a6b7c8-000000@email.amazonses.com>",
    "ses-eu": "<0102018c7f3a2b1e-4d5c6b7a-8e9f-4a0b-b1c2-d3e4f5a6b7c8-000000@eu-west-1.amazonses.com>",
    "gmail": "<CAJ+8xK9vQp0mZ7fW3rT2yN4hL6sB1dE5gU8iO0aP9cR7vX2kM=wA@mail.gmail.com>",
    "gmail-long": "<CAGd9Hb7W_xk=Yp2Qz0fL3tR8vN1mC5sJ4hB6gD9eA2uK7iO0pX3rT1wZ8yQ@mail.gmail.com>",
    "yahoo": "<1817263540.3123456.1700000000000@mail.yahoo.com>",
    "icloud": "<A1B2C3D4-E5F6-4789-ABCD-EF1234567890@icloud.com>",
    "sendgrid": "<xK3f9QpLR2aZ7mW1v0tY4g@geopod-ismtpd-12.sendgrid.net>",
    "salesforce": "<kFQ3z000000000000000000000000000000000000000000000000SB2X9C00Xy7Z3aWQ@sfdc.net>",
}


def _raw(fake, index: int = -1) -> bytes:
    encoded = fake.drafts[index]["raw"]
    return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))


def _field_lines(raw: bytes, name: str) -> list[str]:
    """The physical lines of one header field, as they are on the wire."""
    head = raw.split(b"\n\n", 1)[0].decode("ascii").splitlines()
    for at, line in enumerate(head):
        if line.lower().startswith(name.lower() + ":"):
            end = at + 1
            while end < len(head) and head[end][:1] in (" ", "\t"):
                end += 1
            return head[at:end]
    return []


def _assert_msg_ids(raw: bytes, name: str, expected: list[str]) -> None:
    lines = _field_lines(raw, name)
    assert lines, f"{name} is missing"
    wire = " ".join(lines)[len(name) + 1 :].split()
    assert not re.search(r"(^|\s)=\?", " ".join(lines)[len(name) + 1 :])  # no encoded word
    assert wire == expected
    assert all(MSG_ID.fullmatch(token) for token in wire)
    # RFC 5322 2.1.1: a line is at most 998 characters, and should be 78 unless one id is longer.
    for line in lines:
        assert len(line) <= 998
        assert len(line) <= 78 or len(line.split()) <= 2
    strict = email.parser.BytesParser(policy=email.policy.strict).parsebytes(raw)
    assert str(strict[name]).split() == expected


@pytest.fixture
def real_mail(fake):
    for provider, message_id in REAL_IDS.items():
        fake.messages[provider] = gmail_message(
            provider,
            sender=f"Sam <sam@{provider}.example.com>",
            subject=f"Question from {provider}",
            plain="Can you confirm?",
            message_id=message_id,
            references=" ".join(v for k, v in REAL_IDS.items() if k != provider)[:400],
        )
    return fake


@pytest.mark.parametrize("provider", sorted(REAL_IDS))
def test_a_reply_to_real_long_message_ids_threads(real_mail, run_tool, provider):
    run_tool(draft_email, body="Confirmed.", reply_to_id=provider)
    raw = _raw(real_mail)
    message_id = REAL_IDS[provider]
    _assert_msg_ids(raw, "In-Reply-To", [message_id])
    head = real_mail.messages[provider]["payload"]["headers"]
    earlier = next(h["value"] for h in head if h["name"] == "References").split()
    _assert_msg_ids(raw, "References", [t for t in earlier if MSG_ID.fullmatch(t)] + [message_id])
    assert real_mail.drafts[-1]["message"]["threadId"] == f"t-{provider}"


def _generated_id(rng: random.Random) -> str:
    atext = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-"
    left = "".join(rng.choice(atext) for _ in range(rng.randint(1, 200)))
    right = ".".join(
        "".join(
            rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-") for _ in range(rng.randint(1, 30))
        )
        for _ in range(rng.randint(1, 5))
    )
    dots = ".".join(left[i : i + 17] for i in range(0, len(left), 17))
    return f"<{dots}@{right}>"


def test_generated_msg_id_lists_are_written_as_msg_ids():
    rng = random.Random(39)
    for _ in range(300):
        ids = [_generated_id(rng) for _ in range(rng.randint(1, 40))]
        draft = R.Draft(
            to=(R.Recipient("", "a@example.com"),),
            cc=(),
            bcc=(),
            subject="Re: x",
            in_reply_to=ids[-1],
            references=" ".join(ids),
        )
        raw = R.check(draft, "body")
        _assert_msg_ids(raw, "In-Reply-To", [ids[-1]])
        _assert_msg_ids(raw, "References", ids)


@pytest.mark.parametrize(
    "garbage",
    [
        "=?utf-8?q?=3Cabc=40example=2Ecom=3E?=",  # an encoded word someone else wrote
        "not-a-msg-id",
        "<with space@example.com>",
        "<ünïcode@example.com>",
    ],
)
def test_what_is_no_msg_id_in_the_original_is_left_out_of_the_reply(fake, run_tool, garbage):
    fake.messages["g1"] = gmail_message(
        "g1",
        sender="sam@example.com",
        subject="Hello",
        plain="Hi",
        references=f"<a1@example.com> {garbage} <a2@example.com>",
    )
    run_tool(draft_email, body="Hi back", reply_to_id="g1")
    raw = _raw(fake)
    _assert_msg_ids(raw, "In-Reply-To", ["<g1@mail.example.com>"])
    refs = ["<a1@example.com>", "<a2@example.com>", "<g1@mail.example.com>"]
    _assert_msg_ids(raw, "References", refs)
    assert not re.search(rb"=\?", raw.split(b"\n\n", 1)[0])
    assert fake.drafts[-1]["message"]["threadId"] == "t-g1"


def test_an_original_without_a_message_id_gets_no_threading_headers(fake, run_tool):
    fake.messages["n1"] = gmail_message(
        "n1", sender="sam@example.com", subject="Hello", plain="Hi", message_id="garbage"
    )
    run_tool(draft_email, body="Hi back", reply_to_id="n1")
    raw = _raw(fake)
    parsed = email.message_from_bytes(raw, policy=email.policy.strict)
    assert parsed["In-Reply-To"] is None and parsed["References"] is None
    assert parsed["Subject"] == "Re: Hello"
