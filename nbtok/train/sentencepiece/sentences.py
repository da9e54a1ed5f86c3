"""Reading the input (paths or an iterable of str) and normalizing each sentence as
sentencepiece's trainer does (charsmap of the chosen rule, whitespace rules, ``▁`` escaping)."""
import itertools
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np

from ...normalizers import sentencepiece as knorm
from ...normalizers.charsmap import byte_classes
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


def selected_lines(input, spec):
    """The lines of ``input`` sentencepiece's ``LoadSentences`` keeps, before normalization:
    not empty, at most ``max_sentence_length`` bytes, without its reserved unknown character;
    with ``input_sentence_size`` only that many of them (``sample_lines``)."""
    limit = int(spec["max_sentence_length"])
    unk = UNK_STR.decode("utf-8")
    lines = (line for line in iter_lines(input)
             if line and unk not in line and (len(line) * 4 <= limit or len(line.encode("utf-8")) <= limit))
    size = int(spec["input_sentence_size"])
    if size == 0:
        return lines
    if not spec["shuffle_input_sentence"]:  # (sentencepiece stops reading there)
        return itertools.islice(lines, size)
    return iter(sample_lines(lines, size, int(spec["seed"])))


def sample_lines(lines, size, seed):
    """sentencepiece's ``ReservoirSampler`` over ``lines``: the first ``size`` lines, then the
    t-th line replaces slot ``n`` when ``n``, drawn uniformly from ``[0, t - 1)`` (absl's
    ``Uniform(gen, 0, total - 1)`` is closed-open), is below ``size``. So a line among the first
    ``size`` of T is kept with probability ``(size - 1) / (T - 1)`` and a later one with
    ``size / (T - 1)``. sentencepiece draws from absl's BitGen, seeded with a constant but
    salted per process (its samples differ from run to run); nbtok draws from Python's
    ``random.Random(seed)``, so a seed always gives the same sample."""
    rng = random.Random(seed)
    sample = []
    total = 0
    for line in lines:
        total += 1
        if len(sample) < size:
            sample.append(line)
            continue
        n = rng.randrange(total - 1)
        if n < size:
            sample[n] = line
    return sample


def trainer_normalizer(spec):
    """The normalize kernel's arrays for the options' charsmap and whitespace rules."""
    units, pool = knorm.decode_charsmap(spec_charsmap(spec)[1])
    root_ok = knorm.root_filter(units)
    z = np.zeros(0, np.int32)
    flags = np.array([spec["add_dummy_prefix"], spec["remove_extra_whitespaces"], True,
                      spec["treat_whitespace_as_suffix"]], np.int64)
    return (units, pool, root_ok, z, z, flags, byte_classes(units, pool, root_ok, z, z))


def spec_charsmap(spec):
    """``(name, precompiled charsmap)`` of the options' normalizer: the rules of
    ``normalization_rule_tsv`` compiled (sentencepiece names them ``user_defined``) or the
    built-in ``normalization_rule_name``. Compiled once per spec."""
    cached = spec.get("_charsmap")
    if cached is None:
        if spec["normalization_rule_tsv"]:
            from .rules import compile_rule_tsv
            cached = ("user_defined", compile_rule_tsv(spec["normalization_rule_tsv"]))
        else:
            cached = (spec["normalization_rule_name"], charsmap(spec["normalization_rule_name"]))
        spec["_charsmap"] = cached
    return cached


def normalized_lines(input, spec, meta=(), keep_empty=False):
    """Each line of ``selected_lines`` normalized as sentencepiece's trainer loads it (str with
    ``▁``); lines that normalize to nothing are skipped (unless ``keep_empty``), as
    sentencepiece drops them. Every
    occurrence of a meta piece (the strings ``meta``, longest first, left to right) becomes
    ``BOUNDARY``: no trained piece holds or crosses it."""
    found = re.compile("|".join(re.escape(m) for m in sorted(meta, key=len, reverse=True))) if meta else None
    norm = trainer_normalizer(spec)
    lines = selected_lines(input, spec)
    while True:
        chunk = list(itertools.islice(lines, 4096))   # (one kernel call and one decode per chunk)
        if not chunk:
            return
        raw = [line.encode("utf-8") for line in chunk]
        offsets = np.zeros(len(raw) + 1, np.int64)
        np.cumsum([len(r) for r in raw], out=offsets[1:])
        out, byte_ends, ends = knorm.normalize_many(np.frombuffer(b"".join(raw), np.uint8), offsets, norm)
        text = out.tobytes().decode("utf-8", "replace")
        if len(text) != (ends[-1] if len(ends) else 0):   # (not valid UTF-8: one line at a time)
            text, ends = _decode_each(out, byte_ends)
        start = 0
        for end in ends.tolist():
            s = text[start:end]
            start = end
            if found is not None:
                s = found.sub(BOUNDARY, s)
            if s or keep_empty:
                yield s


def _decode_each(out, byte_ends):
    """``(text, char ends)`` of normalized lines decoded one by one, each with U+FFFD for what is
    not valid UTF-8 (so that a bad byte never takes the next line's characters)."""
    parts, start = [], 0
    for end in byte_ends.tolist():
        parts.append(out[start:end].tobytes().decode("utf-8", "replace"))
        start = end
    ends = np.cumsum([len(p) for p in parts]).astype(np.int64)
    return "".join(parts), ends


def sentencepiece_order(sentences):
    """The normalized sentences (a list, empty ones included) in the order sentencepiece's
    ``LoadSentences`` leaves them: each empty one is swapped with the last and dropped."""
    i = 0
    while i < len(sentences):
        if sentences[i]:
            i += 1
        else:
            sentences[i] = sentences[-1]
            sentences.pop()
    return sentences


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


def required_chars(counts, coverage, required=""):
    """Characters kept by ``character_coverage`` (``covering_chars`` of the sentences' characters)."""
    freq = Counter()
    for chunk in sentence_chunks(counts):
        freq.update(chunk)
    return covering_chars(freq, coverage, required)


def covering_chars(freq, coverage, required=""):
    """The characters sentencepiece keeps: those of ``required`` (the ``required_chars``
    option) first, then the most frequent of ``freq``, each group by frequency then code point,
    until they cover ``coverage`` of all characters (``character_coverage``): dict char->freq.
    A required character the text lacks is kept with frequency 0 (if the coverage is not
    reached first). ``BOUNDARY`` counts towards the coverage but is never kept (as in
    sentencepiece)."""
    freq = {ch: c for ch, c in freq.items() if ch not in (" ", "\0")}
    total = sum(freq.values())
    if total == 0:
        raise ValueError("train_sentencepiece: the input has no character to train on")
    need = set(required)
    order = sorted(set(freq) | need, key=lambda ch: (ch not in need, -freq.get(ch, 0), ch))
    kept, acc = {}, 0
    limit = np.float32(coverage)  # (both float32, as sentencepiece compares them)
    for ch in order:
        if np.float32(acc / total) >= limit:
            break
        acc += freq.get(ch, 0)
        if ch != BOUNDARY:
            kept[ch] = freq.get(ch, 0)
    return kept
