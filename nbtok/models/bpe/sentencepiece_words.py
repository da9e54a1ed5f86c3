"""SentencePiece BPE's fast path: the word loop with its word cache (between the
user-defined symbols of a model that has some: ``words_between_symbols``), over the hashed piece
table of ``models.bpe.sentencepiece_pieces``; the word loop runs the one merge loop,
``models.bpe.merge.merge_piece``, with its ``filtered_table_pairs`` lookup.

P = (table int64[2 * cap] of (hash, offset << 32 | length << 20 | piece id, or -1),
     char_syms int32[BMP] (the initial symbol of each BMP character), piece_bytes,
     bigrams uint64[] (``build_bigrams``), the merge table's keys and values, its
     ``models.bpe.merge.new_pair_filter``, kinds, split_left, split_right, has_unused, V,
     joins uint8[256] (``build_joins``: the ASCII bytes after which U+2581 starts no word))
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, inline_kernel, kernel, leaf_kernel
from .merge import LONG_PIECE, LOW32, filtered_table_pairs, merge_piece
from ...normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, UD_FIRST, normalize, normalize_into, one_char_len
from ...kernels.trie import longest_prefix
from ...kernels.ragged import worker_bytes
from ...kernels.runqueue import runqueue_over
from ..symbols import char_symbol, count_ids, finish_ids, place_ids
from .merge import new_scratch as bpe_new_scratch
from .sentencepiece_pieces import _bigram_bit, char_sym, emit_symbols, word_symbols


# ------------------------------------------------------------------ word loop (fast path)
UNIT_SYMS = 1024  # the merge scratch first holds units of this many symbols (see ``_unit_scratch``)


@kernel
def new_word_scratch(n, units):
    """(normbuf, doc syms int32, word syms int32, heap, prev, next, pair_at, run queue, stack)
    for documents of n normalized bytes (grown by ``_fit_words``) whose units (words, or parts
    of words, see ``words_loop``) have at most ``units`` symbols (longer ones: ``words_rest``)."""
    n = max(n, 64) + 16
    return (np.empty(n, np.uint8), np.empty(n, np.int32)) + _unit_scratch(units)


@kernel
def _unit_scratch(units):
    """(word syms, heap, prev, next, pair_at, run queue, stack): the merge loop's scratch
    (``models.bpe.merge``) for units of up to ``units`` symbols (at least 64), ``word syms``'
    length. Sized for short units, not by the document: a megabyte without spaces is mostly
    short units, and scratch for a megabyte-long one (~100 MB of address space) made every
    call fault its pages in afresh once malloc returned them to the system."""
    u = max(units, 64) + 16
    heap, prev, nxt, pair_at = bpe_new_scratch(u)
    return (np.empty(u, np.int32), heap, prev, nxt, pair_at,
            runqueue_over(heap if u >= LONG_PIECE else heap[:1]), np.empty(256, np.int64))


@inline_kernel
def _fit_words(S, normbuf, n):
    """``S`` with ``normbuf`` (from ``normalize``) and room for the symbols of n normalized
    bytes (inlined)."""
    if S[1].shape[0] >= n + 16:
        return (normbuf,) + S[1:]
    return (normbuf, np.empty(max(n, 2 * S[1].shape[0]) + 16, np.int32)) + S[2:]


@kernel
def words_rest(P, text, n, S, tab, used, o, a, need):
    """``words_loop`` on from ``text[a:]``, where a unit of up to ``need`` symbols did not fit
    S's merge scratch, with a bigger one (grown as often as needed, dropped at the end); the
    symbols go on into ``S[1]``; returns their count. The caller's ``S`` is not replaced: a
    variable that may be reassigned costs the reference counting of all its arrays on the
    usual path (one ``words_loop`` a document), and long units are rare (their scratch costs
    about what merging them does)."""
    T = S
    while a < n:
        T = S[:2] + _unit_scratch(max(need, 2 * T[2].shape[0]))
        o, a, need = words_loop(P, text, a, n, T, tab, used, S[1], o)
    return o


WORD_SLOT = 8  # int64 per word-cache slot: hash, length | count << 8, 24 word bytes, 6 int32 symbols
WORD_BYTES = 24
WORD_SYMS = 6


@kernel
def new_word_cache(bits):
    """Word cache keyed by a word's normalized bytes: ``int64[WORD_SLOT * 2^bits]``, one 64-byte
    slot per word (its hash, length and symbol count, its bytes and its symbols inline, so a
    hit reads one cache line), plus ``used`` int64[1]. Words of up to 24 bytes and 6 symbols
    are cached; the table is cleared when half full."""
    slots = 1 << bits
    tab = np.empty(WORD_SLOT * slots, np.int64)
    for i in range(slots):
        tab[WORD_SLOT * i] = -1
    return tab, np.zeros(1, np.int64)


@leaf_kernel
def merge_word(P, text, a, b, S, out, o):
    """BPE of the word ``text[a:b]`` through ``models.bpe.merge.merge_piece``: symbols appended to
    ``out`` at ``o``; returns the new o."""
    table, char_syms, piece_bytes, bigrams, map_keys, map_values, pair_filter, kinds, split_left, split_right, has_unused, V = P[:12]
    wsyms, heap, prev, nxt, pair_at, queue, stack = S[2], S[3], S[4], S[5], S[6], S[7], S[8]
    m = word_symbols(table, char_syms, piece_bytes, V, text, a, b, wsyms)
    m = merge_piece(wsyms, m, heap, prev, nxt, pair_at, 0.0, queue, filtered_table_pairs, (map_keys, map_values, pair_filter))
    return emit_symbols(wsyms, m, kinds, split_left, split_right, has_unused, V, stack, out, o)


@leaf_kernel
def words_loop(P, text, a, n, S, tab, used, out, o):
    """BPE of ``text[a:n]`` (normalized, ``a`` the start of a word or unit) word by word, a
    word starting at each U+2581 that follows another character; short words' symbols are
    cached in ``tab`` (keyed by their bytes). Symbols into ``out`` from ``o``.

    A word longer than ``WORD_BYTES`` (text without spaces) is cut further between two
    characters that are adjacent in no mergeable piece (``bigrams``, see ``build_bigrams``): no
    symbol can ever span such a cut, so the parts merge independently and are cached alike.

    Returns (o, a, need): a = n when done; else the unit at ``a`` has up to ``need`` symbols
    (its bytes), more than ``S``'s merge scratch holds, and nothing from ``a`` on is written:
    call again from ``a`` with a bigger scratch (``words_rest``)."""
    bigrams = P[3]
    joins = P[12]
    mask = (tab.shape[0] // WORD_SLOT) - 1
    nbits = bigrams.shape[0] * 64
    cap = S[2].shape[0]
    while a < n:
        # the word: a run of U+2581 (if any), then up to the next U+2581 that follows neither
        # U+2581 nor a byte of ``joins``
        b = a
        while b + 2 < n and text[b] == SPACE0 and text[b + 1] == SPACE1 and text[b + 2] == SPACE2:
            b += 3
        if b == a:
            b = a + 1
        while b < n:
            if text[b] == SPACE0 and b + 2 < n and text[b + 1] == SPACE1 and text[b + 2] == SPACE2:
                if not joins[text[b - 1]]:
                    break
                while b + 2 < n and text[b] == SPACE0 and text[b + 1] == SPACE1 and text[b + 2] == SPACE2:
                    b += 3  # (the run after a joining byte)
                continue
            b += 1
        if b - a > WORD_BYTES and nbits > 0:
            sa = a
            p = a
            prev = np.int64(-1)
            while p < b:
                mblen = one_char_len(text[p], b - p)
                cp = char_symbol(text, p, mblen, 0)
                if prev >= 0 and not _bigram_bit(bigrams, nbits, prev, cp):
                    if p - sa > cap:
                        return o, sa, p - sa
                    o = _unit(P, text, sa, p, S, tab, used, mask, out, o)
                    sa = p
                prev = cp
                p += mblen
            a = sa
        if b - a > cap:
            return o, a, b - a
        o = _unit(P, text, a, b, S, tab, used, mask, out, o)
        a = b
    return o, n, 0


@kernel
def words_between_symbols(P, text, n, S, tab, used, ud_bc, ud_value, cls):
    """``words_loop`` over ``text[:n]`` of a model with user-defined symbols: the initial split
    (``models.bpe.sentencepiece.initial_symbols``) matches the longest user-defined symbol at
    each character start it reaches (only where ``cls[UD_FIRST + byte]`` says one may start)
    and freezes it, so no merge crosses it: the text between two matches goes through the word
    loop (its words and their cache as without user-defined symbols), each match is its own
    symbol. Symbols into ``S[1]``; returns their count."""
    out = S[1]
    o = 0
    a = 0
    p = 0
    while p < n:
        c = text[p]
        if cls[UD_FIRST + np.int64(c)]:
            uid, ln = longest_prefix(ud_bc, ud_value, text, p, n)
            if ln > 0:
                if p > a:
                    o = _words_to(P, text, a, p, S, tab, used, o)
                out[o] = uid
                o += 1
                p += ln
                a = p
                continue
        p += one_char_len(c, n - p)
    if n > a:
        o = _words_to(P, text, a, n, S, tab, used, o)
    return o


@inline_kernel
def _words_to(P, text, a, b, S, tab, used, o):
    """``words_loop`` (then ``words_rest`` if needed) over ``text[a:b]``, symbols from ``o``."""
    o, a, need = words_loop(P, text, a, b, S, tab, used, S[1], o)
    if a < b:
        o = words_rest(P, text, b, S, tab, used, o, a, need)
    return o


@inline_kernel
def _word_key(text, a, b):
    """(hash, w0, w1, w2) of the word ``text[a:b]`` (at most ``WORD_BYTES``), its bytes packed
    little-endian into three words."""
    w0 = np.uint64(0)
    w1 = np.uint64(0)
    w2 = np.uint64(0)
    for t in range(b - a):
        x = np.uint64(text[a + t]) << np.uint64(8 * (t & 7))
        if t < 8:
            w0 |= x
        elif t < 16:
            w1 |= x
        else:
            w2 |= x
    z = (w0 * np.uint64(0x9E3779B97F4A7C15)) ^ (w1 * np.uint64(0xC2B2AE3D27D4EB4F)) ^ w2 ^ np.uint64(b - a)
    z = (z ^ (z >> np.uint64(31))) * np.uint64(0xBF58476D1CE4E5B9)
    return np.int64(z >> np.uint64(1)), np.int64(w0), np.int64(w1), np.int64(w2)


@inline_kernel
def _word_slot(tab, mask, h, ln, w0, w1, w2):
    """Offset of the word's slot in ``tab`` and whether it holds the word (else it is free)."""
    i = (h ^ (h >> 23)) & mask
    while True:
        q = WORD_SLOT * i
        k = tab[q]
        if k == -1:
            return q, False
        if k == h and (tab[q + 1] & 0xFF) == ln and tab[q + 2] == w0 and tab[q + 3] == w1 and tab[q + 4] == w2:
            return q, True
        i = (i + 1) & mask


@leaf_kernel
def _store_word(tab, used, mask, q, h, ln, w0, w1, w2, out, o, cnt):
    """Cache the word's ``cnt`` symbols ``out[o:o+cnt]`` in the free slot ``q`` (the table is
    cleared first if half full)."""
    if 2 * (used[0] + 1) > mask + 1:
        for r in range(mask + 1):
            tab[WORD_SLOT * r] = -1
        used[0] = 0
        q, _ = _word_slot(tab, mask, h, ln, w0, w1, w2)
    tab[q] = h
    tab[q + 1] = ln | (cnt << 8)
    tab[q + 2] = w0
    tab[q + 3] = w1
    tab[q + 4] = w2
    for t in range(0, cnt, 2):
        lo = np.int64(out[o + t])
        hi = np.int64(out[o + t + 1]) if t + 1 < cnt else np.int64(0)
        tab[q + 5 + (t >> 1)] = lo | (hi << 32)
    used[0] += 1


@inline_kernel
def _unit(P, text, a, b, S, tab, used, mask, out, o):
    """Symbols of the word (or part of a word) ``text[a:b]`` into ``out`` at ``o``: from the
    word cache, or merged and then cached. Returns the new o."""
    ln = b - a
    if one_char_len(text[a], ln) == ln:  # one character: its initial symbol (nothing to merge or re-split)
        out[o] = char_sym(P[0], P[1], P[2], P[11], text, a, ln)
        return o + 1
    if mask == 0 or ln > WORD_BYTES:
        return merge_word(P, text, a, b, S, out, o)
    h, w0, w1, w2 = _word_key(text, a, b)
    q, hit = _word_slot(tab, mask, h, ln, w0, w1, w2)
    if hit:
        cnt = (tab[q + 1] >> 8) & 0xFF
        for t in range(cnt):
            x = tab[q + 5 + (t >> 1)]
            out[o + t] = (x >> 32) if t & 1 else (x & LOW32)
        return o + cnt
    o2 = merge_word(P, text, a, b, S, out, o)
    if o2 - o <= WORD_SYMS:
        _store_word(tab, used, mask, q, h, ln, w0, w1, w2, out, o, o2 - o)
    return o2


@kernel
def _one_doc_words(text, N):
    """(normalized bytes, their length, word scratch, word cache) for one document of the word
    loop, the cache sized by the document."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    size = text.shape[0]
    normbuf, n = normalize(text, 0, size, units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(3 * size + 8, np.uint8))
    S = new_word_scratch(n, min(n, UNIT_SYMS))
    bits = 4
    while bits < 16 and (1 << bits) < n // 8:
        bits += 1
    tab, used = new_word_cache(bits if n > 256 else 0)
    return normbuf, n, S, tab, used


@kernel
def encode_one_words(text, N, P, F):
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    normbuf, n, S, tab, used = _one_doc_words(text, N)
    m, a, need = words_loop(P, normbuf, 0, n, S, tab, used, S[1], 0)
    if a < n:
        m = words_rest(P, normbuf, n, S, tab, used, m, a, need)
    syms = S[1]
    out = np.empty(count_ids(syms, m, V, byte_fallback, bos, eos), np.int32)
    finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out


@kernel
def encode_one_words_ud(text, N, P, F):
    """``encode_one_words`` for a model with user-defined symbols (``words_between_symbols``): a
    kernel of its own, so that the first call of every other model does not compile that loop."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    ud_bc, ud_value, cls = N[3], N[4], N[6]
    normbuf, n, S, tab, used = _one_doc_words(text, N)
    m = words_between_symbols(P, normbuf, n, S, tab, used, ud_bc, ud_value, cls)
    syms = S[1]
    out = np.empty(count_ids(syms, m, V, byte_fallback, bos, eos), np.int32)
    finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out


@kernel
def symbols_one_words(text, N, P):
    """(symbols, normalized bytes) of ``text`` through the word loop."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    size = text.shape[0]
    normbuf, n = normalize(text, 0, size, units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(3 * size + 8, np.uint8))
    S = new_word_scratch(n, min(n, UNIT_SYMS))
    tab, used = new_word_cache(0)
    if ud_bc.shape[0] > 0:
        m = words_between_symbols(P, normbuf, n, S, tab, used, ud_bc, ud_value, cls)
    else:
        m, a, need = words_loop(P, normbuf, 0, n, S, tab, used, S[1], 0)
        if a < n:
            m = words_rest(P, normbuf, n, S, tab, used, m, a, need)
    return S[1][:m].astype(np.int64), normbuf[:n].copy()


@batch_kernel
def encode_batch_words(buf, offsets, out_offsets, N, P, F, bounds, n_workers, out, counts, used):
    """Parallel batch encode through the word loop (contract of ``models.unigram.viterbi.encode_batch``);
    each worker has its own word cache, warm from one of its chunks to the next."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    Vf, unk_id, byte_fallback, byte_ids, bos, eos = F
    has_ud = ud_bc.shape[0] > 0
    n_chunks = bounds.shape[0] - 1
    for w in prange(n_workers):
        S = new_word_scratch(1024, UNIT_SYMS)
        # the word cache grows with the worker's share of the batch (8 MB at most): small
        # batches do not pay for a big one
        nbytes = worker_bytes(offsets, bounds, w, n_workers)[1]
        bits = 8
        while bits < 17 and (1 << bits) < nbytes // 8:
            bits += 1
        tab, filled = new_word_cache(bits)
        tmp_ids = np.empty(64, np.int32)
        for c in range(w, n_chunks, n_workers):
            o = out_offsets[bounds[c]]
            hi = out_offsets[bounds[c + 1]]
            for d in range(bounds[c], bounds[c + 1]):
                n = normalize_into(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value, flags,
                                   cls, S[0])
                if n < 0 or S[1].shape[0] < n + 16:  # rarely: rebuilding the tuple costs its counts
                    normbuf, n = normalize(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value,
                                           flags, cls, S[0])
                    S = _fit_words(S, normbuf, n)
                if has_ud:
                    m = words_between_symbols(P, S[0], n, S, tab, filled, ud_bc, ud_value, cls)
                else:
                    m, a, need = words_loop(P, S[0], 0, n, S, tab, filled, S[1], 0)
                    if a < n:  # a unit longer than the merge scratch (rare)
                        m = words_rest(P, S[0], n, S, tab, filled, m, a, need)
                syms = S[1]
                if hi - o >= 4 * m + 2:
                    k = finish_ids(syms, m, Vf, unk_id, byte_fallback, byte_ids, bos, eos, out, o) - o
                else:
                    k = place_ids(syms, m, F, out, o, hi, tmp_ids)
                counts[d] = k
                o += max(k, 0)
            used[c] = o - out_offsets[bounds[c]]
