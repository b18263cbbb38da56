"""How an answer is drawn: what was copied from a tool or a file as it is, prose as Markdown.

Each family of cases is tried in several shapes (languages, listings, wordings): the rule
is "a copy of a tool's output, or text that looks preformatted, is shown line for line",
not a list of the examples here.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from verbatim_samples import NOTES, PYTHON

from co_core import ToolResult
from co_core.ui.answer import Outputs, literal_markdown, renderable, split_answer
from co_core.ui.render import MORE, output_text, result_lines

LS = """total 16
drwxr-xr-x  2 ada ada 4096 Mar  3 10:00 .
drwxr-xr-x 14 ada ada 4096 Mar  3 09:58 ..
-rw-r--r--  1 ada ada  231 Mar  3 10:00 report.py
-rw-r--r--  1 ada ada   90 Mar  3 10:00 notes_v2.txt"""

GO = """package main

import "fmt"

func main() {
	fmt.Println("hi")
}"""

JSON = """{
  "name": "co",
  "items": [1, 2, 3]
}"""

PS = """  PID TTY          TIME CMD
    1 ?        00:00:01 init
  512 pts/0    00:00:00 bash"""


def drawn(text: str, outputs: Outputs | None = None, width: int = 100) -> str:
    """What the terminal shows, trailing spaces dropped (rich pads prose to the width)."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    console.print(renderable(text, outputs))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def outputs(*texts: str) -> Outputs:
    found = Outputs()
    for text in texts:
        found.add(text)
    return found


@pytest.mark.parametrize("copied", [PYTHON, NOTES, LS, GO, JSON, PS], ids=lambda t: t[:12])
@pytest.mark.parametrize(
    "intro, outro",
    [
        ("Here is the file:\n\n", "\n\nAnything else?"),
        ("The command printed:\n", ""),
        ("", "\nThat is all it says."),
    ],
)
def test_a_copy_of_tool_output_is_shown_line_for_line(copied: str, intro: str, outro: str):
    """A model quoting a file or a command's output without a fence."""
    screen = drawn(intro + copied + outro, outputs(copied))
    expected = "\n".join(line.rstrip() for line in copied.strip("\n").expandtabs().splitlines())
    assert expected in screen


@pytest.mark.parametrize("copied", [PYTHON, LS, GO, PS], ids=lambda t: t[:12])
def test_preformatted_text_is_kept_without_a_tool_output_to_compare(copied: str) -> None:
    """Code and listings the model writes itself (or quotes from an earlier turn)."""
    screen = drawn("Here it is:\n\n" + copied + "\n\nDone.")
    for line in copied.strip("\n").splitlines():
        assert line.expandtabs().rstrip() in screen.splitlines()


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
@pytest.mark.parametrize("lang", ["", "python", "text"])
def test_fenced_blocks_are_verbatim(fence: str, lang: str) -> None:
    screen = drawn(f"See:\n\n{fence}{lang}\n{PYTHON}{fence}\n\nok")
    for line in PYTHON.strip("\n").splitlines():
        assert line.expandtabs().rstrip() in screen.splitlines()
    assert fence not in screen


def test_an_unclosed_fence_while_streaming_is_verbatim_to_the_end() -> None:
    blocks = split_answer("Start:\n```\nx = __y__\n  z = 1\n")
    assert blocks[-1].verbatim and blocks[-1].text == "x = __y__\n  z = 1\n"


def test_prose_keeps_its_line_breaks_and_markdown() -> None:
    text = "First line of prose\nsecond line, same paragraph\n\n- **bold** item\n- `code` item"
    screen = drawn(text)
    assert "First line of prose\nsecond line, same paragraph" in screen
    assert "bold item" in screen and "**" not in screen
    assert "code item" in screen and "`" not in screen


@pytest.mark.parametrize(
    "prose",
    [
        "I read the file.  It has two functions.\nBoth take a request.  Neither checks it.",
        "Edit __init__.py to export handler.\nThen run __main__ again.",
        "for example: the first line\nwith a second one: and so on",
    ],
)
def test_prose_that_merely_resembles_code_stays_markdown(prose: str) -> None:
    assert [b.verbatim for b in split_answer(prose + "\n\n**done**")] == [False]


def test_a_markdown_table_is_still_a_table() -> None:
    table = (
        "| name       | size |\n|------------|------|\n| report.py  | 231  |\n| notes.txt  | 90   |"
    )
    assert [b.verbatim for b in split_answer("Files:\n\n" + table)] == [False]


@pytest.mark.parametrize(
    "words",
    [
        "Edit __init__.py and my_module_name.py",
        "It failed in <module> of <stdin>",
        "Call _private_helper() then __call__",
        "Use snake_case_names_here",
    ],
)
def test_underscores_and_angle_brackets_in_prose_are_literal(words: str) -> None:
    assert drawn(words).strip() == words


def test_code_spans_and_autolinks_are_left_alone() -> None:
    assert literal_markdown("`a_b` and <https://x.org/a_b>") == "`a_b` and <https://x.org/a_b>"
    assert drawn("run `__main__` at <https://example.org/a_b>").strip() == (
        "run __main__ at https://example.org/a_b"
    )


def test_prose_quoting_one_line_of_output_stays_readable() -> None:
    """A prose answer that merely mentions a word of the output is not made verbatim."""
    blocks = split_answer("The file **report.py** has 11 lines.", outputs(PYTHON))
    assert [b.verbatim for b in blocks] == [False]


@pytest.mark.parametrize(
    "content, expected",
    [
        (ToolResult("a\nb", count=2), "a\nb"),
        ({"display": "x\ny", "count": 2}, "x\ny"),
        ("plain\ntext", "plain\ntext"),
        ({"k": 1}, '{\n  "k": 1\n}'),
    ],
)
def test_output_text_is_what_the_user_sees(content: object, expected: str) -> None:
    assert output_text(content) == expected


def test_result_lines_show_the_output_up_to_a_limit() -> None:
    many = "\n".join(f"line {i}" for i in range(1, 31))
    shown = result_lines(many, "ok", limit=12)
    assert shown[:12] == [f"line {i}" for i in range(1, 13)]
    assert shown[12] == MORE.format(n=18, s="s")
    assert result_lines(ToolResult("- a\n- b", count=2)) == ["2 found: - a", "- b"]
    assert result_lines("boom\ntrace", "retry") == ["error: boom", "trace"]
    assert result_lines("x", "denied") == ["denied: x"]
    assert result_lines("a\tb\x1b[2J") == ["a       b\\x1b[2J"]


def test_a_file_with_windows_line_ends_shows_no_carriage_returns() -> None:
    crlf = PYTHON.replace("\n", "\r\n")
    screen = drawn("Here:\n\n" + crlf, outputs(crlf))
    assert "\\r" not in screen and 'if __name__ == "__main__":' in screen.splitlines()


@pytest.mark.parametrize(
    "quoted",
    ["title\x1b]0;pwned\x07 here", "clear\x1b[2J screen", "over\rwrite", "bell\x07 and \x9b"],
)
def test_control_characters_in_an_answer_are_written_out(quoted: str) -> None:
    """A file with terminal escapes, quoted verbatim, cannot retitle or clear the terminal."""
    for text, found in ((quoted, None), (f"Here:\n\n{quoted}\n{quoted}", outputs(quoted))):
        screen = drawn(text, found)
        assert not any(ch in screen for ch in "\x1b\x07\r\x9b"), repr(screen)
        assert "\\x" in screen or "\\r" in screen
