"""What a GGUF file says about its model, read from the header without loading weights.

Co takes the local model's context size, chat template, tool-call format and size (and so
whether it needs the small-model steering) from here rather than from constants for one
model. Only the header is read: the key-value metadata and the tensor list, long arrays
(vocabulary, merges) skipped, not kept.

Compared (bench/gguf_header.py): the ``gguf`` package's ``GGUFReader`` (llama.cpp's own)
builds a numpy view of every token and merge, about 200 times slower (seconds for
SmolLM2, tens of seconds under load for a 152k vocabulary); llama-cpp-python's
``vocab_only`` load takes 0.5 s with its import, prints to stderr and gives no parameter
count. The format (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md) is small
enough to read here, and tests/test_gguf.py checks this reader against ``GGUFReader`` on
generated files.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from co_core.kernel.errors import CoError

MAGIC = b"GGUF"
# value types: (struct format, size) for the fixed-size ones
_FIXED = {
    0: ("<B", 1),
    1: ("<b", 1),
    2: ("<H", 2),
    3: ("<h", 2),
    4: ("<I", 4),
    5: ("<i", 4),
    6: ("<f", 4),
    7: ("<?", 1),
    10: ("<Q", 8),
    11: ("<q", 8),
    12: ("<d", 8),
}
STRING, ARRAY = 8, 9
SHORT_ARRAY = 64  # arrays longer than this (vocabularies, merges) are skipped, not kept

SMALL_PARAMETERS = 1_000_000_000  # below this a model gets Co's small-model steering


class NotGGUF(CoError):
    """The file is not a GGUF model (or is cut short)."""


class _Cursor:
    def __init__(self, data: Any, path: Path) -> None:
        self.data, self.pos, self.path = data, 0, path

    def fixed(self, kind: int) -> Any:
        fmt, size = _FIXED[kind]
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error:
            raise NotGGUF(f"{self.path}: the GGUF header is cut short") from None
        self.pos += size
        return value

    def string(self) -> str:
        length = self.fixed(10)
        end = self.pos + length
        if end > len(self.data):
            raise NotGGUF(f"{self.path}: the GGUF header is cut short")
        text = bytes(self.data[self.pos : end]).decode("utf-8", errors="replace")
        self.pos = end
        return text

    def skip_strings(self, count: int) -> None:
        data, pos, unpack = self.data, self.pos, struct.unpack_from
        try:
            for _ in range(count):
                pos += 8 + unpack("<Q", data, pos)[0]
        except struct.error:
            raise NotGGUF(f"{self.path}: the GGUF header is cut short") from None
        self.pos = pos

    def value(self, kind: int) -> Any:
        if kind in _FIXED:
            return self.fixed(kind)
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            inner, count = self.fixed(4), self.fixed(10)
            if count > SHORT_ARRAY:
                if inner == STRING:
                    self.skip_strings(count)
                elif inner in _FIXED:
                    self.pos += _FIXED[inner][1] * count
                else:
                    for _ in range(count):
                        self.value(inner)
                return None
            return [self.value(inner) for _ in range(count)]
        raise NotGGUF(f"{self.path}: unknown GGUF value type {kind}")


def read_header(path: Path) -> tuple[dict[str, Any], int]:
    """The metadata (long arrays left out) and the parameter count (tensor elements)."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < 4:
                raise NotGGUF(f"{path}: not a GGUF model file")
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise NotGGUF(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        if data[:4] != MAGIC:
            raise NotGGUF(f"{path}: not a GGUF model file")
        cursor = _Cursor(data, path)
        cursor.pos = 4
        version = cursor.fixed(4)
        if version < 2:
            raise NotGGUF(f"{path}: GGUF version {version} is too old; convert it again")
        tensors, count = cursor.fixed(10), cursor.fixed(10)
        meta: dict[str, Any] = {}
        for _ in range(count):
            key = cursor.string()
            meta[key] = cursor.value(cursor.fixed(4))
        parameters = 0
        for _ in range(tensors):
            cursor.string()  # name
            elements = 1
            for _ in range(cursor.fixed(4)):
                elements *= cursor.fixed(10)
            cursor.pos += 4 + 8  # type, offset
            parameters += elements
        return meta, parameters
    finally:
        data.close()


def _size_label(parameters: int) -> str:
    for unit, size in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if parameters >= size:
            return f"{parameters / size:.3g}{unit}"
    return str(parameters)


def tool_format(template: str | None) -> str:
    """The tool-call format the model was trained on, as its chat template shows it.

    ``hermes``: ``<tool_call>{"name", "arguments"}</tool_call>`` (Qwen2.5/3, SmolLM3, Hermes),
    the form Co's grammar-constrained calls use; ``llama3``: a bare JSON object with
    ``parameters`` (Llama 3.1/3.2); ``mistral``: ``[TOOL_CALLS]``; ``none``: the template
    has no tools, so Co's grammar and its system prompt teach the form.
    """
    text = template or ""
    if "<tool_call>" in text:
        return "hermes"
    if "[TOOL_CALLS]" in text:
        return "mistral"
    if "<|python_tag|>" in text or ("tools" in text and '"parameters"' in text):
        return "llama3"
    return "none"


@dataclass(frozen=True)
class GGUFInfo:
    """What Co needs to know about a local model file."""

    path: Path
    architecture: str
    name: str  # general.name, else the file's stem
    parameters: int
    context_length: int | None  # the length it was trained for (n_ctx_train)
    chat_template: str | None
    license: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def size_label(self) -> str:
        """``135M``, ``1.54B``: counted from the tensors (``general.size_label`` can be
        missing or describe the model before it was cut down)."""
        return _size_label(self.parameters)

    @property
    def small(self) -> bool:
        """A model this small gets Co's small-model steering by default."""
        return 0 < self.parameters < SMALL_PARAMETERS

    @property
    def tool_format(self) -> str:
        return tool_format(self.chat_template)

    @property
    def label(self) -> str:
        """``SmolLM2-135M-Instruct.Q4_1 (135M)``: the file is what the user chose and sees."""
        return f"{self.path.stem} ({self.size_label})"


def read(path: Path) -> GGUFInfo:
    """Read ``path``'s header; ``NotGGUF`` (one line) when it is not a usable GGUF file."""
    meta, parameters = read_header(path)
    arch = str(meta.get("general.architecture") or "")
    context = meta.get(f"{arch}.context_length")
    template = meta.get("tokenizer.chat_template")
    name = meta.get("general.name")
    return GGUFInfo(
        path=path,
        architecture=arch,
        name=name if isinstance(name, str) and name.strip() else path.stem,
        parameters=parameters,
        context_length=int(context) if isinstance(context, int) and context > 0 else None,
        chat_template=template if isinstance(template, str) else None,
        license=meta.get("general.license")
        if isinstance(meta.get("general.license"), str)
        else None,
        metadata=meta,
    )


_QUANT = re.compile(r"[.-](q\d\w*|f16|f32|bf16|iq\d\w*)$", re.IGNORECASE)


def short_name(path: Path) -> str:
    """A name for ``local:NAME``: the file's stem, lower-case, quantisation dropped."""
    return _QUANT.sub("", path.stem).lower()
