"""How plugins give Co model providers (``register_models``), without importing them.

A provider owns a prefix (``ollama`` in ``ollama:qwen3:4b``) and says, for a model name:

- how to build the pydantic-ai model from settings (``build(request)``, with a
  :class:`ModelRequest`: the name, the settings, ``--base-url``, and a frontend for notices
  and download offers); it returns the model, or a :class:`BuiltModel` when it has more to
  say (a label, something to stop on exit, the canonical model string);
- its row in ``co status`` (``status(name, settings)`` -> ``CheckResult``);
- how to count a request's tokens (``counter(model)`` -> a ``co_core.sessions`` counter;
  default: Co's estimate, or the server's own tokenizer where it has one);
- what a request costs (``price(usage, name)`` -> US dollars as a ``Decimal``, ``None``
  when unknown; or ``free=True`` for a model on this machine).

Like simonw/llm's ``register_models``: Co's own providers register exactly as a plugin's
do (``co_core/agent/providers.py``), and nothing else in Co names one.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from co_core.kernel.host import PluginHost


@dataclass
class ModelRequest:
    """What a provider's ``build`` is given: the model's name (after the prefix), Co's
    settings, ``--base-url`` if given, and the conversation's frontend (notices, download
    offers; ``None`` when nobody is there)."""

    name: str
    settings: Any
    base_url: str | None = None
    frontend: Any = None


@dataclass
class BuiltModel:
    """A provider's model, with what Co should know of it: its label for the user, what to
    call on exit (a server to stop), and the canonical model string (``local:NAME``)."""

    model: Any
    label: str = ""
    closers: list[Callable[[], None]] = field(default_factory=list)
    spec: str = ""


Price = Callable[[Any, str], "Decimal | None"]


@dataclass(frozen=True)
class ModelProvider:
    """One provider, as a plugin registered it."""

    prefix: str
    build: Callable[[ModelRequest], Any]
    plugin: str = ""
    status: Callable[[str, Any], Any] | None = None
    counter: Callable[[Any], Any] | None = None
    price: Price | None = None
    free: bool = False  # a model on this machine: every request costs nothing
    example: str = ""  # "ollama:qwen3:4b", for the line naming the known forms
    needs_name: bool = True  # ``local`` alone is a model; ``ollama`` alone is not
    form: Callable[[str], str | None] | None = None  # what is wrong with a name, or None

    def cost(self, usage: Any, name: str) -> tuple[Decimal | None, str]:
        """What ``usage`` cost, and why it is unknown when it is."""
        if self.free:
            return Decimal(0), ""
        if self.price is None:
            return None, f"no price known for {name or self.prefix}"
        try:
            found = self.price(usage, name)
        except (LookupError, ValueError):
            found = None
        return found, "" if found is not None else f"no price known for {name}"


class ProviderError(ValueError):
    """A model string whose provider Co does not know (one line, with the known forms)."""


@dataclass
class Providers:
    """Every provider the loaded plugins give, by prefix."""

    by_prefix: Mapping[str, ModelProvider]

    @classmethod
    def of(cls, host: PluginHost) -> Providers:
        found = host.named("register_models", "model provider")
        return cls(
            {
                prefix: ModelProvider(prefix, entry.value, entry.plugin, **entry.options)
                for prefix, entry in found.items()
            }
        )

    def find(self, spec: str) -> tuple[ModelProvider, str]:
        """The provider of model string ``spec`` and the model's name after its prefix."""
        prefix, _, name = spec.strip().partition(":")
        provider = self.by_prefix.get(prefix.removeprefix("gateway/"))
        if provider is None:
            near = difflib.get_close_matches(prefix, sorted(self.by_prefix), n=1, cutoff=0.75)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ProviderError(f"unknown model provider {prefix!r}{hint}; use {self.examples()}")
        if provider.needs_name and not name.strip():
            raise ProviderError(f"names no model after {prefix!r}; use {self.examples()}")
        wrong = provider.form(name) if provider.form is not None else None
        if wrong:
            raise ProviderError(wrong)
        return provider, name

    def examples(self) -> str:
        shown = [p.example for p in self.by_prefix.values() if p.example]
        return ", ".join(shown) + ", or auto"
