"""Reading the input (paths or an iterable of str) and normalizing each sentence as
sentencepiece's trainer does (charsmap of the chosen rule, whitespace rules, ``▁`` escaping)."""
import os
from collections import Counter
from pathlib import Path

import numpy as np

from ...kernels import normalize as knorm

_CHARSMAPS = Path(__file__).resolve().parents[2] / "data" / "spm_charsmaps.npz"


def charsmap(rule):
    """The precompiled charsmap bytes of a built-in rule (``nmt_nfkc``, ``identity``, ...)."""
    with np.load(_CHARSMAPS) as z:
        return z[rule].tobytes()


def iter_lines(input):
    """Lines of ``input``: a path, a list/tuple of paths, or an iterable of str."""
    if isinstance(input, (str, os.PathLike)):
        input = [input]
        files = True
    elif isinstance(input, (list, tuple)):
        files = True
        for p in input:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError("a list/tuple input holds file paths; pass other iterables of str")
    else:
        files = False
    if files:
        for p in input:
            if not Path(p).is_file():
                raise FileNotFoundError(f"{p}: no such file")
        for p in input:
            with open(p, encoding="utf-8", errors="replace") as f:
                for line in f:
                    yield line.rstrip("\r\n")
    else:
        for s in input:
            if not isinstance(s, str):
                raise TypeError(f"input iterable yields {type(s).__name__}, expected str")
            for line in s.split("\n"):
                yield line.rstrip("\r")


def normalized_sentences(input, spec):
    """Counter of normalized sentences (str with ``▁``), as sentencepiece's trainer loads them."""
    units, pool = knorm.decode_charsmap(charsmap(spec["normalization_rule_name"]))
    root_ok = knorm.root_filter(units)
    z = np.zeros(0, np.int32)
    flags = np.array([spec["add_dummy_prefix"], spec["remove_extra_whitespaces"], True, False], np.int64)
    norm = (units, pool, root_ok, z, z, flags, knorm.byte_classes(units, pool, root_ok, z, z))
    limit = int(spec["max_sentence_length"])
    counts = Counter()
    for line in iter_lines(input):
        raw = line.encode("utf-8")
        if not raw or len(raw) > limit:
            continue
        buf = np.frombuffer(raw, np.uint8)
        out, n = knorm.normalize(buf, 0, buf.size, *norm, np.empty(buf.size * 18 + 8, np.uint8))
        s = out[:n].tobytes().decode("utf-8", "replace")
        if s:
            counts[s] += 1
    if not counts:
        raise ValueError("train_sentencepiece: the input has no non-empty sentence")
    return counts


def required_chars(counts, coverage):
    """Characters kept by ``character_coverage`` (by frequency, ties by code point): dict char->freq."""
    freq = Counter()
    for s, c in counts.items():
        for ch in s:
            freq[ch] += c
    freq.pop(" ", None)
    freq.pop("\0", None)
    total = sum(freq.values())
    kept, acc = {}, 0
    for ch, c in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0])):
        if float(np.float32(acc / total)) >= coverage:
            break
        acc += c
        kept[ch] = c
    return kept
