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

(One corner sentencepiece has and nbtok does not: a node ``s\0`` at the very end of its array
is counted as ``s`` again, which adds the last sentence's final occurrences to a few seeds.)
"""
import numpy as np

from ..._jit import kernel

BOUNDARY = 0  # ends every unit; a substring holding it is no piece


def sort_suffixes(cps, depth):
    """Positions of ``cps`` ordered by the first ``depth`` characters of their suffixes."""
    n = cps.shape[0]
    rank = cps.astype(np.int64) + 1  # 0 = past the end
    h = 1
    order = np.argsort(rank, kind="stable")
    while h < depth:
        top = int(rank.max()) + 1
        nxt = np.zeros(n, np.int64)
        nxt[:n - h] = rank[h:]
        key = rank * top + nxt
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        new = np.empty(n, np.int64)
        new[order] = np.concatenate(([1], 1 + np.cumsum(sorted_key[1:] != sorted_key[:-1])))
        rank = new
        if int(rank.max()) == n:  # every suffix is already told apart
            break
        h *= 2
    return order


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
    the lcp intervals: ``(offset, length, weighted frequency)`` of each, where ``offset`` is the
    start of one occurrence."""
    n = order.shape[0]
    cum = np.zeros(n + 1, np.int64)
    for i in range(n):
        cum[i + 1] = cum[i] + weights[order[i]]
    stack_depth = np.zeros(max_len + 3, np.int64)
    stack_lb = np.zeros(max_len + 3, np.int64)
    top = 0  # stack_depth[0] = 0 is the root interval
    cap = n
    out_off = np.empty(cap, np.int64)
    out_len = np.empty(cap, np.int64)
    out_freq = np.empty(cap, np.int64)
    found = 0
    for i in range(1, n + 1):
        cur = lcp[i] if i < n else 0
        lb = i - 1
        while cur < stack_depth[top]:
            d = stack_depth[top]
            left = stack_lb[top]
            top -= 1
            if 2 <= d <= max_len and lead_byte(cps, order[left] + d) != lead_byte(cps, order[i - 1] + d):
                out_off[found] = order[left]
                out_len[found] = d
                out_freq[found] = cum[i] - cum[left]
                found += 1
            lb = left
        if cur > stack_depth[top]:
            top += 1
            stack_depth[top] = cur
            stack_lb[top] = lb
    return out_off[:found], out_len[:found], out_freq[:found]


@kernel
def valid_pieces(cps, off, length, script, unk, ws, by_script):
    """sentencepiece's ``IsValidSentencePiece`` for each candidate: no boundary, unknown
    character or space; ``ws`` (``▁``) only first; one script (``script[c]``, -1 for a character
    that joins any, as digits do without ``split_by_number``) when ``by_script``; a character
    of script -2 (a digit with ``split_digits``) only alone; one of script -3 (a combining
    mark) has the script of the character before it."""
    ok = np.zeros(off.shape[0], np.bool_)
    for j in range(off.shape[0]):
        good = True
        prev = -1
        for p in range(length[j]):
            c = cps[off[j] + p]
            if c == BOUNDARY or c == unk or c == 0x20 or (c == ws and p > 0):
                good = False
                break
            if c == ws:
                continue
            s = script[c]
            if s == -3:
                s = prev
            if s == -2 and length[j] > 1:
                good = False
                break
            if by_script and s >= 0 and prev >= 0 and s != prev:
                good = False
                break
            prev = s
        ok[j] = good
    return ok
