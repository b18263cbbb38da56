"""co-google's resource key: the one set of Google clients a session shares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from co_core import ResourceKey

if TYPE_CHECKING:
    from co_google.services import GoogleServices

GOOGLE: ResourceKey[GoogleServices] = ResourceKey("google.services")
