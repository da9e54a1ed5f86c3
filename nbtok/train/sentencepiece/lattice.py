"""Kernels of the Unigram trainer: the lattice of a word over the current pieces, and the three
passes over all words that the EM loop makes (sentencepiece's ``unigram_model_trainer.cc``).

Words and pieces are code points (``int32``), ragged: ``cps[offsets[k]:offsets[k + 1]]``. The
current model travels as ``L = (keys, values, node_piece, scores, unk_score, max_len)`` (its
trie, ``piece_trie``, and scores), a word's edges as ``E = (start, length, piece, score)``.

* ``piece_trie`` builds an exact trie of the pieces: an ``IntMap`` (kernels/hashmap.py) from
  ``parent node << 21 | code point`` to the child node, and ``node_piece[node]``, the piece
  ending at that node or -1. A walk from position i of a word probes one slot per character
  and stops at the first character no piece continues with.
* ``word_edges`` lists a word's lattice: every piece that starts at each position, in order
  of position, plus an unknown edge (score ``unk_score``) for a position no one-character
  piece covers, as sentencepiece's ``PopulateNodes`` does. sentencepiece's trainer model
  gives the unknown edge id 0 (its unknown id is never set), so the unknown edge counts as
  piece 0 everywhere: in the expected counts, the Viterbi counts and the alternatives.
* ``expected_counts`` is the E step: forward-backward over each word's edges in log space,
  each piece's expected count weighted by the word's frequency, and the log-likelihood.
* ``viterbi_counts`` counts the pieces of each word's best segmentation (pruning's frequencies).
* ``alternatives`` segments each piece's own string without the piece itself: how its
  occurrences would be segmented if it were removed (pruning's second-best segmentation).

The three passes run over chunks of words in parallel (``prange``), each chunk with its own
scratch and its own count vector, summed at the end.
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, kernel, leaf_kernel
from ...kernels.hashmap import EMPTY, intmap_get, intmap_insert
from ...kernels.ragged import chunk_bounds

CP_BITS = 21
NEG_INF = -np.inf
MAX_ALT = 16  # alternatives of a piece: at most one per character (max_sentencepiece_length <= 16)


@kernel
def piece_trie(cps, offsets):
    """The trie of the pieces: ``(table int64[cap, 2], node_piece int32[nodes])``."""
    total = offsets[-1]
    cap = 16
    while 4 * cap < 5 * (total + 1):  # fewer nodes than characters: load factor < 0.8
        cap *= 2
    table = np.full((cap, 2), EMPTY, np.int64)
    keys = table[:, 0]
    values = table[:, 1]
    node_piece = np.full(total + 1, -1, np.int32)
    nodes = 1
    for k in range(offsets.shape[0] - 1):
        node = 0
        for j in range(offsets[k], offsets[k + 1]):
            key = (np.int64(node) << CP_BITS) | np.int64(cps[j])
            child = intmap_get(keys, values, key, np.int64(-1))
            if child < 0:
                child = nodes
                nodes += 1
                intmap_insert(keys, values, key, np.int64(child))
            node = child
        node_piece[node] = k
    return table, node_piece[:nodes]


@leaf_kernel
def word_edges(cps, a, b, L, E):
    """The lattice of ``cps[a:b]`` into the edge arrays ``E`` (at least ``(b - a) * (max_len + 1)``
    long), ordered by start position; returns the number of edges."""
    keys, values, node_piece, scores, unk_score, max_len = L
    e_start, e_len, e_piece, e_score = E
    n = b - a
    m = 0
    for i in range(n):
        node = np.int64(0)
        single = False
        for length in range(1, min(max_len, n - i) + 1):
            node = intmap_get(keys, values, (node << CP_BITS) | np.int64(cps[a + i + length - 1]), np.int64(-1))
            if node < 0:
                break
            k = node_piece[node]
            if k >= 0:
                e_start[m] = i
                e_len[m] = length
                e_piece[m] = k
                e_score[m] = scores[k]
                m += 1
                single = single or length == 1
        if not single:
            e_start[m] = i
            e_len[m] = 1
            e_piece[m] = 0  # (sentencepiece's trainer: the unknown id is 0)
            e_score[m] = unk_score
            m += 1
    return m


@leaf_kernel
def log_add(a, b):
    """log(exp(a) + exp(b)) without overflow; -inf is log 0."""
    if a < b:
        a, b = b, a
    if b == NEG_INF:
        return a
    return a + np.log1p(np.exp(b - a))


@leaf_kernel
def word_marginals(n, m, E, alpha, beta, freq, expected):
    """Forward-backward over a word's ``m`` edges (n characters): adds ``freq`` times each
    piece's marginal probability to ``expected``; returns log Z."""
    e_start, e_len, e_piece, e_score = E
    for t in range(n + 1):
        alpha[t] = NEG_INF
        beta[t] = NEG_INF
    alpha[0] = 0.0
    beta[n] = 0.0
    for e in range(m):  # an edge starts where every edge into that position has been added
        s = e_start[e]
        alpha[s + e_len[e]] = log_add(alpha[s + e_len[e]], alpha[s] + e_score[e])
    for e in range(m - 1, -1, -1):
        s = e_start[e]
        beta[s] = log_add(beta[s], e_score[e] + beta[s + e_len[e]])
    z = alpha[n]
    for e in range(m):
        s = e_start[e]
        expected[e_piece[e]] += freq * np.exp(alpha[s] + e_score[e] + beta[s + e_len[e]] - z)
    return z


@leaf_kernel
def word_viterbi(n, m, E, best, back):
    """Best segmentation of a word's lattice: fills ``back[t]`` (the edge ending the best path to
    t) and returns the best score. Ties keep the earlier edge."""
    e_start, e_len, _, e_score = E
    for t in range(n + 1):
        best[t] = NEG_INF
        back[t] = -1
    best[0] = 0.0
    for e in range(m):
        s = e_start[e]
        t = s + e_len[e]
        v = best[s] + e_score[e]
        if v > best[t]:
            best[t] = v
            back[t] = e
    return best[n]


@kernel
def _edge_scratch(longest, max_len):
    """``(E, two float arrays, an int array)`` for words of up to ``longest`` characters."""
    cap = longest * (max_len + 1) + 1
    E = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.float64))
    return E, np.empty(longest + 1, np.float64), np.empty(longest + 1, np.float64), np.empty(longest + 1, np.int64)


@batch_kernel
def expected_counts(cps, offsets, freqs, L, longest, n_chunks):
    """The E step: ``(expected float64[n_pieces], sum of freq * log Z)`` over all words."""
    starts = chunk_bounds(offsets, n_chunks)
    acc = np.zeros((n_chunks, L[3].shape[0]), np.float64)
    logz = np.zeros(n_chunks, np.float64)
    for c in prange(n_chunks):
        E, alpha, beta, _ = _edge_scratch(longest, L[5])
        for w in range(starts[c], starts[c + 1]):
            a = offsets[w]
            b = offsets[w + 1]
            m = word_edges(cps, a, b, L, E)
            logz[c] += freqs[w] * word_marginals(b - a, m, E, alpha, beta, np.float64(freqs[w]), acc[c])
    return acc.sum(axis=0), logz.sum()


@batch_kernel
def viterbi_counts(cps, offsets, freqs, L, longest, n_chunks):
    """Frequency of each piece in the best segmentations of all words, weighted by the words'
    frequencies: ``(counts float64[n_pieces], number of tokens)``."""
    starts = chunk_bounds(offsets, n_chunks)
    acc = np.zeros((n_chunks, L[3].shape[0]), np.float64)
    tokens = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        E, best, _, back = _edge_scratch(longest, L[5])
        for w in range(starts[c], starts[c + 1]):
            a = offsets[w]
            b = offsets[w + 1]
            m = word_edges(cps, a, b, L, E)
            word_viterbi(b - a, m, E, best, back)
            t = b - a
            while t > 0:
                e = back[t]
                acc[c, E[2][e]] += freqs[w]
                tokens[c] += freqs[w]
                t = E[0][e]
    return acc.sum(axis=0), tokens.sum()


@batch_kernel
def alternatives(cps, offsets, L, n_chunks):
    """For each piece, its best segmentation without itself (sentencepiece's second-best of
    ``NBest(2)`` when the best is the piece alone): ``(n_alt int64[n], alt int32[n, MAX_ALT],
    split bool[n])``. ``n_alt`` is 0 for a one-character piece (no other segmentation);
    ``split`` is True when that segmentation scores higher than the piece (its Viterbi path is
    split, so it can be removed)."""
    n_pieces = offsets.shape[0] - 1
    n_alt = np.zeros(n_pieces, np.int64)
    alt = np.full((n_pieces, MAX_ALT), -1, np.int32)
    split = np.zeros(n_pieces, np.bool_)
    starts = chunk_bounds(offsets, n_chunks)
    for c in prange(n_chunks):
        E, best, _, back = _edge_scratch(MAX_ALT, L[5])
        es, el, ep, esc = E
        for k in range(starts[c], starts[c + 1]):
            a = offsets[k]
            n = offsets[k + 1] - a
            if n < 2:
                continue
            m = word_edges(cps, a, a + n, L, E)
            for e in range(m):  # the piece itself is the one edge spanning its whole string
                if es[e] == 0 and el[e] == n:
                    esc[e] = NEG_INF
            split[k] = word_viterbi(n, m, E, best, back) > L[3][k]
            t = n
            count = 0
            while t > 0:
                e = back[t]
                alt[k, count] = ep[e]
                count += 1
                t = es[e]
            alt[k, :count] = alt[k, :count][::-1].copy()
            n_alt[k] = count
    return n_alt, alt, split
