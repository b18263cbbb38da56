"""Errors Co reports as one readable line (no traceback). Kept import-light."""


class CoError(Exception):
    """An error whose message is meant for the user as it is."""


class SettingsError(CoError):
    """Bad settings; the message names the file or variable and the key."""
