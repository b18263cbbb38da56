"""Does llama.cpp's own grammar engine let a model write ``text`` under a GBNF grammar, or
under a JSON schema as llama-cpp-python's server turns it into one?

The text is tokenized with the SmolLM2 vocabulary (loaded alone, no weights) and fed token
by token to llama.cpp's grammar sampler, as a constrained model's answer would be; at the
end the grammar must let the answer stop. Used to check that the calls a scripted model
makes are ones a real model could make under the grammar Co sent.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def _QUIET(level: int, text: bytes, data: Any) -> None:
    return None


@contextmanager
def vocabulary() -> Iterator[Any]:
    llama = pytest.importorskip("llama_cpp")
    from co_core.agent.local import server as local_model

    gguf = local_model.default_gguf()
    if gguf is None:
        pytest.skip("needs the local extra (the SmolLM2 GGUF)")
    llama.llama_log_set(_QUIET, ctypes.c_void_p(0))  # no loading report on stderr
    llama.llama_backend_init()
    params = llama.llama_model_default_params()
    params.vocab_only = True
    model = llama.llama_model_load_from_file(str(gguf).encode(), params)
    assert model, f"cannot load the vocabulary of {gguf}"
    try:
        yield llama.llama_model_get_vocab(model)
    finally:
        llama.llama_model_free(model)


def _allowed(llama: Any, sampler: Any, token: int) -> bool:
    data = (llama.llama_token_data * 1)(llama.llama_token_data(token, 0.0, 0.0))
    candidates = llama.llama_token_data_array(data, 1, -1, False)
    llama.llama_sampler_apply(sampler, ctypes.byref(candidates))
    return bool(data[0].logit != float("-inf"))


def accepts(grammar: str, text: str) -> bool:
    """Whether a model constrained by ``grammar`` can answer exactly ``text``."""
    import llama_cpp as llama

    with vocabulary() as vocab:
        raw = text.encode()
        buffer = (llama.llama_token * (len(raw) + 8))()
        count = llama.llama_tokenize(vocab, raw, len(raw), buffer, len(buffer), False, True)
        assert count >= 0, "the text does not tokenize"
        sampler = llama.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
        assert sampler, "llama.cpp refused the grammar"
        try:
            for token in buffer[:count]:
                if not _allowed(llama, sampler, token):
                    return False
                llama.llama_sampler_accept(sampler, token)
            return _allowed(llama, sampler, llama.llama_vocab_eos(vocab))  # it may end here
        finally:
            llama.llama_sampler_free(sampler)


def accepts_schema(schema: Any, text: str) -> bool:
    """Whether a model constrained by the JSON ``schema`` can answer exactly ``text``: the
    schema turned into a grammar by llama.cpp's own converter (llama-cpp-python's port,
    what its server runs on ``response_format``), which must not fail (the server would
    silently fall back to any JSON)."""
    import json

    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return accepts(json_schema_to_gbnf(json.dumps(schema)), text)
