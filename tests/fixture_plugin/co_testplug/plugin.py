"""Hooks of the test plugin: a few tools with every outcome the agent must handle."""

from __future__ import annotations

from typing import Any

from co_core import hookimpl


@hookimpl
def register_tools(register: Any) -> None:
    register("co_testplug.tools:lookup", risk="read", permission="test:lookup:{query}")
    register("co_testplug.tools:add_numbers", risk="read")
    register("co_testplug.tools:always_wrong", risk="read", retries=2)
    register("co_testplug.tools:write_note", risk="write", permission="fs:write:{name}")
    register("co_testplug.tools:slow", risk="read")
    register("co_testplug.tools:use_resource", risk="read")


@hookimpl
def register_deps(register: Any) -> None:
    from co_testplug.tools import Marker

    register("marker", Marker)


@hookimpl
def system_instructions(settings: Any) -> str:
    return "The test plugin's lookup tool knows about colours."


@hookimpl
def register_slash_commands(register: Any) -> None:
    register("ping", lambda arg, deps: f"pong {arg}".strip(), help="answer pong")


@hookimpl
def prompt_markers(settings: Any) -> str | None:
    import os

    return os.environ.get("CO_TEST_MARKER")


@hookimpl
def plugin_ready(settings: Any) -> dict[str, str] | None:
    # use_resource stands for a tool whose service is not set up, when a test says so.
    import os

    if os.environ.get("CO_TEST_UNREADY"):
        return {"use_resource": "the marker service is not set up: run `co marker login`"}
    return None
