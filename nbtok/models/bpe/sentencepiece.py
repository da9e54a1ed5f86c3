"""SentencePiece BPE specifics: the merge table built from the vocabulary and the initial split.

The merge loop itself is ``models.bpe.merge``'s (array heap + linked list), the same kernel as
byte-level BPE, over the same kind of merge table, on one of two paths: symbol by symbol
(``bpe_merge``, here: models with whitespace as suffix or pieces that cross a word start,
BPE-dropout, offsets) or the word loop with its word cache (``merge_piece``, in ``models.bpe.sentencepiece_words``:
every other model, when the hashed piece table can hold the vocabulary). SentencePiece
BPE has no merges list: two adjacent symbols merge if their concatenation is a piece, with
priority = that piece's score (higher first, ties to the smaller left index). So the merge
table holds, for every NORMAL / UNUSED piece and every split of it into two strings that can
be symbols, ``left << 32 | right -> rank << 32 | piece`` with rank = dense rank of the score
(highest score = rank 0). A symbol is either a piece of ``pieces_`` (its id) or one character
outside the vocabulary (``V + code point``, see ``models.symbols``); USER_DEFINED pieces are
frozen, so they never appear as a half.

Initial symbols: at each position the longest user-defined symbol (frozen), else one UTF-8
character (``OneCharLen``, clipped). UNUSED pieces can be merged into and are re-split at
output through ``split_left`` / ``split_right`` (one recorded split per unused piece).
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, kernel
from .merge import bpe_merge
from .merge import new_scratch as bpe_new_scratch
from ...kernels.hashmap import mix64
from ...normalizers.sentencepiece import normalize, one_char_len, utf8_char_len
from ...kernels.trie import exact_match, longest_prefix
from ..symbols import char_symbol, place_ids

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
    """(normbuf, word syms int64, merge ids int32, heap, prev, next, pair_at, stack,
    document syms int64, merged output int64) for n normalized bytes."""
    heap, prev, nxt, pair_at = bpe_new_scratch(n + 16)
    return (np.empty(n + 16, np.uint8), np.empty(n + 16, np.int64), np.empty(n + 16, np.int32),
            heap, prev, nxt, pair_at, np.empty(256, np.int64), np.empty(n + 16, np.int64),
            np.empty(2 * n + 32, np.int64))


@kernel
def _fit(scratch, n):
    if scratch[1].shape[0] >= n:
        return scratch
    cap = max(n, 2 * scratch[1].shape[0])
    heap, prev, nxt, pair_at = bpe_new_scratch(cap)
    return (scratch[0], np.empty(cap, np.int64), np.empty(cap, np.int32), heap, prev, nxt,
            pair_at, scratch[7], np.empty(cap, np.int64), np.empty(2 * cap + 32, np.int64))


# ------------------------------------------------------------------ per-word merging with a cache
@kernel
def word_split_ok(piece_bytes, piece_offsets, kinds, suffix):
    """True if no mergeable piece has U+2581 except as a leading run (trailing run if ``suffix``).

    Then no piece can span a position where U+2581 follows another character (precedes one,
    in suffix mode), so BPE can run word by word, and each word's result can be cached.
    """
    V = piece_offsets.shape[0] - 1
    for p in range(V):
        k = kinds[p]
        if k != NORMAL and k != UNUSED:
            continue
        s = piece_offsets[p]
        e = piece_offsets[p + 1]
        # positions of U+2581 must form a run touching the start (or the end)
        seen_other = False
        q = s
        if suffix:
            # scan backwards by characters is awkward in UTF-8; scan forward and require that
            # after the first U+2581 only U+2581 follow
            in_run = False
            while q < e:
                is_ws = q + 3 <= e and piece_bytes[q] == 0xE2 and piece_bytes[q + 1] == 0x96 and piece_bytes[q + 2] == 0x81
                if is_ws:
                    in_run = True
                    q += 3
                else:
                    if in_run:
                        return False
                    q += one_char_len(piece_bytes[q], e - q)
        else:
            while q < e:
                is_ws = q + 3 <= e and piece_bytes[q] == 0xE2 and piece_bytes[q + 1] == 0x96 and piece_bytes[q + 2] == 0x81
                if is_ws:
                    if seen_other:
                        return False
                    q += 3
                else:
                    seen_other = True
                    q += one_char_len(piece_bytes[q], e - q)
    return True


@kernel
def new_cache(slots, store):
    """Word cache: (slots int64[2 * slots], store int32[store], used int64[2]).

    A slot is (hash, store_offset << 16 | in_len << 8 | out_len) in one 16-byte record; the
    store holds a word's input symbols followed by its merged symbols, so a hit touches one
    slot and one stretch of the store. ``slots`` is a power of two; when the table is half full
    or the store is full, the cache is cleared.
    """
    table = np.empty(2 * slots, np.int64)
    for i in range(slots):
        table[2 * i] = -1
    return table, np.empty(store, np.int32), np.zeros(2, np.int64)


@kernel
def _hash_syms(syms, a, b):
    h = np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(b - a)
    for t in range(a, b):
        h = (h ^ np.uint64(syms[t])) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return mix64(np.int64(h >> np.uint64(1)))


@kernel
def _cache_find(table, store, syms, a, b, h):
    """Slot index holding the word ``syms[a:b]``, or -(insert position + 1)."""
    mask = (table.shape[0] >> 1) - 1
    i = h & mask
    n = b - a
    while True:
        k = table[2 * i]
        if k == -1:
            return -(i + 1)
        if k == h:
            meta = table[2 * i + 1]
            if ((meta >> 8) & 0xFF) == n:
                o = meta >> 16
                same = True
                for t in range(n):
                    if store[o + t] != syms[a + t]:
                        same = False
                        break
                if same:
                    return i
        i = (i + 1) & mask


@kernel
def _cache_reset(table, used):
    for i in range(table.shape[0] >> 1):
        table[2 * i] = -1
    used[0] = 0
    used[1] = 0


@kernel
def merge_words(syms, m, M, scratch, C, space_sym, suffix, out):
    """BPE word by word (split where U+2581 follows a non-U+2581 symbol, or precedes one in
    suffix mode), each word's result cached in ``C``. Writes into ``out``; returns the count."""
    table, store, used = C
    slots = table.shape[0] >> 1
    o = 0
    a = 0
    while a < m:
        b = a + 1
        if suffix:
            while b < m and not (syms[b - 1] == space_sym and syms[b] != space_sym):
                b += 1
        else:
            while b < m and not (syms[b] == space_sym and syms[b - 1] != space_sym):
                b += 1
        n = b - a
        if n == 1:
            out[o] = syms[a]
            o += 1
            a = b
            continue
        cacheable = n <= 64
        slot = -1
        h = np.int64(0)
        if cacheable:
            h = _hash_syms(syms, a, b)
            slot = _cache_find(table, store, syms, a, b, h)
            if slot >= 0:
                meta = table[2 * slot + 1]
                src = (meta >> 16) + n
                k = meta & 0xFF
                for t in range(k):
                    out[o + t] = store[src + t]
                o += k
                a = b
                continue
        # merge this word
        wsyms = scratch[1]
        for t in range(n):
            wsyms[t] = syms[a + t]
        res, k = merge_symbols(wsyms, n, M, scratch, 0.0)
        for t in range(k):
            out[o + t] = res[t]
        if cacheable:
            if used[0] * 2 >= slots or used[1] + n + k > store.shape[0]:
                _cache_reset(table, used)
                slot = _cache_find(table, store, syms, a, b, h)
            i = -slot - 1
            off = used[1]
            table[2 * i] = h
            table[2 * i + 1] = (off << 16) | (n << 8) | k
            for t in range(n):
                store[off + t] = syms[a + t]
            for t in range(k):
                store[off + n + t] = res[t]
            used[0] += 1
            used[1] += n + k
        o += k
        a = b
    return o


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
def encode_symbols(text, start, end, N, M, scratch, dropout, C, W):
    """Normalize + initial split + merges for ``text[start:end]``: (scratch, symbols, count).

    ``W`` = (use_words, space_sym, suffix): with ``use_words`` (and no dropout) the merges run
    word by word through the cache ``C``.
    """
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    bc, value, map_keys, map_values, kinds, split_left, split_right, V = M
    use_words, space_sym, suffix = W
    normbuf, n = normalize(text, start, end, units, pool, root_ok, ud_bc, ud_value, flags, cls, scratch[0])
    scratch = (normbuf,) + scratch[1:]
    scratch = _fit(scratch, n)
    syms = scratch[8]
    m = initial_symbols(normbuf, n, bc, value, ud_bc, ud_value, V, syms)
    if use_words and dropout <= 0.0:
        out = scratch[9]
        k = merge_words(syms, m, M, scratch, C, space_sym, suffix, out)
        return scratch, out, k
    res, k = merge_symbols(syms, m, M, scratch, dropout)
    return scratch, res, k


@kernel
def _cache_for(nbytes):
    slots = 64
    while slots < nbytes // 2 and slots < (1 << 18):
        slots *= 2
    return new_cache(slots, 8 * slots)


@kernel
def encode_one(text, N, M, F, dropout, W):
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    scratch = new_scratch(text.shape[0] + 16)
    C = _cache_for(text.shape[0] if W[0] else 0)
    scratch, syms, m = encode_symbols(text, 0, text.shape[0], N, M, scratch, dropout, C, W)
    out = np.empty(4 * m + 2, np.int32)
    o = place_ids(syms, m, F, out, 0, out.shape[0], out)
    return out[:o].copy()


@kernel
def symbols_one(text, N, M, dropout, W):
    scratch = new_scratch(text.shape[0] + 16)
    C = _cache_for(text.shape[0] if W[0] else 0)
    scratch, syms, m = encode_symbols(text, 0, text.shape[0], N, M, scratch, dropout, C, W)
    normbuf, n = normalize(text, 0, text.shape[0], N[0], N[1], N[2], N[3], N[4], N[5], N[6], scratch[0])
    return syms[:m].copy(), normbuf[:n].copy()


@batch_kernel
def encode_batch(buf, offsets, out_offsets, N, M, F, bounds, n_workers, out, counts, used, W):
    """Parallel batch encode; same contract as ``models.unigram.viterbi.encode_batch``.

    Each worker has its own word cache, warm from one of its chunks to the next."""
    n_chunks = bounds.shape[0] - 1
    for w in prange(n_workers):
        scratch = new_scratch(1024)
        C = new_cache(1 << 18 if W[0] else 64, 1 << 22 if W[0] else 64)
        tmp = np.empty(64, np.int32)
        for c in range(w, n_chunks, n_workers):
            o = out_offsets[bounds[c]]
            hi = out_offsets[bounds[c + 1]]
            for d in range(bounds[c], bounds[c + 1]):
                scratch, syms, m = encode_symbols(buf, offsets[d], offsets[d + 1], N, M, scratch, 0.0, C, W)
                k = place_ids(syms, m, F, out, o, hi, tmp)
                counts[d] = k
                o += max(k, 0)
            used[c] = o - out_offsets[bounds[c]]
