"""The REPL's input history file, with secrets masked before a line is written.

A token pasted at the prompt stays usable for this session's up-arrow (prompt_toolkit
keeps the lines it was given in memory); the file in the data dir gets the line as the
audit trail would show it (``co_core.kernel.redact``).
"""

from __future__ import annotations

from prompt_toolkit.history import FileHistory

from co_core.kernel.redact import Redactor


class MaskedFileHistory(FileHistory):
    def __init__(self, filename: str, redactor: Redactor | None = None) -> None:
        super().__init__(filename)
        self.redactor = redactor or Redactor()
        self.failed = False

    def store_string(self, string: str) -> None:
        """Append the masked line; a file that stops taking lines (the disk filled up, the
        folder went read-only) leaves this session's history in memory only."""
        if self.failed:
            return
        try:
            super().store_string(self.redactor.text(string))
        except OSError:
            self.failed = True
