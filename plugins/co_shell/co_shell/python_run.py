"""How ``run_python`` runs exactly the code that was approved, and only that.

A script's permission key carries a hash of its content; if the sandbox then read the file
again, a rewrite in between (a concurrent process, a second call) would run code nobody
approved. So the content that was hashed travels in the command itself: a short bootstrap
(``python3 -c``) compiles those bytes under the script's name and runs them as
``__main__``, as ``python3 ./tools/job.py`` would: ``sys.argv[0]`` is ``./tools/job.py``,
``__file__`` (and tracebacks) name ``/workspace/tools/job.py``, so paths made from the
script's folder work; only that folder is *not* put on ``sys.path`` (see below). The file
is never read inside the sandbox.

Python runs isolated (``-I``: no workspace folder or script folder on ``sys.path``, no
``PYTHON*`` variables, no user site-packages), so an approved stdlib-only snippet cannot
import a ``json.py`` planted in the workspace. ``shell.python_workspace_imports`` turns
that off (the workspace, or the script's folder, comes first on ``sys.path`` as with plain
``python3``); the approval then covers the code shown, not the modules it imports.

A snippet runs as ``python3 -c`` runs it, except that the value of its last line, when
that is an expression (None aside), is printed as the Python shell would: a model that
writes ``7919 * 104729`` gets 829348951, not nothing. The code is still its own argument,
byte for byte; a fixed bootstrap (:data:`SNIPPET`) compiles it.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_ARG_BYTES = 100_000  # Linux refuses a single argument over 128 KiB
MAX_SOURCE_BYTES = 1_000_000  # all arguments together must stay under ~2 MB

BOOTSTRAP = """\
def _co_run():
    import sys
    imports, n = sys.argv[1] == "1", int(sys.argv[2])
    source = "".join(sys.argv[3:3 + n]).removeprefix("\\ufeff")
    path = sys.argv[3 + n]
    sys.argv[:] = [path, *sys.argv[4 + n:]]
    import os
    where = os.path.abspath(path)
    if imports:
        sys.path[0] = os.path.dirname(where)
    main = sys.modules["__main__"].__dict__
    for name in [k for k in main if not k.startswith("__")]:
        del main[name]
    main["__file__"] = where
    try:
        exec(compile(source, where, "exec", dont_inherit=True), main)
    except SystemExit:
        raise
    except BaseException as error:
        error = error.with_traceback(error.__traceback__.tb_next)
        sys.excepthook(type(error), error, error.__traceback__)
        sys.exit(1)
_co_run()
"""


SNIPPET = """\
def _co_run():
    import ast, sys
    source = sys.argv[1].removeprefix("\\ufeff")
    sys.argv[:] = ["-c", *sys.argv[2:]]
    main = sys.modules["__main__"].__dict__
    for name in [k for k in main if not k.startswith("__")]:
        del main[name]
    try:
        tree = ast.parse(source, "<string>")
        body = tree.body
        last = body.pop() if body and isinstance(body[-1], ast.Expr) else None
        exec(compile(tree, "<string>", "exec", dont_inherit=True), main)
        if last is not None:
            line = ast.Expression(last.value)
            value = eval(compile(line, "<string>", "eval", dont_inherit=True), main)
            if value is not None:
                print(repr(value))
    except SystemExit:
        raise
    except SyntaxError as error:
        sys.excepthook(type(error), error.with_traceback(None), None)
        sys.exit(1)
    except BaseException as error:
        error = error.with_traceback(error.__traceback__.tb_next)
        sys.excepthook(type(error), error, error.__traceback__)
        sys.exit(1)
_co_run()
"""


class CodeRefused(ValueError):
    """Code that cannot be handed to the sandbox as it is; the message says why."""


def python(workspace_imports: bool) -> list[str]:
    """The interpreter and its flags (``-B -u``: the environment's ``PYTHON*`` variables
    are ignored under ``-I``, so the sandbox's defaults are given as flags)."""
    return ["python3", "-B", "-u"] if workspace_imports else ["python3", "-I", "-B", "-u"]


def snippet(code: str, args: Sequence[str], *, workspace_imports: bool) -> list[str]:
    """argv for ``python3 -c CODE ARGS`` showing the last line's value: the snippet is its
    own argument, byte for byte, after the fixed bootstrap."""
    size = len(_checked(code, "the code"))
    if size > MAX_ARG_BYTES:
        raise CodeRefused(
            f"the code is {size} bytes, more than a command line holds ({MAX_ARG_BYTES}); "
            "write it to a .py file and run that with path="
        )
    return [*python(workspace_imports), "-c", SNIPPET, code, *args]


def script(source: str, path: str, args: Sequence[str], *, workspace_imports: bool) -> list[str]:
    """argv running ``source`` as the script ``path`` (see the module's docstring)."""
    size = len(_checked(source, f"{path!r}"))
    if size > MAX_SOURCE_BYTES:
        raise CodeRefused(
            f"{path!r} is {size} bytes; run_python runs scripts up to {MAX_SOURCE_BYTES} bytes"
        )
    chunks = _chunks(source)
    flag = "1" if workspace_imports else "0"
    return [
        *python(workspace_imports),
        "-c",
        BOOTSTRAP,
        flag,
        str(len(chunks)),
        *chunks,
        path,
        *args,
    ]


def _checked(text: str, what: str) -> bytes:
    if "\0" in text:
        raise CodeRefused(f"{what} contains a NUL character, which Python source cannot hold")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CodeRefused(f"{what} is not valid text ({exc.reason})") from None


def _chunks(text: str) -> list[str]:
    """``text`` in pieces of at most MAX_ARG_BYTES each, cut between characters (so each
    piece is valid UTF-8 on any way to the sandbox, the Docker API's JSON included)."""
    data = text.encode("utf-8")
    chunks, start = [], 0
    while start < len(data):
        end = min(start + MAX_ARG_BYTES, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # inside a character
            end -= 1
        chunks.append(data[start:end].decode("utf-8"))
        start = end
    return chunks or [""]
