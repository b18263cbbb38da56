"""Drive tools through the real google-api-python-client against the local fake."""

from __future__ import annotations

import pytest
from co_google.tools.drive import read_drive_file, search_drive
from fake_google import drive_terms, not_enabled, spreadsheet
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


def test_a_sheet_without_a_whole_export_shows_its_first_tab_and_says_so(fake, run_tool):
    add_file(fake, "sh1", "Costs", SHEET, exports={"text/csv": "item,cost\ntea,3\n"})
    text = run_tool(read_drive_file, file_id="sh1")
    assert "item,cost\ntea,3" in text
    assert "Only the first tab of this Sheet is shown" in text
    wanted = [r["params"]["mimeType"] for r in fake.reached("/drive/v3/files/sh1/export")]
    assert wanted == ["application/vnd.oasis.opendocument.spreadsheet", "text/csv"]


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


# -- audited against the Drive API reference -------------------------------------------


def test_every_tab_of_a_sheet_is_read(fake, run_tool):
    """Drive's CSV export holds a Sheet's first tab only; Co reads every tab."""
    fake.drive_files["sh2"] = spreadsheet(
        "sh2",
        "Budget 2026",
        {
            "Summary": [["item", "total"], ["travel", "1200"]],
            "Q1 details": [["who", "note"], ["Ana", 'said "ok", then left'], ["", "two\nlines"]],
            "Empty": [],
            "Q2": [["x", "", "y"]],
        },
    )
    text = run_tool(read_drive_file, file_id="sh2")
    assert "4 tabs: Summary, Q1 details, Empty, Q2" in text
    assert "## Summary\nitem,total\ntravel,1200\n" in text
    assert '## Q1 details\nwho,note\nAna,"said ""ok"", then left"\n,"two\nlines"\n' in text
    assert "## Empty\n(empty)" in text and "## Q2\nx,,y\n" in text
    assert "first tab" not in text


def test_a_long_sheet_is_cut_with_a_marker_without_expanding_its_empty_tail(fake, deps, run_tool):
    deps.section("google").max_chars = 2000
    rows = [[f"row {n}", "v" * 20] for n in range(500)]
    fake.drive_files["sh3"] = spreadsheet("sh3", "Log", {"Log": rows, "Later": [["z"]]})
    text = run_tool(read_drive_file, file_id="sh3")
    assert "row 0,vvvv" in text and "row 499" not in text
    assert "truncated" in text and len(text) < 2600


def test_a_sheet_too_large_to_export_whole_falls_back_to_its_first_tab(fake, run_tool):
    fake.drive_files["sh4"] = spreadsheet("sh4", "Big", {"One": [["a", "1"]], "Two": [["b", "2"]]})
    fake.export_limit = 200  # the OpenDocument export is larger, the CSV is not
    text = run_tool(read_drive_file, file_id="sh4")
    assert "a,1" in text and "b,2" not in text
    assert "Only the first tab" in text and "over Drive's 10 MB" in text


def test_a_doc_over_the_export_limit_is_explained_with_download_links(fake, run_tool):
    big = "x" * (10 * 1024 * 1024 + 1)
    docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    add_file(
        fake,
        "huge",
        "Handbook",
        DOC,
        exports={"text/markdown": big, "text/plain": big, docx: "PK", "application/pdf": "%PDF"},
    )
    text = run_tool(read_drive_file, file_id="huge")
    assert "larger than the 10 MB Google Drive lets Co export as text" in text
    assert "https://docs.google.com/d/huge/view" in text
    assert "Word: https://docs.google.com/export?id=huge" in text and "PDF: " in text
    assert "403" not in text


def test_a_doc_whose_markdown_is_too_large_is_read_as_plain_text(fake, run_tool):
    add_file(fake, "mid", "Notes", DOC, exports={"text/markdown": "#" * 300, "text/plain": "short"})
    fake.export_limit = 100
    text = run_tool(read_drive_file, file_id="mid")
    assert "short" in text and "[Exported as text/plain: the text/markdown export is over" in text


def test_search_finds_shared_drive_files_the_user_never_opened(fake, run_tool):
    add_file(fake, "mine", "Budget mine", DOC, text="x")
    add_file(fake, "opened", "Budget opened", DOC, text="x", drive="Sales", touched=True)
    add_file(fake, "unseen", "Budget unseen", DOC, text="x", drive="Sales", touched=False)
    result = run_tool(search_drive, query="budget")
    assert result.count == 3 and "Budget unseen" in result.display
    (request,) = fake.reached("/drive/v3/files", "GET")
    assert request["params"]["corpora"] == "allDrives"


def test_an_incomplete_search_says_results_may_be_missing(fake, run_tool):
    add_file(fake, "f1", "Budget", DOC, text="x")
    fake.incomplete_drives = True
    result = run_tool(search_drive, query="budget")
    assert result.count == 1 and result.has_more
    assert "some matching files may be missing" in result.display
    empty = run_tool(search_drive, query="unicorn")
    assert empty.count == 0 and "may be missing" in empty.display


@pytest.mark.parametrize("mime", ["text/plain", "text/markdown", "application/json", "text/csv"])
def test_an_empty_file_reads_as_empty_without_a_ranged_download(fake, run_tool, mime):
    # Drive answers 416 to `Range: bytes=0-…` on a 0-byte file; its size says it is empty.
    add_file(fake, "e1", "empty.txt", mime, content=b"")
    text = run_tool(read_drive_file, file_id="e1")
    assert "empty.txt" in text and "[The file is empty.]" in text
    assert [r["params"]["alt"] for r in fake.reached("/drive/v3/files/e1")] == ["json"]


def test_a_ranged_download_of_an_empty_file_is_what_drive_refuses(fake):
    # The fake is as strict as Drive: the request Co made for every text file fails on an
    # empty one, so the test above shows Co no longer makes it there.
    import httplib2

    add_file(fake, "e2", "empty.txt", "text/plain", content=b"")
    response, _body = httplib2.Http().request(
        f"{fake.url}/drive/v3/files/e2?alt=media",
        headers={"Range": "bytes=0-99", "Authorization": "Bearer good-token"},
    )
    assert response.status == 416


def test_a_one_byte_file_is_read(fake, run_tool):
    add_file(fake, "o1", "one.txt", "text/plain", content=b"x")
    text = run_tool(read_drive_file, file_id="o1")
    assert text.endswith("x") and "empty" not in text
