"""Errors Co reports as one readable line (no traceback). Kept import-light."""


class CoError(Exception):
    """An error whose message is meant for the user as it is."""


class SettingsError(CoError):
    """Bad settings; the message names the file or variable and the key."""


def print_warning(message: str) -> None:
    """The one way Co warns on stderr outside the chat screen: ``co: warning: ...``."""
    import sys

    from co_core.kernel.visible import on_screen

    print(f"co: warning: {on_screen(message)}", file=sys.stderr)
