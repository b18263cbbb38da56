"""Every tab of a Google Sheet as CSV text, from Drive's OpenDocument export.

Drive exports a Sheet as CSV or TSV "first-sheet only"
(https://developers.google.com/workspace/drive/api/guides/ref-export-formats); its
OpenDocument export (``.ods``) holds every tab, with each cell's text as the Sheet shows
it. Only the standard library reads it: the zip's ``content.xml``, streamed, stopping once
enough text is out (a Sheet's empty tail is run-length encoded: thousands of empty rows
and columns are one element, and are never expanded).
"""

from __future__ import annotations

import csv
import io
import zipfile
from dataclasses import dataclass, field
from xml.etree import ElementTree

OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
T = f"{{{TABLE}}}"
X = f"{{{TEXT}}}"
MAX_REPEAT = 1000  # a repeated row or cell that holds text is shown at most this often


class NotASpreadsheet(ValueError):
    """The bytes are not an OpenDocument spreadsheet Co can read."""


@dataclass
class Tab:
    name: str
    rows: list[list[str]] = field(default_factory=list)
    cut: bool = False  # more rows than were read

    def csv(self) -> str:
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(self.rows)
        return out.getvalue()


def _text(element: ElementTree.Element) -> str:
    """A paragraph's text: spans, ``text:s`` runs of spaces, tabs and line breaks."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == f"{X}s":
            parts.append(" " * int(child.get(f"{X}c", "1")))
        elif child.tag == f"{X}tab":
            parts.append("\t")
        elif child.tag == f"{X}line-break":
            parts.append("\n")
        else:
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _cell(element: ElementTree.Element) -> str:
    paragraphs = [_text(p) for p in element.iter(f"{X}p")]
    return "\n".join(paragraphs)


def _row(element: ElementTree.Element) -> list[str]:
    runs: list[tuple[str, int]] = []
    for cell in element:
        if cell.tag not in (f"{T}table-cell", f"{T}covered-table-cell"):
            continue
        repeat = int(cell.get(f"{T}number-columns-repeated", "1"))
        runs.append((_cell(cell), repeat))
    while runs and runs[-1][0] == "":
        runs.pop()  # the empty columns to the right
    return [value for value, repeat in runs for _ in range(min(repeat, MAX_REPEAT))]


def tabs(data: bytes, limit: int) -> list[Tab]:
    """The Sheet's tabs, in order, each with its rows (trailing empty rows and columns
    left out); reading stops once about ``limit`` characters are out."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        stream = archive.open("content.xml")
    except (zipfile.BadZipFile, KeyError) as exc:
        raise NotASpreadsheet(str(exc)) from None
    found: list[Tab] = []
    pending: list[list[str]] = []  # empty rows, kept until a row with text follows
    size = 0
    with stream:
        try:
            for event, element in ElementTree.iterparse(stream, events=("start", "end")):
                if event == "start" and element.tag == f"{T}table":
                    found.append(Tab(element.get(f"{T}name", f"Sheet{len(found) + 1}")))
                    pending = []
                elif event == "end" and element.tag == f"{T}table-row" and found:
                    row = _row(element)
                    repeat = int(element.get(f"{T}number-rows-repeated", "1"))
                    element.clear()
                    if not row:
                        pending += [[]] * min(repeat, MAX_REPEAT)
                        continue
                    tab = found[-1]
                    for one in [*pending, *[row] * min(repeat, MAX_REPEAT)]:
                        if size > limit:
                            tab.cut = True
                            break
                        tab.rows.append(one)
                        size += sum(len(cell) + 1 for cell in one)
                    pending = []
                    if size > limit:
                        tab.cut = True
                        break
        except ElementTree.ParseError as exc:
            raise NotASpreadsheet(str(exc)) from None
    return found
