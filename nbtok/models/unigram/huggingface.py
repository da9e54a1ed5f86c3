"""HF's Unigram over SentencePiece-normalized text: word by word, with a cache of word ids.

A ``tokenizer.json`` converted from a SentencePiece Unigram model in HF's T5 shapes (T5, Marian)
normalizes as SentencePiece does, then cuts the text before every U+2581 and runs HF's Unigram
(``models.text_units.unigram_best_path``: f64 scores, each word from zero) on each piece
(``models.hf_fused_spm`` says when the normalizations agree). This module runs that on a whole
batch in one parallel call: the SentencePiece normalizer (``normalizers.sentencepiece.normalize_into``), the cut,
and the best path of each word. A word's ids depend on its bytes alone, so each worker keeps
the ids of the words it has seen in a two-way cache whose slot is one cache line: the word (up
to ``CACHE_WORD`` bytes, as four int64) and its ids (up to ``CACHE_IDS``), in at most
``CACHE_SLOTS`` slots (512 KB, which stays in a core's L2). On 1 MB of lines a worker replays
the ids of 153,578 of 185,087 English words and 48,247 of 84,607 Russian ones (T5). (Until
2026-12-04 the cache kept the words' bytes and ids apart from its slots, 5 MB in all: a hit
cost three loads from memory, about what Russian words cost to encode, and the cache saved
nothing there.)

Model tuple ``H = (G, V, A)``: ``G`` as ``models.text_units.unigram_best_path``, ``A`` the Aho-Corasick
automaton of its trie with each record's f64 score (``best_path_automaton``; empty arrays: the walk), ``V`` the vocabulary's
``BytesMap`` (slot_ids, slot_hashes, piece_bytes, piece_offsets), through which the text of a
fused run of unknown characters is looked up, as HF does (it may be a piece). HF looks every
piece up by its text; with no piece twice in the vocabulary (``hf_fused_spm`` checks) that is
the piece's own id.
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, kernel, leaf_kernel
from ...kernels.hashmap import bytesmap_get, pack_word
from .automaton import automaton_step
from .words import next_space
from ..text_units import _unigram_scratch, unigram_backtrack, unigram_best_path
from ...normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, normalize, normalize_into, one_char_len

CACHE_SLOTS = 1 << 13   # at most, a worker's
CACHE_WORD = 32   # bytes; a longer word takes the lattice each time
CACHE_IDS = 8   # a word of more ids is not cached
SLOT = 16   # int32 a slot: the word as 4 int64 (U+2581's bytes hold L | ids << 6), then its ids
META = 0xFFFFFF


@kernel
def new_cache(n_bytes):
    """An empty word cache for a worker that encodes about ``n_bytes`` of text: (int32 view,
    int64 view) of ``SLOT`` int32 a slot, a slot per 64 bytes, a power of two from 64 (4 KB
    for one sentence: clearing the largest cache costs more than encoding it) to
    ``CACHE_SLOTS``, in sets of two. An empty slot holds L = 0, which no word has."""
    k = 64
    while k < CACHE_SLOTS and 64 * k < n_bytes:
        k *= 2
    w32 = np.zeros(SLOT * k, np.int32)
    return w32, w32.view(np.int64)


@leaf_kernel
def word_key(norm, a, b):
    """The word ``norm[a:b]`` (U+2581 first, at most ``CACHE_WORD`` bytes) as four int64, the
    first with its length in place of U+2581's bytes."""
    k0 = (pack_word(norm, a, min(b, a + 8)) & ~META) | (b - a)
    return k0, pack_word(norm, a + 8, min(b, a + 16)), pack_word(norm, a + 16, min(b, a + 24)), \
        pack_word(norm, a + 24, b)


@leaf_kernel
def cache_set(C, key):
    """Where in ``C[1]`` the two slots that may hold ``key`` start (a full mix of the key: every
    word's first bytes are alike)."""
    h = (np.uint64(key[0]) * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(key[1]) * np.uint64(0xC2B2AE3D27D4EB4F)) \
        ^ (np.uint64(key[2]) * np.uint64(0x165667B19E3779F9)) ^ (np.uint64(key[3]) * np.uint64(0x27D4EB2F165667C5))
    h ^= h >> np.uint64(29)
    h *= np.uint64(0x94D049BB133111EB)
    sets = C[0].shape[0] // (2 * SLOT)
    return np.int64((h >> np.uint64(32)) & np.uint64(sets - 1)) * SLOT


@leaf_kernel
def cached_ids(C, q, key, out, o):
    """Copy the ids of ``key`` from one of the two slots at ``C[1][q]`` to ``out[o:]``: their
    count, or -1."""
    w32, w64 = C
    for p in (q, q + SLOT // 2):
        x = w64[p]
        if (x & ~(63 << 6)) == key[0] and w64[p + 1] == key[1] and w64[p + 2] == key[2] and w64[p + 3] == key[3]:
            m = (x >> 6) & 63
            for i in range(m):
                out[o + i] = w32[2 * p + 8 + i]
            return m
    return -1


@leaf_kernel
def remember_ids(C, q, key, ids, o, m):
    """Put ``key`` and its ids ``ids[o:o + m]`` (m <= ``CACHE_IDS``) in the first of the two slots
    at ``C[1][q]``, whose word moves to the second (the older of the two is dropped)."""
    w32, w64 = C
    for i in range(SLOT):
        w32[2 * q + SLOT + i] = w32[2 * q + i]
    w64[q] = key[0] | (m << 6)
    w64[q + 1] = key[1]
    w64[q + 2] = key[2]
    w64[q + 3] = key[3]
    for i in range(m):
        w32[2 * q + 8 + i] = ids[o + i]


@leaf_kernel
def best_path_automaton(size, G, A, sc):
    """``models.text_units.unigram_best_path`` read through the trie's Aho-Corasick automaton
    ``A = (au, outs, rec, rec_f64)`` (``models.unigram.automaton``, with each record as two int64:
    piece id << 10 | length, and the piece's f64 score, read through the float64 view ``rec_f64``
    of ``rec``: one cache line): each byte once, instead of a trie walk from every character. The
    lattice is filled by end position; at an end, the pieces come longest first, which is the
    order of their starts, the order in which HF's walk proposes them, and the unknown character
    (when no one-character piece covers it) comes last, as HF adds it at the largest start. So
    each position takes the same candidate, on the same f64 values. A position's best is kept in
    locals and written once (only character ends are written; pieces and the unknown character
    start and end at character starts, so no other position is read). Measured on 1 MB of
    Russian, Japanese and Chinese lines (one thread): the walk 40 ms, this 18 ms."""
    unk_score, unk_id = G[4][0], G[3][0]
    au, outs, rec, rec_f64 = A
    buf, best, starts, node_id = sc[0], sc[3], sc[4], sc[5]
    best[0] = 0.0
    x = np.uint64(0)
    u = au[0]
    low8 = np.uint64(0xFF)
    low10 = np.uint64(0x3FF)
    e = np.uint64(0)
    end = np.uint64(size)
    while e < end:
        s_char = e
        mblen = np.uint64(one_char_len(buf[e], size - np.int64(e)))
        for q in range(e, e + mblen):
            x, u = automaton_step(au, x, u, np.uint64(buf[q]))
        e += mblen
        o = np.uint64(outs[x])
        k = o & low8
        first = o >> np.uint64(8)
        bv = -np.inf
        bs = -1
        bid = np.int32(-1)
        for j in range(np.uint64(2) * first, np.uint64(2) * (first + k), np.uint64(2)):
            r = rec[j]
            a = e - (np.uint64(r) & low10)
            cand = rec_f64[j + np.uint64(1)] + best[a]
            if bs < 0 or cand > bv:
                bv = cand
                bs = np.int64(a)
                bid = np.int32(r >> 10)
        if k == 0 or (np.uint64(rec[np.uint64(2) * (first + k - np.uint64(1))]) & low10) != mblen:
            cand = unk_score + best[s_char]
            if bs < 0 or cand > bv:
                bv = cand
                bs = np.int64(s_char)
                bid = np.int32(unk_id)
        best[e] = bv
        starts[e] = bs
        node_id[e] = bid
    return unigram_backtrack(size, unk_id, G[3][1] != 0, sc)


@leaf_kernel
def word_ids(text, a, b, H, sc, out, o):
    """HF's ids of the word ``text[a:b]`` at ``out[o:]`` (room for ``b - a`` ids); returns the
    count. ``sc`` (``models.text_units._unigram_scratch``) must hold ``b - a`` bytes."""
    G, V, A = H
    unk_id = G[3][0]
    buf = sc[0]
    size = b - a
    for i in range(size):
        buf[i] = text[a + i]
    if A[0].shape[0] > 0:
        r = best_path_automaton(size, G, A, sc)
    else:
        r = unigram_best_path(size, G, sc)
    res_s, res_e, pids = sc[6], sc[7], sc[8]
    for q in range(r - 1, -1, -1):
        tid = pids[q]
        if tid < 0 and one_char_len(buf[res_s[q]], res_e[q] - res_s[q]) < res_e[q] - res_s[q]:
            # a fused run of unknown characters: its text may be a piece (one character may not:
            # it would have been the lattice's candidate)
            tid = bytesmap_get(V[0], V[1], V[2], V[3], buf, res_s[q], res_e[q])
        out[o] = unk_id if tid < 0 else tid
        o += 1
    return r


@leaf_kernel
def encode_normalized(norm, n, H, sc, C, out, o, hi):
    """HF's ids of the normalized text ``norm[:n]`` at ``out[o:hi]``: returns the new ``o``, or
    -1 if they do not fit. ``sc`` holds ``n`` bytes."""
    key = (np.int64(0), np.int64(0), np.int64(0), np.int64(0))
    q = 0
    a = 0
    while a < n:
        b = next_space(norm, a + 1, n)
        if o + (b - a) > hi:
            return -1
        m = -1
        cache = 3 <= b - a <= CACHE_WORD and norm[a] == SPACE0 and norm[a + 1] == SPACE1 and norm[a + 2] == SPACE2
        if cache:
            key = word_key(norm, a, b)
            q = cache_set(C, key)
            m = cached_ids(C, q, key, out, o)
        if m < 0:
            m = word_ids(norm, a, b, H, sc, out, o)
            if cache and m <= CACHE_IDS:
                remember_ids(C, q, key, out, o, m)
        o += m
        a = b
    return o


@kernel
def encode_one(text, N, H):
    """HF's ids of one document (``N``: the SentencePiece normalizer tuple)."""
    norm, n = normalize(text, 0, text.shape[0], N[0], N[1], N[2], N[3], N[4], N[5], N[6],
                        np.empty(3 * text.shape[0] + 8, np.uint8))
    out = np.empty(n + 1, np.int32)
    m = encode_normalized(norm, n, H, _unigram_scratch(n + 1), new_cache(n), out, 0, out.shape[0])
    return out[:m].copy()


@batch_kernel
def encode_batch(docs, N, H, bounds, n_workers, results):
    """Documents ``buf[offsets[i]:offsets[i+1]]`` (``docs = (buf, offsets)``) in parallel, as
    ``viterbi.encode_batch`` lays them out: chunk c writes its documents' ids one after another
    from ``out_offsets[bounds[c]]`` (``results = (out_offsets, out, counts, used)``);
    ``counts[i]`` is -1 where document i did not fit (the caller redoes it alone)."""
    buf, offsets = docs
    out_offsets, out, counts, used = results
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    G, V, A = H   # (a parallel loop takes no nested tuple: H is rebuilt inside)
    n_chunks = bounds.shape[0] - 1
    per_worker = (offsets[offsets.shape[0] - 1] - offsets[0]) // n_workers
    for w in prange(n_workers):
        Hw = (G, V, A)
        norm = np.empty(4096, np.uint8)
        sc = _unigram_scratch(1024)
        C = new_cache(per_worker)
        for c in range(w, n_chunks, n_workers):
            o = out_offsets[bounds[c]]
            hi = out_offsets[bounds[c + 1]]
            for d in range(bounds[c], bounds[c + 1]):
                n = normalize_into(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                                   norm)
                if n < 0:
                    norm, n = normalize(buf, offsets[d], offsets[d + 1], units, pool, root_ok, ud_bc, ud_value,
                                        flags, cls, norm)
                if sc[0].shape[0] < n + 1:
                    sc = _unigram_scratch(max(n + 1, 2 * sc[0].shape[0]))
                e = encode_normalized(norm, n, Hw, sc, C, out, o, hi)
                if e < 0:
                    counts[d] = -1
                else:
                    counts[d] = e - o
                    o = e
            used[c] = o - out_offsets[bounds[c]]
