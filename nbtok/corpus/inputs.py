"""Corpus inputs: plain text (one document per line or per file), JSON lines with a text field,
Parquet with a text column; ``.gz`` / ``.zst`` decompressed on the fly; globs expanded.

A *source* is ``(path, kind)``; its documents are numbered in file order, so a shard is a
``(source index, first document, end document)`` range and does not depend on workers.
"""
import glob
import gzip
import io
import json
import os
from pathlib import Path

KINDS = ("lines", "file", "jsonl", "parquet")


def _strip_compression(name):
    for ext in (".gz", ".zst"):
        if name.endswith(ext):
            return name[: -len(ext)], ext
    return name, ""


def guess_kind(path, default="lines"):
    """``jsonl`` for .jsonl/.json, ``parquet`` for .parquet, else ``default``."""
    base, _ = _strip_compression(str(path))
    if base.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if base.endswith(".parquet"):
        return "parquet"
    return default


def expand_inputs(inputs, kind=None):
    """Sorted file list for paths, folders and globs; ``[(path str, kind), ...]``."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError("inputs must be a path, a glob or a non-empty list of them")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    out = []
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"inputs must be paths or globs, got {type(item).__name__}")
        s = str(item)
        if Path(s).is_dir():
            found = sorted(str(p) for p in Path(s).rglob("*") if p.is_file())
        elif any(c in s for c in "*?["):
            found = sorted(p for p in glob.glob(s, recursive=True) if Path(p).is_file())
        else:
            if not Path(s).is_file():
                raise FileNotFoundError(f"input {s!r} does not exist")
            found = [s]
        if not found:
            raise FileNotFoundError(f"input {s!r} matches no file")
        out.extend(found)
    return [(p, kind or guess_kind(p)) for p in out]


def open_binary(path):
    """A binary file object, decompressing ``.gz`` and ``.zst``."""
    _, ext = _strip_compression(str(path))
    if ext == ".gz":
        return gzip.open(path, "rb")
    if ext == ".zst":
        try:
            import zstandard
        except ImportError:
            raise ImportError("reading .zst needs zstandard: pip install 'nbtok[zstd]'") from None
        return zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)
    return open(path, "rb")


def iter_documents(path, kind, text_field="text"):
    """Yield the documents (str) of one source, in order."""
    if kind == "parquet":
        yield from _iter_parquet(path, text_field)
        return
    with open_binary(path) as raw:
        if kind == "file":
            yield raw.read().decode("utf-8", errors="surrogateescape")
            return
        f = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="\n")
        for lineno, line in enumerate(f, 1):
            if kind == "lines":
                line = line[:-1] if line.endswith("\n") else line
                yield line
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not JSON ({e.msg})") from None
            text = obj.get(text_field) if isinstance(obj, dict) else None
            if not isinstance(text, str):
                raise ValueError(f"{path}:{lineno}: no string field {text_field!r}")
            yield text


def _iter_parquet(path, column):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading Parquet needs pyarrow: pip install 'nbtok[parquet]'") from None
    pf = pq.ParquetFile(path)
    if column not in pf.schema_arrow.names:
        raise ValueError(f"{path}: no column {column!r} (columns: {pf.schema_arrow.names})")
    for batch in pf.iter_batches(columns=[column], batch_size=4096):
        for t in batch.column(0).to_pylist():
            if not isinstance(t, str):
                raise ValueError(f"{path}: column {column!r} holds a non-string value")
            yield t


def count_documents(path, kind, text_field="text"):
    """Number of documents in a source (one streaming pass; Parquet reads its metadata)."""
    if kind == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("reading Parquet needs pyarrow: pip install 'nbtok[parquet]'") from None
        return pq.ParquetFile(path).metadata.num_rows
    if kind == "file":
        return 1
    if kind == "lines":
        n, last = 0, b"\n"
        with open_binary(path) as f:
            while True:
                block = f.read(1 << 22)
                if not block:
                    break
                n += block.count(b"\n")
                last = block[-1:]
        return n + (last != b"\n")
    return sum(1 for _ in iter_documents(path, kind, text_field))
