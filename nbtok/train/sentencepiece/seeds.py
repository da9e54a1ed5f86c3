"""Seed pieces of the Unigram trainer, as sentencepiece 0.2.3 extracts them: every substring
of 2 to ``max_sentencepiece_length`` characters that occurs at least twice and is a branching
node of the suffix tree of the corpus's UTF-8 bytes (its occurrences are followed by at least
two different bytes), scored by frequency times length in characters.

sentencepiece builds a byte suffix array of the whole corpus. nbtok builds a code-point suffix
array over the distinct *units* instead, each with its frequency as a weight: with
``split_by_whitespace`` (the default) no valid piece holds ``▁`` after its first character, so
every seed lies inside one word, and a unit is a word followed by what follows it in the
sentence (``▁``, for the next word, or the end). The same substrings occur with the same
weighted frequencies and the same following characters, in an array a fraction of the corpus's
size for space-separated text. A node of the code-point tree is a node of the byte tree when
the characters that follow it do not all begin with the same byte; the suffixes of an
interval are sorted by that character, so its first and last suffix tell.

Only the first ``max_len + 1`` characters of each suffix matter (a deeper node is too long to
be a piece), so the suffixes are sorted by prefix doubling until that many characters decide
the order, and adjacent suffixes' common prefixes are counted up to that length.

Other whitespace options (``whitespace.py``) let a piece hold ``▁`` elsewhere, so the units
are the whole distinct sentences (``unigram.train_unigram_sentences``).

One corner of sentencepiece's array: it runs over the sentences in their order, so a node
``t\0`` (``t`` ending sentences that different first bytes follow, or the last sentence) is
counted as ``t`` again. With the dummy ``▁`` as a prefix every sentence starts alike and only
the very last sentence does that; the default path leaves it out. With the dummy ``▁`` as a
suffix most sentence endings do, and the sentence path adds those counts
(``unigram.sentence_end_counts``).
"""
import numpy as np

from ..._jit import kernel

BOUNDARY = 0  # ends every unit; a substring holding it is no piece


def sort_suffixes(cps, depth):
    """Positions of ``cps`` (``int32[n]``) ordered by the first ``depth`` characters of their
    suffixes (``msd_sort`` over the characters' ranks: 8 bytes per position besides ``cps``)."""
    present = np.zeros(int(cps.max()) + 1, np.int32)
    present[cps] = 1
    ranks = np.cumsum(present, dtype=np.int32)
    return msd_sort(ranks[cps], int(ranks[-1]), depth, int(ranks[BOUNDARY]))


@kernel
def msd_sort(sym, n_sym, depth, stop):
    """Most-significant-symbol-first radix sort of the suffixes of ``sym`` (symbols 1..n_sym, 0
    past the end) by their first ``depth`` symbols. A range of suffixes sharing their first d
    symbols is split by symbol d: by counting when it is much larger than the alphabet, else by
    sorting its keys; ranges of at most 16 suffixes by insertion. A range whose shared prefix
    ends in ``stop`` (the unit boundary) or past the end is not split further: no piece holds it."""
    n = sym.shape[0]
    order = np.arange(n).astype(np.int32)
    tmp = np.empty(n, np.int32)
    counts = np.zeros(n_sym + 2, np.int64)
    st_lo = np.empty(1024, np.int64)
    st_hi = np.empty(1024, np.int64)
    st_d = np.empty(1024, np.int64)
    st_lo[0], st_hi[0], st_d[0] = 0, n, 0
    top = 1
    while top > 0:
        top -= 1
        lo, hi, d = st_lo[top], st_hi[top], st_d[top]
        m = hi - lo
        if m <= 16:
            _insertion_sort(sym, order, lo, hi, d, depth)
            continue
        keys = np.empty(m, np.int32)
        for i in range(m):
            p = order[lo + i] + d
            keys[i] = sym[p] if p < n else 0
        if m > 4 * n_sym:
            for i in range(m):
                counts[keys[i] + 1] += 1
            for c in range(1, n_sym + 2):
                counts[c] += counts[c - 1]
            for i in range(m):
                k = keys[i]
                tmp[lo + counts[k]] = order[lo + i]
                counts[k] += 1
            counts[:] = 0
            keys.sort()
        else:
            idx = np.argsort(keys)
            for i in range(m):
                tmp[lo + i] = order[lo + idx[i]]
            keys = keys[idx]
        order[lo:hi] = tmp[lo:hi]
        if d + 1 >= depth:
            continue
        a = 0
        while a < m:  # each run of one symbol is a range sharing d + 1 symbols
            b = a + 1
            while b < m and keys[b] == keys[a]:
                b += 1
            if b - a > 1 and keys[a] != 0 and keys[a] != stop:
                if top == st_lo.shape[0]:
                    st_lo = np.concatenate((st_lo, np.empty(top, np.int64)))
                    st_hi = np.concatenate((st_hi, np.empty(top, np.int64)))
                    st_d = np.concatenate((st_d, np.empty(top, np.int64)))
                st_lo[top], st_hi[top], st_d[top] = lo + a, lo + b, d + 1
                top += 1
            a = b
    return order


@kernel
def _insertion_sort(sym, order, lo, hi, d, depth):
    """Sort ``order[lo:hi]`` (suffixes sharing d symbols) by symbols d..depth-1."""
    n = sym.shape[0]
    for i in range(lo + 1, hi):
        x = order[i]
        j = i - 1
        while j >= lo and _suffix_less(sym, x, order[j], d, depth, n):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x


@kernel
def _suffix_less(sym, a, b, d, depth, n):
    for k in range(d, depth):
        ca = sym[a + k] if a + k < n else 0
        cb = sym[b + k] if b + k < n else 0
        if ca != cb:
            return ca < cb
    return False


@kernel
def common_prefixes(cps, order, cap):
    """``lcp[i]``: characters the suffixes at ``order[i - 1]`` and ``order[i]`` share, at most
    ``cap`` (``lcp[0] = 0``)."""
    n = order.shape[0]
    lcp = np.zeros(n + 1, np.int32)
    for i in range(1, n):
        a = order[i - 1]
        b = order[i]
        k = 0
        while k < cap and a + k < n and b + k < n and cps[a + k] == cps[b + k]:
            k += 1
        lcp[i] = k
    return lcp


@kernel
def lead_byte(cps, p):
    """The first UTF-8 byte of the character at ``p`` (-1 past the end)."""
    if p >= cps.shape[0]:
        return -1
    c = cps[p]
    if c < 0x80:
        return c
    if c < 0x800:
        return 0xC0 | (c >> 6)
    if c < 0x10000:
        return 0xE0 | (c >> 12)
    return 0xF0 | (c >> 18)


@kernel
def branching_substrings(cps, order, lcp, weights, max_len):
    """The byte suffix tree's branching nodes of 2..max_len characters, by a bottom-up walk of
    the lcp intervals: ``(first, offset, length, weighted frequency)`` of each, where ``first`` is
    the interval's first suffix in ``order`` and ``offset = order[first]`` one occurrence. Two
    walks: the first counts the nodes, the second fills arrays of that size."""
    found = _walk_intervals(cps, order, lcp, weights, max_len, np.zeros((0, 4), np.int64))
    out = np.empty((found, 4), np.int64)
    _walk_intervals(cps, order, lcp, weights, max_len, out)
    return out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy(), out[:, 3].copy()


@kernel
def _walk_intervals(cps, order, lcp, weights, max_len, out):
    """The nodes ``branching_substrings`` reports, into ``out`` (unless it has no rows);
    returns their number. The stack holds (depth, first suffix) of the open intervals, at
    most one per depth."""
    n = order.shape[0]
    stack_depth = np.zeros(max_len + 3, np.int64)
    stack_lb = np.zeros(max_len + 3, np.int64)
    stack_w = np.zeros(max_len + 3, np.int64)  # weights of the interval's suffixes before i
    top = 0
    cum = np.int64(0)
    found = 0
    fill = out.shape[0] > 0
    for i in range(1, n + 1):
        cum += weights[order[i - 1]]
        cur = lcp[i] if i < n else 0
        lb = i - 1
        lb_w = cum - weights[order[i - 1]]
        while cur < stack_depth[top]:
            d = stack_depth[top]
            left = stack_lb[top]
            left_w = stack_w[top]
            top -= 1
            if 2 <= d <= max_len and lead_byte(cps, order[left] + d) != lead_byte(cps, order[i - 1] + d):
                if fill:
                    out[found, 0] = left
                    out[found, 1] = order[left]
                    out[found, 2] = d
                    out[found, 3] = cum - left_w
                found += 1
            lb = left
            lb_w = left_w
        if cur > stack_depth[top]:
            top += 1
            stack_depth[top] = cur
            stack_lb[top] = lb
            stack_w[top] = lb_w
    return found


@kernel
def utf8_lengths(cps, off, length):
    """UTF-8 bytes of each candidate ``cps[off:off + length]``."""
    out = np.zeros(off.shape[0], np.int64)
    for j in range(off.shape[0]):
        for p in range(off[j], off[j] + length[j]):
            c = cps[p]
            out[j] += 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
    return out


BY_SCRIPT = 8  # valid_pieces' flag beside whitespace.ws_flags: split_by_unicode_script


@kernel
def valid_pieces(cps, off, length, script, unk, ws, flags):
    """sentencepiece's ``IsValidSentencePiece`` for each candidate: no boundary, unknown
    character or space; ``ws`` (``▁``) where ``flags`` (``whitespace.ws_flags``) allow it
    (``whitespace.ws_allowed``); one script (``script[c]``, -1 for a character that joins any,
    as digits do without ``split_by_number``) when ``flags & BY_SCRIPT``; a character of
    script -2 (a digit with ``split_digits``) only alone; one of script -3 (a combining mark)
    has the script of the character before it."""
    by_script = (flags & BY_SCRIPT) != 0
    suffix = (flags & 1) != 0
    split = (flags & 2) != 0
    allow_only = (flags & 4) != 0
    ok = np.zeros(off.shape[0], np.bool_)
    for j in range(off.shape[0]):
        n = length[j]
        all_ws = True
        for p in range(n):
            if cps[off[j] + p] != ws:
                all_ws = False
                break
        good = True
        prev = -1
        for p in range(n):
            c = cps[off[j] + p]
            if c == BOUNDARY or c == unk or c == 0x20 or c == 0x1F:
                good = False
                break
            if c == ws:
                if not (allow_only and all_ws):
                    if suffix:
                        bad = p != n - 1 if split else (p == 0 and n > 1)
                    else:
                        bad = p != 0 if split else (p == n - 1 and n > 1)
                    if bad:
                        good = False
                        break
                continue
            s = script[c]
            if s == -3:
                s = prev
            if s == -2 and n > 1:
                good = False
                break
            if by_script and s >= 0 and prev >= 0 and s != prev:
                good = False
                break
            prev = s
        ok[j] = good
    return ok
