"""sentencepiece's BPE trainer (bpe_model_trainer.cc of sentencepiece 0.2.3): character-level
start, an exact count per pair in one priority queue, ties broken by shorter piece then smaller
string, pieces scored ``-index``."""
import itertools
import re
import time
from collections import Counter, defaultdict

import numpy as np

from .bpe_loop import DIGIT, FORBIDDEN, INHERITED, WS as WS_CLASS, train_pieces
from .bpe_scripts import scripts_of
from .options import progress_log
from .validity import is_decimal_digit
from .whitespace import split_into_words, ws_flags

UNK_CHAR = "\u2585"
WS = "\u2581"


# SplitIntoWords' default over sentences joined by "\0": a word starts at a sentence start or a ▁
_WORDS = re.compile("\u2581[^\u2581\0]*|[^\u2581\0]+")


def word_counts(counts, required, spec):
    """The words BPE merges over, counted: each sentence split by ``SplitIntoWords`` (or whole,
    without ``split_by_whitespace``), characters outside ``required`` as ``▅``. Sentences that
    occur equally often are joined and split in one call."""
    suffix = bool(spec["treat_whitespace_as_suffix"])
    allow = bool(spec["allow_whitespace_only_pieces"])
    split = bool(spec["split_by_whitespace"])
    groups = defaultdict(list)
    for sentence, c in counts.items():
        groups[c].append(sentence)
    rare = [c for c in set("".join(counts)) if c not in required]
    rare = re.compile("[" + "".join(re.escape(c) for c in sorted(rare)) + "]") if rare else None
    words = Counter()
    for c, group in groups.items():
        text = "\0".join(group)
        if rare is not None:
            text = rare.sub(UNK_CHAR, text)
        if not split:
            found = Counter(text.split("\0"))
        elif suffix or allow:
            found = Counter(w for sentence in text.split("\0") for w in split_into_words(sentence, suffix, allow))
        else:
            found = Counter(_WORDS.findall(text))
        if c == 1:
            words.update(found)
        else:
            for w, k in found.items():
                words[w] += k * c
    return words


def counted_words(lines, chunk=4096):
    """``(words, characters)``, both counted, of normalized sentences under sentencepiece's
    default whitespace handling (a word starts at a sentence start or a ▁), a chunk of
    sentences at a time, so that the sentences are never held. Words partition their sentence,
    so the characters are the sentences' (``sentences.required_chars``)."""
    words, hist = Counter(), np.zeros(0x110000, np.int64)
    lines = iter(lines)
    while True:
        part = list(itertools.islice(lines, chunk))
        if not part:
            break
        text = "\0".join(part)
        hist += np.bincount(code_points(text), minlength=0x110000)
        words.update(_WORDS.findall(text))
    hist[0] = 0
    if not words:
        raise ValueError("train_sentencepiece: the input has no non-empty sentence")
    present = np.flatnonzero(hist)
    return words, dict(zip(map(chr, present.tolist()), hist[present].tolist()))


def code_points(text):
    """``uint32[len(text)]``: the code points of ``text`` (lone surrogates included)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)


def without_rare(words, required, chars):
    """``words`` with the characters ``character_coverage`` drops (``chars``, the characters of
    the words, that are not in ``required``) as ``▅``, counted again (as sentencepiece replaces
    them in its sentences before splitting). Only the words holding one are rewritten: they
    are found over the words' code points at once, not word by word."""
    rare = [c for c in chars if c not in required]
    if not rare:
        return words
    keys = list(words)
    cps = code_points("".join(keys))
    is_rare = np.zeros(0x110000, np.int8)
    is_rare[[ord(c) for c in rare]] = 1
    lens = np.fromiter(map(len, keys), np.int64, len(keys))
    starts = np.zeros(len(keys), np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    hit = np.add.reduceat(is_rare[cps], starts) if len(keys) else np.zeros(0, np.int64)
    found = re.compile("[" + "".join(re.escape(c) for c in sorted(rare)) + "]")
    out = Counter(words)
    for i in np.flatnonzero(hit).tolist():
        w = keys[i]
        c = out.pop(w)
        out[found.sub(UNK_CHAR, w)] += c
    return out


def sorted_words(words):
    """``words.items()`` in sentencepiece's ``Sorted`` order (count descending, then the word):
    the words sorted once as strings, then a stable sort by count over an array."""
    keys = sorted(words)
    counts = np.fromiter((words[w] for w in keys), np.int64, len(keys))
    order = np.argsort(-counts, kind="stable")
    return [keys[i] for i in order.tolist()], counts[order]


def train_bpe_pieces(words, n_pieces, spec):
    """The merged pieces (list of str) in order, at most ``n_pieces``.

    sentencepiece 0.2.3's loop (``bpe_loop.train_pieces`` runs it): every pair of adjacent
    symbols that makes a valid piece is a candidate with its exact weighted count (kept up to
    date as merges create and destroy pairs), in one priority queue ordered by count, then
    fewer characters, then the smaller piece; stale entries are skipped when they come up. A
    candidate whose count fell to 0 stays one (sentencepiece merges such pieces once nothing
    occurs any more). A piece already merged from another pair is dropped, not merged again.
    Occurrences are merged in the order they were found (left to right, then as merges made
    them)."""
    keys, wfreq = sorted_words(words)  # (sentencepiece's Sorted order)
    lens = np.fromiter(map(len, keys), np.int64, len(keys))
    woff = np.zeros(len(keys) + 1, np.int64)
    np.cumsum(lens, out=woff[1:])
    if 3 * woff[-1] >= 2 ** 31:
        raise ValueError(f"train_sentencepiece: the distinct words hold {int(woff[-1]):,} characters; BPE training "
                         "takes at most 700 million (sample the input with input_sentence_size)")
    cps = code_points("".join(keys))
    del keys
    present = np.unique(cps)
    chars = [chr(c) for c in present.tolist()]
    char_id = np.zeros(0x110000, np.int32)
    char_id[present] = np.arange(present.size, dtype=np.int32)
    syms = char_id[cps]
    encoded = [c.encode("utf-8", "surrogatepass") for c in chars]
    tok_off = np.zeros(len(chars) + 1, np.int64)
    np.cumsum([len(e) for e in encoded], out=tok_off[1:])
    T = (np.frombuffer(b"".join(encoded), np.uint8).copy(), tok_off, np.ones(len(chars), np.int64),
         np.int64(len(chars)))
    log = progress_log(spec)
    log(f"bpe: {len(wfreq):,} distinct words, {int(woff[-1]):,} characters in them; merging up to {n_pieces:,}")
    t0 = time.perf_counter()
    T, merged = train_pieces(syms, woff, wfreq, T, char_classes(chars), options_array(spec), np.int64(n_pieces))
    log(f"bpe: {merged.size:,} pieces in {time.perf_counter() - t0:.1f} s")
    tok_bytes, tok_off = T[0], T[1]
    return [bytes(tok_bytes[tok_off[t]:tok_off[t + 1]]).decode("utf-8", "surrogatepass") for t in merged.tolist()]


def char_classes(chars):
    """``int16[0x110000]``: each character's class for ``bpe_loop.valid_pair`` (its script as a
    small id, or WS / FORBIDDEN / INHERITED; DIGIT set for a decimal digit)."""
    cls = np.zeros(0x110000, np.int16)
    scripts = {}
    for c, s in zip(chars, scripts_of(chars)):
        if c in (UNK_CHAR, "\0", " ", "\x1f"):
            k = FORBIDDEN
        elif c == WS:
            k = WS_CLASS
        else:
            k = INHERITED if s == "Inherited" else scripts.setdefault(s, len(scripts))
        cls[ord(c)] = k | (DIGIT if is_decimal_digit(c) else 0)
    return cls


def options_array(spec):
    return np.array([int(spec["max_sentencepiece_length"]), bool(spec["split_by_unicode_script"]),
                     bool(spec["split_by_number"]), bool(spec["split_digits"]), ws_flags(spec)], np.int64)
