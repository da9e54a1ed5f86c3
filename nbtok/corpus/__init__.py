"""Corpus scale: tokenize corpora into training formats, and count pre-tokens for BPE training,
on a process pool or a Dask cluster.

    nbtok.corpus.tokenize(inputs, tokenizer, output, format="megatron", num_workers=2)
    nbtok.corpus.tokenize(..., client=dask_client_or_address)
    counts = nbtok.corpus.count(inputs, client=...); nbtok.train_bpe_from_counts(counts, 32000)
"""
import os
from pathlib import Path

from .counts import PretokenCounts, count, _check_shard_size
from .inputs import expand_inputs
from .progress import Progress
from .runners import run
from .shards import dumps_tokenizer, plan_shards, prepare_manifest, remove_stale_temporaries, run_shard, write_manifest
from .writers import FORMATS

__all__ = ["tokenize", "count", "PretokenCounts", "FORMATS"]


def _special_id(tokenizer, value, name):
    if value is None:
        return None
    if isinstance(value, str):
        specials = tokenizer.special_tokens
        if value not in specials:
            raise ValueError(f"{name} {value!r} is not a special token of this tokenizer")
        return int(specials[value])
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < tokenizer.vocab_size:
        raise ValueError(f"{name} must be a token id in [0, {tokenizer.vocab_size}) or a special token, not {value!r}")
    return int(value)


def tokenize(inputs, tokenizer, output, format="megatron", num_workers=1, client=None, bos=None, eos=None,
             shard_size=10000, kind=None, text_field="text", batch_bytes=1 << 20, progress=False,
             hash_inputs=True):
    """Tokenize a corpus into shards of ``shard_size`` documents under the folder ``output``.

    inputs: paths, folders or globs; ``kind`` "lines" (one document per line, the default for
        text), "file" (one per file), "jsonl" (``text_field`` of each line) or "parquet"
        (``text_field`` column), guessed from the name; ``.gz`` / ``.zst`` are decompressed.
    format: "megatron" (``shard_NNNNN.bin`` + ``.idx``), "numpy" (``.ids.npy`` + ``.offsets.npy``)
        or "datatrove" (``.ds`` + ``.ds.index``).
    bos / eos: a token id or special-token string added to every document.
    num_workers: processes on this machine; client: a ``dask.distributed.Client`` or a
        scheduler address (then ``num_workers`` is ignored).
    Returns the manifest (dict), also written to ``output/manifest.json``. A rerun with the
    same arguments skips finished shards.

    Examples:
        >>> man = nbtok.corpus.tokenize("data/*.txt", nbtok.get_encoding(), "out",
        ...                             eos="<|endoftext|>", num_workers=2)   # doctest: +SKIP
    """
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {format!r}")
    if isinstance(batch_bytes, bool) or not isinstance(batch_bytes, int) or batch_bytes < 1:
        raise ValueError(f"batch_bytes must be a positive int, not {batch_bytes!r}")
    opts = {"format": format, "bos": _special_id(tokenizer, bos, "bos"), "eos": _special_id(tokenizer, eos, "eos"),
            "shard_size": _check_shard_size(shard_size), "text_field": text_field, "batch_bytes": batch_bytes,
            "vocab_size": int(tokenizer.vocab_size), "output": os.path.abspath(output)}
    sources = expand_inputs(inputs, kind)
    blob = dumps_tokenizer(tokenizer)
    Path(output).mkdir(parents=True, exist_ok=True)
    head = prepare_manifest(output, sources, opts, blob, hash_inputs)
    write_manifest(output, head, [])
    specs = plan_shards(sources, opts["shard_size"], text_field)
    bar = Progress(progress, len(specs))
    records = []
    for rec in run(run_shard, blob, specs, opts, num_workers, client):
        records.append(rec)
        bar.update(rec)
    man = write_manifest(output, head, records)
    remove_stale_temporaries(output)
    return man
