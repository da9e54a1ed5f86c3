"""sentencepiece's Unigram trainer (``unigram_model_trainer.cc`` of sentencepiece 0.2.3), step by
step:

1. Seeds (``seeds.py``): every character, then the branching substrings by frequency x length,
   scored ``log(score / sum)``.
2. EM over the words (sentences split at ``▁``, counted): ``num_sub_iterations`` times an E step
   (expected counts by forward-backward, ``lattice.expected_counts``) and an M step that drops
   pieces expected less than 0.5 times and scores the others ``digamma(count) - digamma(total)``
   (the Bayesian / DP variant of EM sentencepiece uses as a sparse prior).
3. After each EM round, pruning: a piece the best segmentation of its own string splits goes;
   the others are ranked by how much the corpus likelihood falls if their Viterbi occurrences
   are re-segmented into their second-best segmentation, and the top
   ``max(1.1 x vocab_size, shrinking_factor x size)`` stay. Rounds stop at 1.1 x ``vocab_size``
   pieces; then every piece its own string's best segmentation without it beats is dropped.
4. Final pieces: the required characters (kept or added below the lowest score), then the best
   scored pieces up to ``vocab_size`` minus the meta pieces, ordered by score.

With whitespace options other than sentencepiece's default (``whitespace.py``) the seeds come
from the whole sentences and EM runs over ``SplitIntoWords``' words, or over the sentences
without ``split_by_whitespace`` (``train_unigram_sentences``).

sentencepiece keeps its counts and scores in float32; nbtok in float64, so pieces whose losses
or scores tie to float32 precision may be ordered differently.
"""
from collections import Counter

import numpy as np

from . import lattice as L
from . import seeds as S
from .bpe_scripts import scripts_of
from .options import progress_log
from .sentences import covering_chars, sentence_chunks
from .validity import UNK_CHAR, WS, Validity, is_decimal_digit
from .whitespace import split_into_words, ws_flags

UNK_PENALTY = 10.0            # an unknown character scores the lowest piece's score minus this
EXPECTED_THRESHOLD = 0.5      # M step: a piece expected fewer times is dropped
DESIRED_FACTOR = 1.1          # EM stops at this many times vocab_size pieces
REQUIRED_PENALTY_DELTA = 1e-4  # added required characters: each a little below the previous
N_CHUNKS = 8                  # parallel work units of each pass (fixed: results do not depend on threads)


def digamma(x):
    """sentencepiece's digamma: recurrence up to 7, then the asymptotic series."""
    x = np.array(x, np.float64, ndmin=1)
    result = np.zeros_like(x)
    while True:
        small = x < 7
        if not small.any():
            break
        result[small] -= 1.0 / x[small]
        x = np.where(small, x + 1, x)
    x = x - 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + np.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4


def ragged(strings):
    """``(code points int32, offsets int64)`` of a list of str."""
    cps = np.frombuffer("".join(strings).encode("utf-32-le"), np.uint32).astype(np.int32)
    offsets = np.zeros(len(strings) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, strings), np.int64, len(strings)), out=offsets[1:])
    return cps, offsets


class Words:
    """The words EM runs over: ragged code points, frequencies, the longest word's length."""

    def __init__(self, counts):
        items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        self.cps, self.offsets = ragged([w for w, _ in items])
        self.freqs = np.array([c for _, c in items], np.int64)
        self.longest = int(np.diff(self.offsets).max())
        self.total = int(self.freqs.sum())


class Pieces:
    """The current pieces and scores, with their trie (rebuilt whenever the set changes)."""

    def __init__(self, pieces, scores, max_len):
        self.pieces = list(pieces)
        self.scores = np.asarray(scores, np.float64)
        self.max_len = max_len
        self.cps, self.offsets = ragged(self.pieces)
        table, node_piece = L.piece_trie(self.cps, self.offsets)
        self.lattice = (table[:, 0], table[:, 1], node_piece, self.scores,
                        float(self.scores.min()) - UNK_PENALTY, max_len)

    def subset(self, index, scores):
        return Pieces([self.pieces[i] for i in index], scores, self.max_len)

    def expected(self, words):
        return L.expected_counts(words.cps, words.offsets, words.freqs, self.lattice, words.longest, N_CHUNKS)

    def viterbi(self, words):
        return L.viterbi_counts(words.cps, words.offsets, words.freqs, self.lattice, words.longest, N_CHUNKS)

    def alternatives(self):
        return L.alternatives(self.cps, self.offsets, self.lattice, N_CHUNKS)


def split_sentences(counts):
    """``(words, units)`` of a Counter of sentences (``count_units``)."""
    _, units = count_units(sentence_chunks(counts))
    return words_of(units), units


def count_units(chunks):
    """``(chars, units)`` of chunks of ``"\0"``-ended sentences: the characters, and the seed
    units (each word, split before each ``▁``, followed by ``▁`` when another word follows it
    in its sentence), counted.

    Each chunk is split at ``▁`` and counted by ``Counter`` (in C). A part is the rest of a
    word after its ``▁``; one holding ``"\0"`` ends a sentence, and what follows its ``"\0"``
    begins the next sentences (words without ``▁``)."""
    chars, parts, units = Counter(), Counter(), Counter()
    for chunk in chunks:
        chars.update(chunk)
        head, *rest = chunk.split(WS)
        parts.update(rest)
        _add_starts(("\0" + head).split("\0")[1:], 1, units)
    while parts:  # (popped, so that the parts' strings are freed as the units are made)
        part, c = parts.popitem()
        if "\0" not in part:
            units[WS + part + WS] += c  # a word another word follows
            continue
        pieces = part.split("\0")
        units[WS + pieces[0]] += c  # the last word of a sentence
        _add_starts(pieces[1:], c, units)
    chars.pop("\0", None)
    return chars, units


def words_of(units):
    """The words of the seed units (a unit less the ``▁`` after it), counted."""
    words = Counter()
    for u, c in units.items():
        words[u[:-1] if len(u) > 1 and u[-1] == WS else u] += c
    return words


def _add_starts(pieces, c, units):
    """Count the text after a sentence's end: whole sentences without ``▁`` (all but the last
    piece), and the first word of one that goes on (the last piece, unless empty)."""
    for whole in pieces[:-1]:
        units[whole] += c
    if pieces and pieces[-1]:
        units[pieces[-1] + WS] += c


def script_table(cps, spec):
    """``script[code point]`` for ``seeds.valid_pieces``: a small int per Unicode script as
    sentencepiece groups them, -1 for a character that joins any script, -2 for a digit that
    must stand alone, -3 for a combining mark (the script of the character before it)."""
    table = np.full(max(int(cps.max()) + 1, 0x2586), -1, np.int32)
    names = {}
    present = np.unique(cps).tolist()
    for c, script in zip(present, scripts_of([chr(c) for c in present])):
        ch = chr(c)
        digit = is_decimal_digit(ch)
        if script == "Inherited":
            table[c] = -3
        elif digit and spec["split_digits"]:
            table[c] = -2
        elif digit and not spec["split_by_number"]:
            table[c] = -1
        elif c not in (0, 0x20, 0x2581, 0x2585):
            table[c] = names.setdefault(script, len(names))
    return table


def seed_pieces(chars, units, spec, extra=None):
    """Every character of ``chars`` (by frequency), then the best ``seed_sentencepiece_size``
    branching substrings of the ``units`` (by frequency x length), with sentencepiece's initial
    scores ``log(score / sum)``. ``extra`` (``{piece: count}``, ``sentence_end_counts``) adds
    counts to the substrings, or new ones."""
    max_len = int(spec["max_sentencepiece_length"])
    cps = np.frombuffer(("\0".join(units) + "\0").encode("utf-32-le"), np.uint32).view(np.int32)
    weights = np.repeat(np.fromiter(units.values(), np.int32, len(units)),
                        np.fromiter(map(len, units), np.int64, len(units)) + 1)
    order = S.sort_suffixes(cps, max_len + 1)
    lcp = S.common_prefixes(cps, order, max_len + 1)
    left, off, length, freq = S.branching_substrings(cps, order, lcp, weights, max_len)
    flags = ws_flags(spec) | (S.BY_SCRIPT if spec["split_by_unicode_script"] else 0)
    ok = S.valid_pieces(cps, off, length, script_table(cps, spec), ord(UNK_CHAR), ord(WS), flags)
    left, off, length, freq = left[ok], off[ok], length[ok], freq[ok]
    score = freq.astype(np.float32) * length.astype(np.float32)  # (float32, as sentencepiece)
    nbytes = S.utf8_lengths(cps, off, length)
    # best score first, then the longer in bytes, then the smaller string: (first suffix, length)
    # is the order of the strings, a shorter one being a prefix of a longer one at the same suffix
    best = np.lexsort((length, left, -nbytes, -score))[:int(spec["seed_sentencepiece_size"])]
    char_seeds = sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))
    if extra:
        substrings, seed_scores = _with_extra(cps, off, length, freq, extra, int(spec["seed_sentencepiece_size"]))
    else:
        substrings = [cps[o:o + n].tobytes().decode("utf-32-le") for o, n in zip(off[best].tolist(), length[best].tolist())]
        seed_scores = score[best]
    values = np.concatenate((np.array([f for _, f in char_seeds], np.float64), seed_scores.astype(np.float64)))
    return [c for c, _ in char_seeds] + substrings, (np.log(values) - np.log(values.sum())).astype(np.float32)


def _with_extra(cps, off, length, freq, extra, size):
    """The best ``size`` substrings and their scores after adding ``extra``'s counts, in
    sentencepiece's order: score, then bytes (longer first), then the string."""
    counts = {cps[o:o + n].tobytes().decode("utf-32-le"): f
              for o, n, f in zip(off.tolist(), length.tolist(), freq.tolist())}
    for piece, c in extra.items():
        counts[piece] = counts.get(piece, 0) + c
    scored = [(np.float32(np.float32(f) * np.float32(len(p))), len(p.encode("utf-8")), p) for p, f in counts.items()]
    scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
    scored = scored[:size]
    return [p for _, _, p in scored], np.array([s for s, _, _ in scored], np.float32)


def sentence_end_counts(sentences, spec):
    """The counts sentencepiece adds to the seeds that end sentences. Its suffix array runs over
    the sentences in their order, each ended by ``"\0"``: where the sentences that end in the
    same ``t`` are followed by different first bytes (or one is the last sentence), ``t\0`` is a
    branching node too, and its count goes to ``t`` again (``t`` with the ``"\0"`` trimmed).
    ``{t: count}`` of those ``t`` of 2 to ``max_sentencepiece_length`` characters that are
    valid pieces; ``sentences`` in sentencepiece's order (``sentences.sentencepiece_order``)."""
    max_len = int(spec["max_sentencepiece_length"])
    ends, followers = Counter(), {}
    for i, s in enumerate(sentences):
        nxt = sentences[i + 1][0].encode("utf-8")[0] if i + 1 < len(sentences) else -1
        for k in range(2, min(len(s), max_len) + 1):
            t = s[-k:]
            ends[t] += 1
            followers.setdefault(t, set()).add(nxt)
    valid = Validity(spec)
    return {t: c for t, c in ends.items() if len(followers[t]) > 1 and valid(t)}


def em_step(model, words):
    """One E step and M step: the surviving pieces with their new scores, and the objective."""
    expected, logz = model.expected(words)
    keep = np.flatnonzero(expected >= EXPECTED_THRESHOLD)
    freq = expected[keep]
    return model.subset(keep, digamma(freq) - digamma(freq.sum())[0]), -logz / words.total


def prune(model, words, desired, shrinking_factor):
    """The pieces kept by sentencepiece's ``PruneSentencePieces``: the found pieces without an
    alternative segmentation, then the found pieces their own best segmentation keeps whole,
    by the likelihood lost without them."""
    n_alt, alt, split = model.alternatives()
    freq, _ = model.viterbi(words)
    total = freq.sum()
    found = freq > 0
    keep = np.flatnonzero(found & (n_alt == 0))
    cand = np.flatnonzero(found & (n_alt > 0) & ~split)
    f = freq[cand]
    k = n_alt[cand]
    a = alt[cand]
    used = (np.arange(a.shape[1])[None, :] < k[:, None])
    alt_freq = freq[np.maximum(a, 0)]
    logsum_alt = np.log(total + f * (k - 1))
    logprob_alt = np.where(used, np.log(alt_freq + f[:, None]) - logsum_alt[:, None], 0.0).sum(axis=1)
    loss = f / total * (np.log(f) - np.log(total) - logprob_alt)
    ranked = cand[np.lexsort((cand, -loss))]
    size = max(desired, int(shrinking_factor * len(model.pieces)))
    if keep.size <= size:  # (sentencepiece fills up to the size; past it, it keeps every candidate)
        ranked = ranked[:size - keep.size]
    index = np.concatenate((keep, ranked))
    return model.subset(index, model.scores[index])


def final_pieces(model, required, n_pieces, hard_limit):
    """Required characters first (their score, or just below the lowest), then the best scored
    pieces, ``n_pieces`` in all, ordered by score (then piece)."""
    # float32, as sentencepiece keeps them: pieces whose scores round alike are ordered by piece
    scores = dict(zip(model.pieces, model.scores.astype(np.float32).tolist()))
    low = np.float32(model.scores.min())
    final = {}
    for ch, _ in sorted(required.items(), key=lambda kv: (-kv[1], kv[0])):
        final[ch] = scores.get(ch, None)
    penalty = np.float32(0.0)
    for ch in final:
        if final[ch] is None:
            final[ch] = float(low + penalty)
            penalty += np.float32(REQUIRED_PENALTY_DELTA)
    for p, s in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(final) >= n_pieces:
            break
        final.setdefault(p, s)
    if len(final) < n_pieces and hard_limit:
        raise ValueError(f"vocab_size is too high for this input: it gives {len(final)} pieces "
                         f"besides the meta pieces, not {n_pieces}; lower vocab_size or pass hard_vocab_limit=False")
    return sorted(final.items(), key=lambda kv: (-kv[1], kv[0]))


def train_unigram(chunks, vocab_size, n_meta, spec):
    """``[(piece, score), ...]``: the trained pieces, ``vocab_size - n_meta`` of them, from chunks
    of ``"\0"``-ended normalized sentences (``sentences.line_chunks``). sentencepiece's default
    whitespace handling (``whitespace.default_whitespace``): the seeds come from the units of
    ``count_units``, EM runs over their words."""
    chars, units = count_units(chunks)
    if not units:
        raise ValueError("train_sentencepiece: the input has no non-empty sentence")
    required, rare = _required(chars, vocab_size, n_meta, spec)
    units = _replace(units, rare)
    return _train(chars, rare, units, words_of(units), required, vocab_size, n_meta, spec)


def train_unigram_sentences(sentences, vocab_size, n_meta, spec):
    """``train_unigram`` for any whitespace options, from the normalized sentences (a list):
    the seeds come from the whole sentences, as sentencepiece extracts them, and EM runs over
    their words (``whitespace.split_into_words``) or, without ``split_by_whitespace``, over the
    sentences themselves (as sentencepiece's does)."""
    counts = Counter(sentences)
    if not counts:
        raise ValueError("train_sentencepiece: the input has no non-empty sentence")
    chars = Counter()
    for chunk in sentence_chunks(counts):
        chars.update(chunk)
    chars.pop("\0", None)
    required, rare = _required(chars, vocab_size, n_meta, spec)
    counts = _replace(counts, rare)
    if rare:
        table = {ord(c): UNK_CHAR for c in rare}
        sentences = [s.translate(table) for s in sentences]
    extra = sentence_end_counts(sentences, spec)
    del sentences
    if spec["split_by_whitespace"]:
        suffix, allow = bool(spec["treat_whitespace_as_suffix"]), bool(spec["allow_whitespace_only_pieces"])
        words = Counter()
        for s, c in counts.items():
            for w in split_into_words(s, suffix, allow):
                words[w] += c
    else:
        words = counts
    return _train(chars, rare, counts, words, required, vocab_size, n_meta, spec, extra)


def _required(chars, vocab_size, n_meta, spec):
    """The required characters (``covering_chars``) and the rare ones the others become ``▅``."""
    required = covering_chars(chars, float(spec["character_coverage"]), spec["required_chars"])
    if len(required) + n_meta > vocab_size:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {len(required) + n_meta} required "
                         "characters and meta pieces; increase vocab_size or lower character_coverage")
    return required, set(chars) - set(required) - {WS, UNK_CHAR}


def _replace(units, rare):
    """``units`` (a Counter of str) with the ``rare`` characters as ``▅`` (sentencepiece
    replaces the characters ``character_coverage`` leaves out); emptied as it goes."""
    if not rare:
        return units
    table = {ord(c): UNK_CHAR for c in rare}
    replaced = Counter()
    while units:
        u, c = units.popitem()
        replaced[u.translate(table)] += c
    return replaced


def _train(chars, rare, units, words, required, vocab_size, n_meta, spec, extra=None):
    """Seeds from ``units`` (and ``extra``, ``seed_pieces``), then EM and pruning over ``words``
    (Counters), then the final pieces."""
    all_chars = {ch: c for ch, c in chars.items() if ch not in rare and ch != UNK_CHAR}
    words = Words(words)
    seeds = seed_pieces(all_chars, units, spec, extra)
    del units
    max_len = int(spec["max_sentencepiece_length"])
    model = Pieces(*seeds, max_len)
    desired = int(vocab_size * DESIRED_FACTOR)
    log = progress_log(spec)
    log(f"unigram: {len(model.pieces)} seed pieces, {len(words.freqs)} distinct words")
    while True:
        for it in range(int(spec["num_sub_iterations"])):
            model, objective = em_step(model, words)
            log(f"unigram: EM sub-iteration {it}: {len(model.pieces)} pieces, objective {objective:.4f}")
        model = prune(model, words, desired, float(spec["shrinking_factor"]))
        if len(model.pieces) <= desired:
            break
    _, _, split = model.alternatives()
    model = model.subset(np.flatnonzero(~split), model.scores[~split])
    return final_pieces(model, required, vocab_size - n_meta, bool(spec["hard_vocab_limit"]))
