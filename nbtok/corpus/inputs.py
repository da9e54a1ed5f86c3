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

import numpy as np

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


def line_shards(path, every):
    """``[(first line, end line, first byte, end byte), ...]``: the file's lines cut every
    ``every`` lines, found in one pass over its bytes, so that a shard reads only its own range."""
    cuts, n, pos, last = [0], 0, 0, b"\n"
    with open_binary(path) as f:
        while True:
            block = f.read(1 << 22)
            if not block:
                break
            nl = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
            # line n + j + 1 ends at pos + nl[j]; a shard starts after every `every`-th line
            cuts.extend((pos + nl[(-(n + 1)) % every::every] + 1).tolist())
            n += nl.shape[0]
            pos += len(block)
            last = block[-1:]
    n += last != b"\n"
    shards = []
    for k, first in enumerate(range(0, n, every)):
        end_byte = cuts[k + 1] if k + 1 < len(cuts) and cuts[k + 1] < pos else pos
        shards.append((first, min(n, first + every), cuts[k], end_byte))
    return shards


def read_lines(path, first_byte, end_byte):
    """The lines (str, without their newline) in a byte range that starts and ends at line starts."""
    with open_binary(path) as f:
        if hasattr(f, "seek") and _strip_compression(str(path))[1] == "":
            f.seek(first_byte)
        else:                                   # a compressed stream: decompress up to the range
            skip = first_byte
            while skip:
                got = len(f.read(min(skip, 1 << 22)))
                if not got:
                    break
                skip -= got
        data = _read_exact(f, end_byte - first_byte)
    text = data.decode("utf-8", errors="surrogateescape")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if data else []


def _read_exact(f, n):
    """``n`` bytes of ``f`` (fewer only at its end): a decompressing reader may return fewer
    than asked before its end."""
    parts = []
    while n > 0:
        got = f.read(n)
        if not got:
            break
        parts.append(got)
        n -= len(got)
    return b"".join(parts)


def iter_documents(path, kind, text_field="text", span=None):
    """Yield the documents (str) of one source, in order: all of them, or one shard's.

    ``span`` is a shard of ``lines`` / ``jsonl``: ``(first line, first byte, end byte)`` from
    ``line_shards``, read in one piece; of ``parquet``: ``(first row, end row)``."""
    if kind == "parquet":
        yield from _iter_parquet(path, text_field, *(span or (0, None)))
        return
    if kind == "file":
        with open_binary(path) as raw:
            yield raw.read().decode("utf-8", errors="surrogateescape")
        return
    if span is not None:
        first, lines = span[0], read_lines(path, span[1], span[2])
    else:
        first, lines = 0, _stream_lines(path)
    if kind == "lines":
        yield from lines
        return
    for lineno, line in enumerate(lines, first + 1):
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


def _stream_lines(path):
    with open_binary(path) as raw:
        f = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="\n")
        for line in f:
            yield line[:-1] if line.endswith("\n") else line


def _iter_parquet(path, column, first=0, end=None):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading Parquet needs pyarrow: pip install 'nbtok[parquet]'") from None
    pf = pq.ParquetFile(path)
    if column not in pf.schema_arrow.names:
        raise ValueError(f"{path}: no column {column!r} (columns: {pf.schema_arrow.names})")
    row = 0
    for batch in pf.iter_batches(columns=[column], batch_size=4096):
        lo, hi = max(first - row, 0), batch.num_rows if end is None else min(end - row, batch.num_rows)
        row += batch.num_rows
        if lo >= hi:
            if end is not None and row >= end:
                break
            continue
        for t in batch.column(0).slice(lo, hi - lo).to_pylist():
            if not isinstance(t, str):
                raise ValueError(f"{path}: column {column!r} holds a non-string value")
            yield t


def parquet_rows(path):
    """Number of rows of a Parquet file, from its metadata."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("reading Parquet needs pyarrow: pip install 'nbtok[parquet]'") from None
    return pq.ParquetFile(path).metadata.num_rows
