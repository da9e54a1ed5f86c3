"""HF's Unigram over SentencePiece-normalized text: word by word, with a cache of word ids.

A ``tokenizer.json`` converted from a SentencePiece Unigram model in HF's T5 shapes (T5, Marian)
normalizes as SentencePiece does, then cuts the text before every U+2581 and runs HF's Unigram
(``models.text_units.unigram_best_path``: f64 scores, each word from zero) on each piece
(``models.hf_fused_spm`` says when the normalizations agree). This module runs that on a whole
batch in one parallel call: the SentencePiece normalizer (``normalizers.sentencepiece.normalize_into``), the cut,
and the best path of each word. A word's ids depend on its bytes alone, so each worker keeps
the ids of the words it has seen (up to ``CACHE_SLOTS`` slots, direct-mapped by hash, the word's
bytes compared on a hit; words up to ``CACHE_WORD`` bytes); with it a 1 MB batch of English
(185,087 words) finds a best path for 24,153.

Model tuple ``H = (G, V, A)``: ``G`` as ``models.text_units.unigram_best_path``, ``A`` the Aho-Corasick
automaton of its trie (``best_path_automaton``; empty arrays: the walk), ``V`` the vocabulary's
``BytesMap`` (slot_ids, slot_hashes, piece_bytes, piece_offsets), through which the text of a
fused run of unknown characters is looked up, as HF does (it may be a piece). HF looks every
piece up by its text; with no piece twice in the vocabulary (``hf_fused_spm`` checks) that is
the piece's own id.
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, kernel, leaf_kernel
from ...kernels.hashmap import bytesmap_get, hash_bytes
from .automaton import automaton_step
from ..text_units import _unigram_scratch, unigram_backtrack, unigram_best_path
from ...normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, normalize, normalize_into, one_char_len

CACHE_SLOTS = 1 << 16   # at most, a worker's (2 MB of slots, 1 MB of word bytes, 2 MB of ids)
CACHE_WORD = 64


@kernel
def new_cache(n_bytes):
    """An empty cache for a worker that encodes about ``n_bytes`` of text: (slots int64[k, 4]:
    hash, bytes at, ids at, len << 32 | ids; bytes; ids; fill), k a power of two from 64 to
    ``CACHE_SLOTS``, about a slot per 8 bytes (allocating and clearing the largest cache took
    100 us, four times HF's encode of one sentence)."""
    k = 64
    while k < CACHE_SLOTS and 8 * k < n_bytes:
        k *= 2
    slots = np.zeros((k, 4), np.int64)
    slots[:, 0] = -1
    return slots, np.empty(16 * k, np.uint8), np.empty(8 * k, np.int32), np.zeros(2, np.int64)


@leaf_kernel
def _cached(C, text, a, b, h):
    """The slot holding the word ``text[a:b]`` with hash ``h``, or -1."""
    slots, wbytes = C[0], C[1]
    k = h & (slots.shape[0] - 1)
    if slots[k, 0] != h or (slots[k, 3] >> 32) != b - a:
        return -1
    at = slots[k, 1]
    for i in range(b - a):
        if wbytes[at + i] != text[a + i]:
            return -1
    return k


@leaf_kernel
def _remember(C, text, a, b, h, ids, o, m):
    """Put the word ``text[a:b]`` and its ids ``ids[o:o + m]`` in the cache (emptied when full)."""
    slots, wbytes, wids, fill = C
    if fill[0] + (b - a) > wbytes.shape[0] or fill[1] + m > wids.shape[0]:
        for k in range(slots.shape[0]):
            slots[k, 0] = -1
        fill[0] = 0
        fill[1] = 0
    k = h & (slots.shape[0] - 1)
    slots[k, 0] = h
    slots[k, 1] = fill[0]
    slots[k, 2] = fill[1]
    slots[k, 3] = ((b - a) << 32) | m
    for i in range(b - a):
        wbytes[fill[0] + i] = text[a + i]
    for i in range(m):
        wids[fill[1] + i] = ids[o + i]
    fill[0] += b - a
    fill[1] += m


@leaf_kernel
def best_path_automaton(size, G, A, sc):
    """``models.text_units.unigram_best_path`` read through the trie's Aho-Corasick automaton ``A``
    (``models.unigram.automaton``): each byte once, instead of a trie walk from every character.
    The lattice is filled by end position; at an end, the pieces come longest first, which is
    the order of their starts, the order in which HF's walk proposes them, and the unknown
    character (when no one-character piece covers it) comes last, as HF adds it at the largest
    start. So each position takes the same candidate, on the same f64 values. Measured on 1 MB
    of Russian, Japanese and Chinese lines (one thread): the walk 40 ms, this 18 ms."""
    scores, params, unk_score = G[2], G[3], G[4][0]
    au, outs, rec = A
    buf, best, starts, node_id = sc[0], sc[3], sc[4], sc[5]
    unk_id = params[0]
    for p in range(size + 1):
        starts[p] = -1
        best[p] = 0.0
        node_id[p] = -1
    x = np.uint64(0)
    u = au[0]
    e = 0
    while e < size:
        s_char = e
        mblen = one_char_len(buf[e], size - e)
        for q in range(e, e + mblen):
            x, u = automaton_step(au, x, u, np.uint64(buf[q]))
        e += mblen
        o = np.int64(outs[x])
        first = o >> 8
        single = False
        for k in range(o & 0xFF):
            r = np.int64(rec[2 * (first + k)])
            pid = r >> 10
            ln = r & 0x3FF
            cand = scores[pid] + best[e - ln]
            if starts[e] < 0 or cand > best[e]:
                best[e] = cand
                starts[e] = e - ln
                node_id[e] = pid
            if ln == mblen:
                single = True
        if not single:
            cand = unk_score + best[s_char]
            if starts[e] < 0 or cand > best[e]:
                best[e] = cand
                starts[e] = s_char
                node_id[e] = unk_id
    return unigram_backtrack(size, unk_id, params[1] != 0, sc)


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
        if tid < 0:   # a fused run of unknown characters: its text may be a piece
            tid = bytesmap_get(V[0], V[1], V[2], V[3], buf, res_s[q], res_e[q])
        out[o] = unk_id if tid < 0 else tid
        o += 1
    return r


@leaf_kernel
def _next_word(norm, a, n):
    """Where the word starting at ``norm[a]`` ends: the next U+2581 after its first character."""
    p = a + 1
    while p + 2 < n:
        if norm[p] == SPACE0 and norm[p + 1] == SPACE1 and norm[p + 2] == SPACE2:
            return p
        p += 1
    return n


@leaf_kernel
def encode_normalized(norm, n, H, sc, C, out, o, hi):
    """HF's ids of the normalized text ``norm[:n]`` at ``out[o:hi]``: returns the new ``o``, or
    -1 if they do not fit. ``sc`` holds ``n`` bytes."""
    a = 0
    while a < n:
        b = _next_word(norm, a, n)
        if o + (b - a) > hi:
            return -1
        if b - a <= CACHE_WORD:
            h = hash_bytes(norm, a, b) & 0x7FFFFFFFFFFFFFFF
            k = _cached(C, norm, a, b, h)
            if k >= 0:
                m = C[0][k, 3] & 0xFFFFFFFF
                at = C[0][k, 2]
                wids = C[2]
                for i in range(m):
                    out[o + i] = wids[at + i]
                o += m
            else:
                m = word_ids(norm, a, b, H, sc, out, o)
                _remember(C, norm, a, b, h, out, o, m)
                o += m
        else:
            o += word_ids(norm, a, b, H, sc, out, o)
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
