"""Co's own spans: ``with span("policy.decision", key=k) as s: ...``.

Light on purpose: this module imports nothing from OpenTelemetry. Until
:func:`co_core.telemetry.setup_tracing` activates a tracer, ``span()`` hands back one
shared do-nothing object, so instrumented code costs a function call when tracing is off.
Attribute names without a dot get the ``co.`` prefix. ``content=`` attributes (prompts,
commands, output) are kept only when the user opted in to content in traces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, Protocol

Kind = Literal["internal", "client"]

_state: dict[str, Any] = {"tracer": None, "content": False}


class Span(Protocol):
    """What ``span()`` gives: ``with span(...) as s: s.set(rows=3)``."""

    def __enter__(self) -> Span: ...

    def __exit__(self, *exc: object) -> bool | None: ...

    def set(self, **values: object) -> None:
        """Add attributes (names without a dot get the ``co.`` prefix)."""

    def set_content(self, **values: object) -> None:
        """Add attributes that hold content: kept only with content in traces on."""

    def error(self, message: str) -> None:
        """Mark the span failed."""

    @property
    def recording(self) -> bool: ...


def activate(tracer: object, include_content: bool) -> None:
    """Called by setup_tracing; ``tracer=None`` switches Co's spans off again."""
    _state["tracer"] = tracer
    _state["content"] = bool(include_content)


def tracing() -> bool:
    return _state["tracer"] is not None


def include_content() -> bool:
    return bool(_state["content"])


def attribute_value(value: object) -> object:
    """An OpenTelemetry-compatible value: primitives stay, the rest becomes text."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if value is None:
        return ""
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, (str, bool, int, float)) for v in value
    ):
        if len({type(v) for v in value}) <= 1:
            return list(value)
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def attributes(values: Mapping[str, object]) -> dict[str, object]:
    """Co's attribute names (``co.`` unless dotted) and values; ``None`` values are left out."""
    return {
        (k if "." in k else f"co.{k}"): attribute_value(v)
        for k, v in values.items()
        if v is not None
    }


class _NoSpan:
    """What ``span()`` returns when tracing is off: every method does nothing."""

    __slots__ = ()

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def set(self, **values: object) -> None:
        pass

    def set_content(self, **values: object) -> None:
        pass

    def error(self, message: str) -> None:
        pass

    @property
    def recording(self) -> bool:
        return False


NO_SPAN = _NoSpan()


def mark_failed(otel_span: Any, error: BaseException, content: bool) -> None:
    """Record ``error`` on an OpenTelemetry span: an ``exception`` event with its type (its
    message only with content on) and status ERROR saying the same, shortly."""
    from opentelemetry.trace import StatusCode

    name = f"{type(error).__module__}.{type(error).__qualname__}".removeprefix("builtins.")
    event = {"exception.type": name, "exception.escaped": "True"}
    short = type(error).__qualname__
    if content:
        event["exception.message"] = str(error)
    otel_span.add_event("exception", event)
    otel_span.set_status(StatusCode.ERROR, f"{short}: {error}" if content else short)


class _Span:
    """A live span; ``set(**attrs)`` adds attributes, ``error(msg)`` marks it failed."""

    __slots__ = ("_name", "_attrs", "_kind", "_cm", "_span")

    def __init__(self, name: str, attrs: dict[str, object], kind: Kind = "internal") -> None:
        self._name = name
        self._attrs = attrs
        self._kind = kind
        self._cm: Any = None
        self._span: Any = None

    def __enter__(self) -> _Span:
        tracer = _state["tracer"]
        if tracer is None:  # switched off meanwhile
            return self
        from opentelemetry.trace import SpanKind

        self._cm = tracer.start_as_current_span(
            self._name,
            kind=SpanKind[self._kind.upper()],
            attributes=self._attrs,
            record_exception=False,  # recorded below: the message only with content on
            set_status_on_exception=False,
        )
        self._span = self._cm.__enter__()
        return self

    def __exit__(self, *exc: object) -> bool:
        if self._cm is None:
            return False
        error = exc[1] if len(exc) > 1 else None
        if isinstance(error, Exception):
            mark_failed(self._span, error, _state["content"])
        return bool(self._cm.__exit__(*exc))

    def set(self, **values: object) -> None:
        if self._span is not None:
            self._span.set_attributes(attributes(values))

    def set_content(self, **values: object) -> None:
        if _state["content"]:
            self.set(**values)

    def error(self, message: str) -> None:
        if self._span is not None:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR, message))

    @property
    def recording(self) -> bool:
        return self._span is not None


class _ToolSpan:
    """The running tool call's span (pydantic-ai's ``execute_tool``), to add Co's attributes to.

    Co's per-call bookkeeping (the policy decision) goes on the span that is already there
    rather than on a span of its own: one span per tool call instead of two.
    """

    __slots__ = ("_span",)

    def __init__(self, traced: Any) -> None:
        self._span = traced

    def __enter__(self) -> _ToolSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None  # an exception is the tool span's to record (pydantic-ai does)

    def set(self, **values: object) -> None:
        self._span.set_attributes(attributes(values))

    def set_content(self, **values: object) -> None:
        if _state["content"]:
            self.set(**values)

    def error(self, message: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, message))

    @property
    def recording(self) -> bool:
        return True


def tool_span(call_id: str | None) -> Span | None:
    """The span of tool call ``call_id`` if it is the current span, else None.

    pydantic-ai opens an ``execute_tool`` span around each call (its ``gen_ai.tool.call.id``
    attribute names the call); work done inside it, like the policy decision, can annotate
    it with ``tool_span(call_id).set(...)``. None when tracing is off or no such span is open.
    """
    if _state["tracer"] is None or not call_id:
        return None
    from opentelemetry.trace import get_current_span

    current = get_current_span()
    attrs = getattr(current, "attributes", None)
    if attrs is None or not current.is_recording():
        return None
    return _ToolSpan(current) if attrs.get("gen_ai.tool.call.id") == call_id else None


def span(name: str, *, content: Mapping[str, object] | None = None, **attrs: object) -> Span:
    """A context manager tracing one piece of Co's work (no-op when tracing is off)."""
    return _make(name, content, attrs, "internal")


def client_span(name: str, *, content: Mapping[str, object] | None = None, **attrs: object) -> Span:
    """Like :func:`span`, for a request to another process (an MCP server): a CLIENT span,
    as OpenTelemetry names a call whose other end is elsewhere."""
    return _make(name, content, attrs, "client")


def _make(
    name: str, content: Mapping[str, object] | None, attrs: Mapping[str, object], kind: Kind
) -> Span:
    if _state["tracer"] is None:
        return NO_SPAN
    values = attributes(attrs)
    if content and _state["content"]:
        values.update(attributes(content))
    return _Span(name, values, kind)


def current_context() -> object | None:
    """The current span, to carry to work done for it on another thread or event loop
    (:func:`attached`); None when tracing is off."""
    if _state["tracer"] is None:
        return None
    from opentelemetry.context import get_current

    return get_current()


@contextmanager
def attached(context: object | None) -> Iterator[None]:
    """Make ``context`` (from :func:`current_context`) current here: spans made inside nest
    under its span, and requests made inside carry it (an MCP call's ``_meta.traceparent``)."""
    if context is None:
        yield
        return
    from opentelemetry.context import attach, detach

    token = attach(context)  # type: ignore[arg-type]
    try:
        yield
    finally:
        detach(token)
