"""Byte-level BPE encoding (tiktoken / GPT-2 semantics) over UTF-8 buffers.

The model's arrays travel as one tuple ``M`` (see ``ByteLevelBPE.kernel_model``):

    M = (piece_bytes, piece_offsets, slot_ids, slot_hashes,  # vocabulary + bytes -> id map
         byte_ids,                                            # int32[256]: id of each single byte
         map_keys, map_values,                                # merge table (kernels/bpe.py)
         whole_piece,                                         # bool[1]: emit a pre-token found in
                                                              # the vocabulary as is (tiktoken)
         short_map)                                           # ShortMap of the pieces <= 16 bytes

Special tokens travel as ``S = (sp_bytes, sp_offsets, sp_ids, sp_first)``; ``sp_first[b]``
is True when some special token starts with byte b.
The pre-tokenizer travels as ``P = (table, cfg)`` (kernels/pretokenize.py).

Pre-token cache: a direct-mapped table ``int64[CACHE_SLOTS, 8]`` (256 KB, stays in L2)
remembering the ids of recent pre-tokens of up to 32 bytes. Natural text is Zipfian, so most
pre-tokens are answered there without touching the vocabulary map or the merge table, whose
random reads miss the cache. A row (one cache line) holds the pre-token's bytes packed into
four words and up to 6 ids; it is exact (the whole key is compared), bounded, and private to
one kernel call, so there is nothing to share between threads.

A batch is one flat buffer + offsets. ``encode_batch_*`` split it into chunks, one per
``prange`` iteration, each with its own scratch, and write every document's ids at its
byte offset in an output the size of the input (a document never has more tokens than
bytes); ``compact_ragged`` then packs them.
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, kernel, leaf_kernel
from .bpe import LONG_PIECE, cached_table_pairs, merge_piece, new_pair_cache, new_scratch
from .hashmap import SHORT_KEY_BYTES, bytesmap_get, shortmap_get
from .pretokenize import pretokenize
from .runqueue import runqueue_over


CACHE_SLOTS = 4096
CACHE_KEY_BYTES = 32
CACHE_IDS = 6


@kernel
def new_piece_scratch(cap):
    """Scratch for pieces of up to ``cap`` bytes: ``bpe_merge``'s arrays, its pair cache and,
    if pieces can be long, its run queue (untouched memory until a long piece comes)."""
    heap, prev, nxt, pair_at = new_scratch(cap)
    queue = runqueue_over(heap if cap >= LONG_PIECE else heap[:1])
    return heap, prev, nxt, pair_at, new_pair_cache(), queue


@kernel
def cache_slots_for(nbytes):
    """Bigger inputs repeat more distinct words: 4096 rows (256 KB, L2) up to 32768 (2 MB)."""
    slots = CACHE_SLOTS
    while slots < 32768 and slots * 256 < nbytes:
        slots *= 2
    return slots


@kernel
def new_cache(slots=CACHE_SLOTS):
    """Pre-token cache, one 64-byte row per slot (``slots`` a power of two): the key's
    32 bytes in w0..w3, ``length | count << 8`` in w4, up to 6 ids two per word in w5..w7."""
    return np.zeros((slots, 8), np.int64)


@leaf_kernel
def pack_word(buf, start, end):
    """``buf[start:end]`` (at most 8 bytes) as one little-endian word."""
    w = np.uint64(0)
    for k in range(max(end - start, 0)):
        w |= np.uint64(buf[start + k]) << np.uint64(8 * k)
    return np.int64(w)


@leaf_kernel
def cache_slot(k0, k1, k2, k3, n, mask):
    h = (np.uint64(k0) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(k1) * np.uint64(0xC2B2AE3D27D4EB4F)
         + np.uint64(k2) * np.uint64(0x165667B19E3779F9) + np.uint64(k3) * np.uint64(0x27D4EB2F165667C5)
         + np.uint64(n))
    return np.int64(h >> np.uint64(32)) & mask


@leaf_kernel
def encode_piece(buf, start, end, M, out, pos, ids, scratch, cache):
    """Encode the pre-token ``buf[start:end]`` into ``out[pos:]``, through the cache."""
    n = end - start
    if n > CACHE_KEY_BYTES:
        return encode_uncached(buf, start, end, M, out, pos, ids, scratch)
    k0 = pack_word(buf, start, min(end, start + 8))
    k1 = pack_word(buf, start + 8, min(end, start + 16))
    k2 = pack_word(buf, start + 16, min(end, start + 24))
    k3 = pack_word(buf, start + 24, end)
    row = cache_slot(k0, k1, k2, k3, n, cache.shape[0] - 1)
    meta = cache[row, 4]
    if (meta & 255) == n and cache[row, 0] == k0 and cache[row, 1] == k1 and cache[row, 2] == k2 and cache[row, 3] == k3:
        count = meta >> 8
        for k in range(count):
            word = cache[row, 5 + (k >> 1)]
            out[pos + k] = (word >> 32) if k & 1 else (word & 0xFFFFFFFF)
        return pos + count
    if n <= SHORT_KEY_BYTES and M[7][0]:
        whole = shortmap_get(M[8], k0, k1, n)
        if whole >= 0:
            out[pos] = whole
            new_pos = pos + 1
        else:
            new_pos = bpe_piece(buf, start, end, M, out, pos, ids, scratch)
    else:
        new_pos = encode_uncached(buf, start, end, M, out, pos, ids, scratch)
    count = new_pos - pos
    if count <= CACHE_IDS:
        cache[row, 0] = k0
        cache[row, 1] = k1
        cache[row, 2] = k2
        cache[row, 3] = k3
        cache[row, 4] = n | (count << 8)
        for w in range(3):
            lo = np.int64(out[pos + 2 * w]) if 2 * w < count else 0
            hi = np.int64(out[pos + 2 * w + 1]) if 2 * w + 1 < count else 0
            cache[row, 5 + w] = lo | (hi << 32)
    return new_pos


@leaf_kernel
def encode_uncached(buf, start, end, M, out, pos, ids, scratch):
    """Whole-piece lookup (tiktoken's shortcut) then BPE."""
    if M[7][0]:
        whole = bytesmap_get(M[2], M[3], M[0], M[1], buf, start, end)
        if whole >= 0:
            out[pos] = whole
            return pos + 1
    return bpe_piece(buf, start, end, M, out, pos, ids, scratch)


@leaf_kernel
def bpe_piece(buf, start, end, M, out, pos, ids, scratch):
    """BPE-encode the pre-token ``buf[start:end]`` into ``out[pos:]``; returns the new pos."""
    n = end - start
    byte_ids = M[4]
    for k in range(n):
        ids[k] = byte_ids[buf[start + k]]
    m = merge_piece(ids, n, scratch[0], scratch[1], scratch[2], scratch[3], 0.0, scratch[5],
                    cached_table_pairs, (M[5], M[6], scratch[4]))
    for k in range(m):
        out[pos + k] = ids[k]
    return pos + m


@leaf_kernel
def encode_pieces(buf, seg_start, ends, n_ends, M, out, pos, ids, scratch, cache):
    """Encode consecutive pre-tokens ending at ``ends[:n_ends]``, the first starting at seg_start.
    A negative end ``~e`` marks text the pattern did not match (regex fallback): it is skipped,
    as tiktoken drops it."""
    s = seg_start
    for t in range(n_ends):
        e = ends[t]
        if e < 0:
            s = ~e
            continue
        pos = encode_piece(buf, s, e, M, out, pos, ids, scratch, cache)
        s = e
    return pos


@leaf_kernel
def find_special(buf, start, end, S):
    """Leftmost-longest special token in ``buf[start:end]``: ``(position, length, id)`` or (end, 0, -1)."""
    sp_bytes, sp_offsets, sp_ids, sp_first = S
    n_sp = sp_ids.shape[0]
    if n_sp == 0:
        return end, 0, -1
    for p in range(start, end):
        if not sp_first[buf[p]]:
            continue
        best_len = 0
        best_id = -1
        for s in range(n_sp):
            a = sp_offsets[s]
            length = sp_offsets[s + 1] - a
            if length <= best_len or p + length > end:
                continue
            ok = True
            for k in range(length):
                if buf[p + k] != sp_bytes[a + k]:
                    ok = False
                    break
            if ok:
                best_len = length
                best_id = sp_ids[s]
        if best_id >= 0:
            return p, best_len, best_id
    return end, 0, -1


@leaf_kernel
def encode_range(buf, start, end, M, P, S, out, pos, ends, ids, scratch, cache):
    """Encode ``buf[start:end]``: split at special tokens, pre-tokenize each segment, BPE each pre-token."""
    seg = start
    while True:
        sp_pos, sp_len, sp_id = find_special(buf, seg, end, S)
        n = pretokenize(buf, seg, sp_pos, P[0], P[1], ends)
        pos = encode_pieces(buf, seg, ends, n, M, out, pos, ids, scratch, cache)
        if sp_id < 0:
            return pos
        out[pos] = sp_id
        pos += 1
        seg = sp_pos + sp_len


@kernel
def _chunk_bounds(offsets, n_chunks):
    """Split documents into ``n_chunks`` runs of roughly equal bytes."""
    n_docs = offsets.shape[0] - 1
    bounds = np.empty(n_chunks + 1, np.int64)
    total = offsets[n_docs] - offsets[0]
    d = 0
    bounds[0] = 0
    for c in range(1, n_chunks):
        target = offsets[0] + (total * c) // n_chunks
        while d < n_docs and offsets[d] < target:
            d += 1
        bounds[c] = d
    bounds[n_chunks] = n_docs
    return bounds


@kernel
def _max_doc_len(offsets, lo, hi):
    m = 1
    for d in range(lo, hi):
        m = max(m, offsets[d + 1] - offsets[d])
    return m


@batch_kernel
def encode_batch(buf, offsets, M, P, S, given_ends, given_offsets, n_chunks):
    """Encode every document ``buf[offsets[d]:offsets[d+1]]``; ids of document d are written at
    ``out[offsets[d]:offsets[d] + counts[d]]``. Returns ``(out, counts)``.

    With ``given_offsets`` empty the scanner splits pre-tokens (``P``) after special tokens
    (``S``) are cut out; otherwise (regex fallback) document d's pre-tokens end at
    ``given_ends[given_offsets[d]:given_offsets[d+1]]``."""
    n_docs = offsets.shape[0] - 1
    out = np.empty(max(offsets[n_docs], 1), np.int32)
    counts = np.zeros(n_docs, np.int64)
    bounds = _chunk_bounds(offsets, n_chunks)
    scan = given_offsets.shape[0] == 0
    for c in prange(n_chunks):
        lo = bounds[c]
        hi = bounds[c + 1]
        if lo == hi:
            continue
        cap = _max_doc_len(offsets, lo, hi)
        ends = np.empty(cap, np.int64)
        ids = np.empty(cap, np.int32)
        scratch = new_piece_scratch(cap)
        cache = new_cache(cache_slots_for(offsets[hi] - offsets[lo]))
        for d in range(lo, hi):
            s = offsets[d]
            if scan:
                pos = encode_range(buf, s, offsets[d + 1], M, P, S, out, s, ends, ids, scratch, cache)
            else:
                e0 = given_offsets[d]
                pos = encode_pieces(buf, s, given_ends[e0:], given_offsets[d + 1] - e0, M, out, s, ids,
                                    scratch, cache)
            counts[d] = pos - s
    return out, counts


@kernel
def compact_ragged(out, offsets, counts):
    """Pack ids written at each document's byte offset into ``(ids, id_offsets)``."""
    n_docs = counts.shape[0]
    id_offsets = np.zeros(n_docs + 1, np.int64)
    for d in range(n_docs):
        id_offsets[d + 1] = id_offsets[d] + counts[d]
    ids = np.empty(id_offsets[n_docs], np.int32)
    for d in range(n_docs):
        src = offsets[d]
        dst = id_offsets[d]
        for k in range(counts[d]):
            ids[dst + k] = out[src + k]
    return ids, id_offsets


@kernel
def merge_table_from_ranks(piece_bytes, piece_offsets, slot_ids, slot_hashes, ranks):
    """tiktoken semantics: every split of a token into two tokens is a merge to it, ranked by
    the token's rank. Returns parallel ``(keys, values)`` for ``IntMap``."""
    n = piece_offsets.shape[0] - 1
    total = 0
    for t in range(n):
        total += max(piece_offsets[t + 1] - piece_offsets[t] - 1, 0)
    keys = np.empty(total, np.int64)
    values = np.empty(total, np.int64)
    m = 0
    for t in range(n):
        s = piece_offsets[t]
        e = piece_offsets[t + 1]
        if ranks[t] < 0:
            continue
        for k in range(s + 1, e):
            left = bytesmap_get(slot_ids, slot_hashes, piece_bytes, piece_offsets, piece_bytes, s, k)
            if left < 0 or ranks[left] < 0:
                continue
            right = bytesmap_get(slot_ids, slot_hashes, piece_bytes, piece_offsets, piece_bytes, k, e)
            if right < 0 or ranks[right] < 0:
                continue
            keys[m] = (np.int64(left) << 32) | right
            values[m] = (np.int64(ranks[t]) << 32) | t
            m += 1
    return keys[:m], values[:m]


@kernel
def new_doc_scratch(cap):
    """What ``encode_one_into`` needs for documents of up to ``cap`` bytes:
    ``(out, ends, ids, piece scratch, pre-token cache)``."""
    cap = max(cap, 1)
    return (np.empty(cap, np.int32), np.empty(cap, np.int64), np.empty(cap, np.int32),
            new_piece_scratch(cap), new_cache(cache_slots_for(cap)))


@kernel
def encode_one_into(buf, M, P, S, doc):
    """Encode one document (no thread pool) with the scratch ``doc`` (``new_doc_scratch`` of at
    least ``buf``'s size), which may be reused: its pre-token cache stays valid for the model."""
    out, ends, ids, scratch, cache = doc
    pos = encode_range(buf, 0, buf.shape[0], M, P, S, out, 0, ends, ids, scratch, cache)
    return out[:pos].copy()


@kernel
def encode_one(buf, M, P, S):
    """Encode one document with fresh scratch."""
    return encode_one_into(buf, M, P, S, new_doc_scratch(buf.shape[0]))


@kernel
def encode_one_ends(buf, ends, M):
    """Encode one segment whose pre-token ends were computed outside (regex fallback)."""
    cap = max(buf.shape[0], 1)
    out = np.empty(cap, np.int32)
    ids = np.empty(cap, np.int32)
    pos = encode_pieces(buf, 0, ends, ends.shape[0], M, out, 0, ids, new_piece_scratch(cap),
                        new_cache(cache_slots_for(cap)))
    return out[:pos].copy()
