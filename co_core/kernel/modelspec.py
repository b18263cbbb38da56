"""Is a model string one Co can use? Checked where it is written: the ``model`` setting
(``co config set model``, settings files, ``CO_MODEL``) and ``--model``.

Only the form is checked here, without network or imports: ``auto``, a provider's prefix
alone (``local``) or ``prefix:name``; with the providers the plugins give
(``register_models``, co_core.kernel.providers), also that the prefix is one of theirs
(with a "did you mean"). Whether the provider's package is installed, the server answers
or the model exists is found out when Co starts (``co_core.agent.models``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from co_core.kernel.providers import Providers

AUTO = "auto"
_known: Providers | None = None  # the running app's providers, for settings' own check


def use(providers: Providers | None) -> None:
    """The providers the settings' ``model`` is checked against (the app sets them once its
    plugins are loaded; before that only the form is checked)."""
    global _known
    _known = providers


def known() -> Providers | None:
    return _known


EXAMPLES = "provider:name (`co status` checks it), or auto"
_PREFIX = re.compile(r"(?:gateway/)?[a-z][a-z0-9._-]*")


def check(spec: str, providers: Providers | None = None) -> str:
    """``spec`` tidied (surrounding spaces gone), or ValueError in one line saying why not
    (the caller names the value: settings add ``(got '…')``, ``--model`` its own)."""
    text = spec.strip()
    if not text:
        raise ValueError(f"no model given; use {providers.examples() if providers else EXAMPLES}")
    if text == AUTO:
        return text
    prefix, colon, name = text.partition(":")
    if providers is not None:
        from co_core.kernel.providers import ProviderError

        try:
            providers.find(text)
        except ProviderError as exc:
            if not colon and prefix not in providers.by_prefix:
                raise ValueError(f"should look like provider:name; {exc}") from None
            raise ValueError(str(exc)) from None
        return text
    if not _PREFIX.fullmatch(prefix):
        raise ValueError(f"should look like provider:name; use {EXAMPLES}")
    if colon and not name.strip():
        raise ValueError(f"names no model after {prefix!r}; use {EXAMPLES}")
    return text


def is_auto(spec: str | None) -> bool:
    return spec is None or spec.strip() in ("", AUTO)
