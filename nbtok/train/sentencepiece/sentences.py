"""Reading the input (paths or an iterable of str) and normalizing each sentence as
sentencepiece's trainer does (charsmap of the chosen rule, whitespace rules, ``▁`` escaping)."""
import re
from collections import Counter
from pathlib import Path

import numpy as np

from ...kernels import normalize as knorm
from ...kernels.charsmap import byte_classes
from ..counting import resolve_input

_CHARSMAPS = Path(__file__).resolve().parents[2] / "data" / "spm_charsmaps.npz"
UNK_STR = "\u2585".encode("utf-8")  # sentencepiece's reserved unknown character
BOUNDARY = "\x1f"  # sentencepiece's pretokenization boundary: where a meta piece was in the text


def charsmap(rule):
    """The precompiled charsmap bytes of a built-in rule (``nmt_nfkc``, ``identity``, ...)."""
    with np.load(_CHARSMAPS) as z:
        return z[rule].tobytes()


def iter_lines(input):
    """Lines of ``input`` (``train.counting.resolve_input``: a path, a list or tuple of paths, or
    any other iterable of str or UTF-8 bytes). Files must be UTF-8: anything else is a
    ``ValueError``."""
    kind, src = resolve_input(input)
    if kind == "texts":
        for s in src:
            if isinstance(s, (bytes, bytearray)):  # (sentencepiece's sentence_iterator takes UTF-8 bytes too)
                try:
                    s = bytes(s).decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ValueError(f"input iterable yields bytes that are not UTF-8 ({e.reason} at byte {e.start})") from None
            if not isinstance(s, str):
                raise TypeError(f"input iterable yields {type(s).__name__}, expected str or UTF-8 bytes")
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


def normalized_lines(input, spec, meta=()):
    """Each line of ``input`` normalized as sentencepiece's trainer loads it (str with ``▁``);
    lines that are empty, longer than ``max_sentence_length`` bytes or hold sentencepiece's
    reserved unknown character are skipped, as sentencepiece skips them. Every occurrence of a
    meta piece (the strings ``meta``, longest first, left to right) becomes ``BOUNDARY``: no
    trained piece holds or crosses it."""
    found = re.compile("|".join(re.escape(m) for m in sorted(meta, key=len, reverse=True))) if meta else None
    units, pool = knorm.decode_charsmap(charsmap(spec["normalization_rule_name"]))
    root_ok = knorm.root_filter(units)
    z = np.zeros(0, np.int32)
    flags = np.array([spec["add_dummy_prefix"], spec["remove_extra_whitespaces"], True, False], np.int64)
    norm = (units, pool, root_ok, z, z, flags, byte_classes(units, pool, root_ok, z, z))
    limit = int(spec["max_sentence_length"])
    for line in iter_lines(input):
        raw = line.encode("utf-8")
        if not raw or len(raw) > limit or UNK_STR in raw:
            continue
        buf = np.frombuffer(raw, np.uint8)
        out, n = knorm.normalize(buf, 0, buf.size, *norm, np.empty(buf.size * 18 + 8, np.uint8))
        s = out[:n].tobytes().decode("utf-8", "replace")
        if found is not None:
            s = found.sub(BOUNDARY, s)
        if s:
            yield s


def normalized_sentences(input, spec, meta=()):
    """Counter of normalized sentences (``normalized_lines``)."""
    counts = Counter(normalized_lines(input, spec, meta))
    if not counts:
        raise ValueError("train_sentencepiece: the input has no non-empty sentence")
    return counts


def line_chunks(lines, size=1 << 22):
    """``lines``, each ended by ``"\0"``, joined into strings of about ``size`` characters."""
    chunk, n = [], 0
    for s in lines:
        chunk.append(s)
        n += len(s) + 1
        if n >= size:
            yield "\0".join(chunk) + "\0"
            chunk, n = [], 0
    if chunk:
        yield "\0".join(chunk) + "\0"


def sentence_chunks(counts, size=1 << 22):
    """The sentences of ``counts``, each as often as counted and ended by ``"\0"``, joined into
    strings of about ``size`` characters (so str methods count and split them in C)."""
    chunk, n = [], 0
    for s, c in counts.items():
        piece = (s + "\0") * c
        chunk.append(piece)
        n += len(piece)
        if n >= size:
            yield "".join(chunk)
            chunk, n = [], 0
    if chunk:
        yield "".join(chunk)


def required_chars(counts, coverage):
    """Characters kept by ``character_coverage`` (``covering_chars`` of the sentences' characters)."""
    freq = Counter()
    for chunk in sentence_chunks(counts):
        freq.update(chunk)
    return covering_chars(freq, coverage)


def covering_chars(freq, coverage):
    """The most frequent characters of ``freq`` (ties by code point) until they cover
    ``coverage`` of all characters, as sentencepiece's ``character_coverage``: dict char->freq.
    ``BOUNDARY`` counts towards the coverage but is never kept (as in sentencepiece)."""
    freq = {ch: c for ch, c in freq.items() if ch not in (" ", "\0")}
    total = sum(freq.values())
    kept, acc = {}, 0
    for ch, c in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0])):
        if float(np.float32(acc / total)) >= coverage:
            break
        acc += c
        if ch != BOUNDARY:
            kept[ch] = c
    return kept
