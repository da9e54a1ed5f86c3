"""SentencePiece BPE specifics: the merge table built from the vocabulary and the initial split.

The merge loop itself is ``kernels.bpe.bpe_merge`` (array heap + linked list). SentencePiece
BPE has no merges list: two adjacent symbols merge if their concatenation is a piece, with
priority = that piece's score (higher first, ties to the smaller left index). So the merge
table holds, for every NORMAL / UNUSED piece and every split of it into two strings that can
be symbols, ``left << 32 | right -> rank << 32 | piece`` with rank = dense rank of the score
(highest score = rank 0). A symbol is either a piece of ``pieces_`` (its id) or one character
outside the vocabulary (``V + code point``, see ``kernels.unigram``); USER_DEFINED pieces are
frozen, so they never appear as a half.

Initial symbols: at each position the longest user-defined symbol (frozen), else one UTF-8
character (``OneCharLen``, clipped). UNUSED pieces can be merged into and are re-split at
output through ``split_left`` / ``split_right`` (one recorded split per unused piece).
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, kernel
from .bpe import bpe_merge, new_scratch as bpe_new_scratch
from .normalize import normalize, one_char_len, utf8_char_len
from .trie import exact_match, longest_prefix
from .unigram import char_symbol, place_ids

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@kernel
def _half_symbol(bc, value, kinds, piece_bytes, s, e, V):
    """Symbol id of the string piece_bytes[s:e] if it can be a BPE symbol, else -1."""
    v = exact_match(bc, value, piece_bytes, s, e)
    if v >= 0:
        if kinds[v] == USER_DEFINED:
            return -1
        return v
    ln = utf8_char_len(piece_bytes, s, e)
    if ln == e - s and ln > 0:
        return char_symbol(piece_bytes, s, ln, V)
    return -1


@kernel
def build_merge_entries(piece_bytes, piece_offsets, kinds, ranks, bc, value):
    """(keys, values, split_left, split_right) of the SentencePiece BPE merge table."""
    V = piece_offsets.shape[0] - 1
    total = piece_offsets[V]
    keys = np.empty(total, np.int64)
    vals = np.empty(total, np.int64)
    split_left = np.full(V, -1, np.int64)
    split_right = np.full(V, -1, np.int64)
    n = 0
    for p in range(V):
        k = kinds[p]
        if k != NORMAL and k != UNUSED:
            continue
        s = piece_offsets[p]
        e = piece_offsets[p + 1]
        # every split at a character boundary
        cut = s + one_char_len(piece_bytes[s], e - s)
        while cut < e:
            left = _half_symbol(bc, value, kinds, piece_bytes, s, cut, V)
            if left >= 0:
                right = _half_symbol(bc, value, kinds, piece_bytes, cut, e, V)
                if right >= 0:
                    keys[n] = (left << 32) | right
                    vals[n] = (np.int64(ranks[p]) << 32) | p
                    n += 1
                    if k == UNUSED and split_left[p] < 0:
                        split_left[p] = left
                        split_right[p] = right
            cut += one_char_len(piece_bytes[cut], e - cut)
    return keys[:n].copy(), vals[:n].copy(), split_left, split_right


@kernel
def initial_symbols(norm, n, bc, value, ud_bc, ud_value, V, syms):
    """Split ``norm[:n]`` into initial symbols; returns their count."""
    m = 0
    p = 0
    has_ud = ud_bc.shape[0] > 0
    while p < n:
        if has_ud:
            uid, ln = longest_prefix(ud_bc, ud_value, norm, p, n)
            if ln > 0:
                syms[m] = uid
                m += 1
                p += ln
                continue
        mblen = one_char_len(norm[p], n - p)
        v = exact_match(bc, value, norm, p, p + mblen)
        if v < 0:
            v = char_symbol(norm, p, mblen, V)
        syms[m] = v
        m += 1
        p += mblen
    return m


@kernel
def resplit_unused(syms, m, kinds, split_left, split_right, V, stack):
    """Replace merged UNUSED pieces by their recorded halves (recursively), in place order.

    Returns (symbols, count); a new array only if some unused piece occurred.
    """
    found = False
    for t in range(m):
        if syms[t] < V and kinds[syms[t]] == UNUSED and split_left[syms[t]] >= 0:
            found = True
            break
    if not found:
        return syms, m
    out = np.empty(2 * m + 16, np.int64)
    o = 0
    for t in range(m):
        sp = 0
        stack[sp] = syms[t]
        sp += 1
        while sp > 0:
            sp -= 1
            x = stack[sp]
            if x < V and kinds[x] == UNUSED and split_left[x] >= 0:
                stack[sp] = split_right[x]
                stack[sp + 1] = split_left[x]
                sp += 2
            else:
                if o >= out.shape[0]:
                    bigger = np.empty(2 * out.shape[0], np.int64)
                    bigger[:o] = out[:o]
                    out = bigger
                out[o] = x
                o += 1
    return out, o


@kernel
def new_scratch(n):
    """(normbuf, syms int64, merge ids int32, heap, prev, next, pair_at, stack) for n bytes."""
    heap, prev, nxt, pair_at = bpe_new_scratch(n + 16)
    return (np.empty(n + 16, np.uint8), np.empty(n + 16, np.int64), np.empty(n + 16, np.int32),
            heap, prev, nxt, pair_at, np.empty(256, np.int64))


@kernel
def _fit(scratch, n):
    if scratch[1].shape[0] >= n:
        return scratch
    cap = max(n, 2 * scratch[1].shape[0])
    heap, prev, nxt, pair_at = bpe_new_scratch(cap)
    return (scratch[0], np.empty(cap, np.int64), np.empty(cap, np.int32), heap, prev, nxt,
            pair_at, scratch[7])


@kernel
def merge_symbols(syms, m, M, scratch, dropout):
    """Run the BPE merge loop over ``syms[:m]``; returns (symbols, count)."""
    bc, value, map_keys, map_values, kinds, split_left, split_right, V = M
    ids = scratch[2]
    for t in range(m):
        ids[t] = syms[t]
    k = bpe_merge(ids, m, map_keys, map_values, scratch[3], scratch[4], scratch[5], scratch[6], dropout)
    for t in range(k):
        syms[t] = ids[t]
    return resplit_unused(syms, k, kinds, split_left, split_right, V, scratch[7])


@kernel
def encode_symbols(text, start, end, N, M, scratch, dropout):
    """Normalize + initial split + merges for ``text[start:end]``: (scratch, symbols, count)."""
    units, pool, root_ok, ud_bc, ud_value, flags = N
    bc, value, map_keys, map_values, kinds, split_left, split_right, V = M
    normbuf, n = normalize(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, scratch[0])
    scratch = (normbuf,) + scratch[1:]
    scratch = _fit(scratch, n)
    m = initial_symbols(normbuf, n, bc, value, ud_bc, ud_value, V, scratch[1])
    syms, k = merge_symbols(scratch[1], m, M, scratch, dropout)
    return scratch, syms, k


@kernel
def encode_one(text, N, M, F, dropout):
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    scratch = new_scratch(3 * text.shape[0] + 8)
    scratch, syms, m = encode_symbols(text, 0, text.shape[0], N, M, scratch, dropout)
    out = np.empty(4 * m + 2, np.int32)
    o = place_ids(syms, m, F, out, 0, out.shape[0], out)
    return out[:o].copy()


@kernel
def symbols_one(text, N, M, dropout):
    scratch = new_scratch(3 * text.shape[0] + 8)
    scratch, syms, m = encode_symbols(text, 0, text.shape[0], N, M, scratch, dropout)
    normbuf, n = normalize(text, 0, text.shape[0], N[0], N[1], N[2], N[3], N[4], N[5], scratch[0])
    return syms[:m].copy(), normbuf[:n].copy()


@batch_kernel
def encode_batch(buf, offsets, out_offsets, N, M, F, n_chunks, out, counts):
    """Parallel batch encode; same contract as ``kernels.unigram.encode_batch``."""
    n_docs = offsets.shape[0] - 1
    for c in prange(n_chunks):
        d0 = n_docs * c // n_chunks
        d1 = n_docs * (c + 1) // n_chunks
        scratch = new_scratch(1024)
        tmp = np.empty(64, np.int32)
        for d in range(d0, d1):
            scratch, syms, m = encode_symbols(buf, offsets[d], offsets[d + 1], N, M, scratch, 0.0)
            counts[d] = place_ids(syms, m, F, out, out_offsets[d], out_offsets[d + 1], tmp)


@kernel
def seed_rng(seed):
    np.random.seed(seed)
