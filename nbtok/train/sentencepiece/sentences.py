"""Reading the input (paths or an iterable of str) and normalizing each sentence as
sentencepiece's trainer does (charsmap of the chosen rule, whitespace rules, ``▁`` escaping)."""
from collections import Counter
from pathlib import Path

import numpy as np

from ...kernels import normalize as knorm
from ..counting import resolve_input

_CHARSMAPS = Path(__file__).resolve().parents[2] / "data" / "spm_charsmaps.npz"


def charsmap(rule):
    """The precompiled charsmap bytes of a built-in rule (``nmt_nfkc``, ``identity``, ...)."""
    with np.load(_CHARSMAPS) as z:
        return z[rule].tobytes()


def iter_lines(input):
    """Lines of ``input`` (``train.counting.resolve_input``: a path, a list or tuple of paths, or
    any other iterable of str). Files must be UTF-8: anything else is a ``ValueError``."""
    kind, src = resolve_input(input)
    if kind == "texts":
        for s in src:
            if not isinstance(s, str):
                raise TypeError(f"input iterable yields {type(s).__name__}, expected str")
            for line in s.split("\n"):
                yield line.rstrip("\r")
        return
    for p in src:
        with open(p, "rb") as f:
            for number, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"{p}:{number} is not UTF-8 ({e.reason} at byte {e.start} of the line)") from None
                yield line.rstrip("\r\n")


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
