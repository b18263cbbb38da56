"""Drive tools through the real google-api-python-client against the local fake."""

from __future__ import annotations

import pytest
from co_google.tools.drive import read_drive_file, search_drive
from fake_google import drive_terms, not_enabled
from pydantic_ai import ModelRetry

DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"


def add_file(fake, file_id, name, mime, **extra):
    fake.drive_files[file_id] = {"id": file_id, "name": name, "mimeType": mime, **extra}


def test_search_pages_through_results_with_tokens(fake, run_tool):
    for n in range(23):
        add_file(fake, f"f{n:02d}", f"Budget plan {n:02d}", DOC, text="numbers")
    add_file(fake, "other", "Holiday photos", "image/jpeg", content=b"\xff\xd8")

    first = run_tool(search_drive, query="budget")
    assert first.count == 10 and first.has_more and first.next_page == 2
    assert "Budget plan 00" in first.display and "id: f00" in first.display
    assert "https://docs.google.com/d/f00/view" in first.display
    assert "Holiday" not in first.display

    second = run_tool(search_drive, query="budget", page=2)
    assert second.count == 10 and second.has_more
    assert "11. Budget plan 10" in second.display and "Budget plan 00" not in second.display

    third = run_tool(search_drive, query="budget", page=3)
    assert third.count == 3 and not third.has_more
    assert "Budget plan 22" in third.display
    # Pages 2 and 3 were asked for with the tokens Drive handed out.
    tokens = [r["params"].get("pageToken") for r in fake.reached("/drive/v3/files", "GET")]
    assert tokens[0] is None and tokens[1] and tokens[2] and tokens[1] != tokens[2]


def test_page_not_reached_yet_is_a_retry_with_the_fix(fake, run_tool):
    with pytest.raises(ModelRetry, match="Search from page 1 first"):
        run_tool(search_drive, query="budget", page=5)
    assert fake.reached("/drive/") == []


def test_nothing_matching_is_count_zero_not_an_error(fake, run_tool):
    result = run_tool(search_drive, query="unicorn")
    assert result.count == 0 and not result.has_more
    assert "No Drive files" in result.display


def test_quotes_in_the_query_stay_literal_text(fake, run_tool):
    add_file(fake, "secret", "Salaries", DOC, text="x")
    attack = "x' or name contains 'Salaries"
    result = run_tool(search_drive, query=attack)
    assert result.count == 0
    (request,) = fake.reached("/drive/v3/files", "GET")
    assert drive_terms(request["params"]["q"]) == [attack]


def test_google_doc_is_exported_as_markdown(fake, run_tool):
    add_file(fake, "doc1", "Plan", DOC, exports={"text/markdown": "# Plan\n\n- ship it\n"})
    text = run_tool(read_drive_file, file_id="doc1")
    assert "# Plan" in text and "- ship it" in text and "Google Doc" in text


def test_doc_falls_back_to_plain_text_when_markdown_is_not_offered(fake, run_tool):
    add_file(fake, "doc2", "Old doc", DOC, exports={"text/plain": "plain words"})
    assert "plain words" in run_tool(read_drive_file, file_id="doc2")


def test_sheet_is_exported_as_csv(fake, run_tool):
    add_file(fake, "sh1", "Costs", SHEET, exports={"text/csv": "item,cost\ntea,3\n"})
    text = run_tool(read_drive_file, file_id="sh1")
    assert "item,cost\ntea,3" in text
    (export,) = fake.reached("/drive/v3/files/sh1/export")
    assert export["params"]["mimeType"] == "text/csv"


def test_plain_text_file_is_downloaded(fake, run_tool):
    add_file(fake, "txt1", "notes.txt", "text/plain", content="héllo wörld\n".encode())
    assert "héllo wörld" in run_tool(read_drive_file, file_id="txt1")


def test_big_file_is_capped_with_a_marker_and_not_downloaded_whole(fake, deps, run_tool):
    deps.section("google").max_chars = 1000
    add_file(fake, "big", "big.log", "text/plain", content=b"a" * 50_000)
    text = run_tool(read_drive_file, file_id="big")
    assert "truncated" in text and text.count("a") < 1100
    (download,) = [
        r for r in fake.reached("/drive/v3/files/big") if r["params"].get("alt") == "media"
    ]
    assert download["range"] == "bytes=0-3999"


def test_binary_file_is_described_not_dumped(fake, run_tool):
    add_file(fake, "pdf1", "scan.pdf", "application/pdf", content=b"%PDF-1.7" + bytes(300))
    text = run_tool(read_drive_file, file_id="pdf1")
    assert "PDF file, 308 bytes" in text and "%PDF" not in text
    assert "https://docs.google.com/d/pdf1/view" in text


def test_unknown_id_and_bad_id_are_retries(fake, run_tool):
    with pytest.raises(ModelRetry, match="No Drive file has id 'nope'"):
        run_tool(read_drive_file, file_id="nope")
    with pytest.raises(ModelRetry, match="not a Drive file id"):
        run_tool(read_drive_file, file_id="../../etc/passwd")


def test_api_not_enabled_names_the_gcloud_command(fake, run_tool):
    fake.fail("/drive/", (403, not_enabled("drive.googleapis.com")))
    with pytest.raises(ModelRetry, match="gcloud services enable drive.googleapis.com"):
        run_tool(search_drive, query="budget")


def test_unreachable_google_is_one_clear_retry(fake, deps, run_tool):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    deps.section("google").api_endpoint = f"http://127.0.0.1:{port}"
    with pytest.raises(ModelRetry, match="cannot reach Google Drive"):
        run_tool(search_drive, query="budget")
