"""Shard plan, per-shard work and the manifest (resume).

A shard is a range of documents of one source: ``shard_size`` documents at a time, numbered in
input order, so the files written do not depend on the number or order of workers. A shard is
finished when its files and its ``.done.json`` record exist (all written atomically); a rerun
skips finished shards and redoes the others from scratch.
"""
import hashlib
import json
import os
import pickle
import re
from pathlib import Path

import numpy as np

from ..formats._atomic import write_atomic
from .inputs import iter_documents, line_shards, parquet_rows
from .writers import shard_files, write_shard

MANIFEST = "manifest.json"


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def plan_shards(sources, shard_size, text_field):
    """``[{"index", "path", "kind", "start", "end", "span"}, ...]`` covering every document once.

    A shard of a text or JSON lines file is ``shard_size`` lines (``span``: its first line and its
    byte range, found in one pass, so that each shard reads only its own bytes); of a Parquet
    file, ``shard_size`` rows; a ``file`` source is one document."""
    specs = []
    for path, kind in sources:
        if kind == "parquet":
            n = parquet_rows(path)
            ranges = [(s, min(n, s + shard_size), (s, min(n, s + shard_size))) for s in range(0, n, shard_size)]
        elif kind == "file":
            ranges = [(0, 1, None)]
        else:
            ranges = [(first, end, (first, b0, b1)) for first, end, b0, b1 in line_shards(path, shard_size)]
        for start, end, span in ranges:
            specs.append({"index": len(specs), "path": path, "kind": kind, "start": start, "end": end,
                          "span": span})
    return specs


def shard_documents(spec, text_field):
    """The documents of one shard, in order."""
    return iter_documents(spec["path"], spec["kind"], text_field, spec["span"])


def batches(docs, batch_bytes):
    batch, size = [], 0
    for d in docs:
        batch.append(d)
        size += len(d)
        if size >= batch_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def encode_shard(tokenizer, spec, opts):
    """``(ids, offsets, n_bytes)`` for one shard: one ``encode_batch_ragged`` call per batch,
    BOS/EOS added per document."""
    bos, eos = opts["bos"], opts["eos"]
    extra = (bos is not None) + (eos is not None)
    parts, lens, n_bytes = [], [], 0
    for batch in batches(shard_documents(spec, opts["text_field"]), opts["batch_bytes"]):
        n_bytes += sum(len(t.encode("utf-8", "surrogatepass")) for t in batch)
        ids, off = tokenizer.encode_batch_ragged(batch)
        n = len(batch)
        if extra:
            out = np.empty(ids.shape[0] + extra * n, np.int64)
            new_off = off + extra * np.arange(n + 1)
            body = np.ones(out.shape[0], np.bool_)
            if bos is not None:
                out[new_off[:-1]] = bos
                body[new_off[:-1]] = False
            if eos is not None:
                out[new_off[1:] - 1] = eos
                body[new_off[1:] - 1] = False
            out[body] = ids
            ids, off = out, new_off
        parts.append(np.asarray(ids, np.int64))
        lens.append(np.diff(off))
    ids = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    lengths = np.concatenate(lens) if lens else np.zeros(0, np.int64)
    offsets = np.zeros(lengths.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return ids, offsets, n_bytes


def shard_prefix(output, index):
    return str(Path(output) / f"shard_{index:05d}")


def run_shard(tokenizer, spec, opts):
    """Tokenize and write one shard unless it is finished; returns its record."""
    prefix = shard_prefix(opts["output"], spec["index"])
    done = prefix + ".done.json"
    if os.path.exists(done) and all(os.path.exists(f) for f in shard_files(opts["format"], prefix)):
        with open(done) as f:
            rec = json.load(f)
        rec["skipped"] = True
        return rec
    ids, offsets, n_bytes = encode_shard(tokenizer, spec, opts)
    files = write_shard(opts["format"], prefix, ids, offsets, opts["vocab_size"])
    rec = {"index": spec["index"], "documents": int(offsets.shape[0] - 1), "tokens": int(ids.shape[0]),
           "input_bytes": int(n_bytes), "files": {os.path.basename(f): os.path.getsize(f) for f in files}}
    write_atomic(done, json.dumps(rec))
    rec["skipped"] = False
    return rec


def tokenizer_hash(blob):
    return hashlib.sha256(blob).hexdigest()


def prepare_manifest(output, sources, opts, tok_blob, hash_inputs=True):
    """The manifest head (inputs, tokenizer hash, options); an existing manifest for other
    inputs/options is an error, one for the same run means resume."""
    head = {"inputs": [{"path": p, "kind": k, "bytes": os.path.getsize(p),
                        "sha256": file_sha256(p) if hash_inputs else None} for p, k in sources],
            "tokenizer_sha256": tokenizer_hash(tok_blob),
            "options": {k: opts[k] for k in ("format", "bos", "eos", "shard_size", "text_field", "vocab_size")}}
    path = Path(output) / MANIFEST
    if path.exists():
        with open(path) as f:
            old = json.load(f)
        if {k: old.get(k) for k in head} != head:
            raise ValueError(f"{output} holds the output of another run (inputs, tokenizer or options "
                             "differ); choose a new output folder or delete it")
    return head


def write_manifest(output, head, records):
    man = dict(head)
    man["shards"] = [{k: r[k] for k in ("index", "documents", "tokens", "input_bytes", "files")}
                     for r in sorted(records, key=lambda r: r["index"])]
    man["totals"] = {k: sum(r[k] for r in records) for k in ("documents", "tokens", "input_bytes")}
    path = Path(output) / MANIFEST
    write_atomic(path, json.dumps(man, indent=1))
    return man


# what formats._atomic leaves of a shard or manifest write when its process is killed
_STALE = re.compile(r"^\.(shard_\d{5}\..+|manifest\.json)\.[0-9a-f]{8}\.tmp$")


def remove_stale_temporaries(output):
    """Remove the temporaries that writers killed mid-write (a lost Dask worker, a killed pool
    run) left in ``output``; called once every shard is done, when no writer of this run is left."""
    for name in os.listdir(output):
        if _STALE.match(name):
            try:
                os.unlink(os.path.join(output, name))
            except FileNotFoundError:
                pass


def dumps_tokenizer(tokenizer):
    try:
        return pickle.dumps(tokenizer, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        raise TypeError(f"the tokenizer must be picklable to reach the workers: {e}") from None
