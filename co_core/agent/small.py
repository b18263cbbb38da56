"""The ``steering`` settings: which models Co steers, and how it decodes their answers.

Steering is for models too small to choose tools and relay results on their own: under
``small_below`` billion parameters by default (the built-in SmolLM2 has 0.135). Co learns
a model's size from the GGUF file (``local``), from Ollama (``/api/show``) or from a
llama.cpp server (``/v1/models``); a model whose size it cannot learn is not steered
unless ``mode`` is ``on``.
"""

from __future__ import annotations

from typing import Literal

from co_core.kernel.settings import SectionModel, setting

BILLION = 1e9
STEERED_MAX_TOKENS = 256  # a steered model's longest answer
STEERED_RESULT_CHARS = 1200  # of one tool result, as a steered model reads it


class SteeringSettings(SectionModel):
    mode: Literal["auto", "on", "off"] = setting(
        "auto",
        help="steer the model (Co picks tools, constrains calls, feeds results back): auto "
        "(models under small_below), on (any llama.cpp or Ollama model), off",
    )
    small_below: float = setting(
        1.0, gt=0, help="auto steers models with fewer parameters than this, in billions"
    )
    temperature: float = setting(
        0.0,
        ge=0,
        le=2,
        help="sampling temperature of steered and `local` models (0: the same words get the "
        "same answer)",
    )
    result_chars: int = setting(
        STEERED_RESULT_CHARS,
        ge=200,
        help="characters of one tool result a steered model reads; a longer one is cut to "
        "its first line and the lines that match the question",
    )


def steered(
    section: SteeringSettings, *, parameters: float | None, explicit: bool | None = None
) -> bool:
    """Does Co steer a model of ``parameters`` (None: unknown)? ``explicit`` is a model's
    own setting (``local.small``), which wins over ``mode``."""
    if explicit is not None:
        return explicit
    if section.mode != "auto":
        return section.mode == "on"
    return parameters is not None and parameters < section.small_below * BILLION
