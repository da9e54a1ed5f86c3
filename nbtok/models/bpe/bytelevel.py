"""Byte-level BPE encoding (tiktoken / GPT-2 semantics) over UTF-8 buffers.

The model's arrays travel as one tuple ``M`` (see ``ByteLevelBPE.kernel_model``):

    M = (piece_bytes, piece_offsets, slot_ids, slot_hashes,  # vocabulary + bytes -> id map
         byte_ids,                                            # int32[256]: id of each single byte
         map_keys, map_values,                                # merge table (models/bpe/merge.py)
         whole_piece,                                         # bool[1]: emit a pre-token found in
                                                              # the vocabulary as is (tiktoken)
         short_map,                                           # ShortMap of the pieces <= 16 bytes
         pair_codes, pair_values,                             # byte pairs (``byte_pair_table``)
         token_bits)                          # Bloom filter (``models/bytelevel_tables.token_filter``)

Special tokens travel as ``S = (sp_bytes, sp_offsets, sp_ids, sp_first)``; ``sp_first[b]``
is True when some special token starts with byte b.
The pre-tokenizer travels as ``P = (table, cfg)`` (pre_tokenizers/scanner.py).

Pre-token cache: a direct-mapped table ``int64[CACHE_SLOTS, 8]`` (256 KB, stays in L2)
remembering the ids of recent pre-tokens of up to 32 bytes. Natural text is Zipfian, so most
pre-tokens are answered there without touching the vocabulary map or the merge table, whose
random reads miss the cache. A row (one cache line) holds the pre-token's bytes packed into
four words and up to 6 ids; it is exact (the whole key is compared), bounded, and private to
one kernel call, so there is nothing to share between threads.

Cuts: only 2693 of the 65536 byte pairs occur inside some GPT-2 token. Between two bytes
that no token holds side by side no merge can ever happen, so BPE of a pre-token is the
BPE of its parts between such cuts, and a pre-token with a cut is no token (no whole-piece
lookup). Base64 and CJK text without spaces fall apart into parts of one to three bytes
(``encode_cut``); parts of 1-2 bytes are read from the byte-pair table, parts of up to
16 bytes merge in ``encode_small_part``, longer ones in the merge loop of models/bpe/merge.py.
tiktoken's whole-piece lookup (a pre-token that is a token is that token): a pre-token of up to
16 bytes that the cache does not have, has no cut and may be a token by a Bloom filter of the
vocabulary is looked up before BPE (most such English pre-tokens are tokens, and one probe
replaces BPE's lookups in the merge table); a longer one only after BPE, and only when BPE
left it in one part of more than one token.

One document: ``encode_doc`` is the short-text kernel, the pre-tokenizer and the pre-token
loop for pre-tokens of up to 16 bytes (and longer ones the cache has); at any other it stops
and returns -1, and ``encode_long_doc`` (the same with ``encode_long_piece`` and the merge
loop) encodes the document. A first ``encode("Hello world")`` so compiles no merge loop, no
heap and no run queue (``bpe_piece`` took 5.3 s to compile with its callees, and again inside
each caller); with the NumPy table builds the README's first command from empty caches takes
0.44x the CPU time it took (docs/benchmarks.md, "First run and short calls").
``ByteLevelBPE.encode`` keeps ``encode_long_doc`` once a text needed it.

A batch is one flat buffer + offsets. ``encode_batch`` splits it into chunks dealt
round-robin to one worker per thread, each with its own scratch, and writes every
document's ids at its byte offset in an output the size of the input (a document never has
more tokens than bytes); ``kernels.ragged.compact_ragged`` then packs them.
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, inline_kernel, kernel, leaf_kernel
from .merge import (LONG_PIECE, LOW32, SMALL_PIECE, cached_table_pairs, merge_piece, merge_scan, new_pair_cache,
                    new_scratch)
from ...kernels.hashmap import SHORT_KEY_BYTES, bytesmap_get, pack_word, short_key_hash, shortmap_get
from ...pre_tokenizers.scanner import pretokenize
from ...kernels.ragged import chunk_bounds, worker_bytes
from ...kernels.runqueue import runqueue_over


CACHE_SLOTS = 4096
CACHE_KEY_BYTES = 32
CACHE_IDS = 6

# Scratch of long documents. Up to LONG_TEXT bytes a document's scratch is sized by its length
# (about 56 bytes per byte, most never touched). A longer one pre-tokenizes in windows of
# ENDS_WINDOW pre-tokens (``encode_range``) and sizes its merge scratch by its longest
# pre-token (``longest_pretoken``, one extra scanner pass), so that what it reserves is the
# output (4 bytes per byte) plus a bounded rest: a 1 GB string used to ask for 24 GiB at once.
LONG_TEXT = 1 << 21
ENDS_WINDOW = 1 << 16


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
def cache_slot(k0, k1, k2, k3, n, mask):
    h = (np.uint64(k0) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(k1) * np.uint64(0xC2B2AE3D27D4EB4F)
         + np.uint64(k2) * np.uint64(0x165667B19E3779F9) + np.uint64(k3) * np.uint64(0x27D4EB2F165667C5)
         + np.uint64(n))
    return np.int64(h >> np.uint64(32)) & mask


@inline_kernel
def encode_miss(buf, start, end, k0, k1, row, M, out, pos, ids, scratch, cache):
    """Encode a pre-token of at most 16 bytes the cache did not have (packed key k0, k1, cache
    row ``row``) and remember it there. Inlined: as a call of its own the first ``encode``
    compiles 0.75 s less (Numba's inlining copies the inlined code once more at each level),
    but a megabyte of English encodes 6-8% slower (a call passing the model's tuples per miss)."""
    n = end - start
    cut = first_cut(buf, start + 1, end, M[9])
    whole = -1
    if M[7][0] and cut == end and maybe_token(M[11], k0, k1, n):
        # tiktoken: a pre-token that is a token is that token. Most short English pre-tokens
        # the cache has not seen are, and one probe replaces BPE's lookups in the merge table
        whole = shortmap_get(M[8], k0, k1, n)
    if whole >= 0:
        out[pos] = whole
        new_pos = pos + 1
    else:
        new_pos = encode_short_cut(buf, start, end, cut, M, out, pos, ids, scratch)
    remember(cache, row, k0, k1, 0, 0, n, out, pos, new_pos)
    return new_pos


@inline_kernel
def remember(cache, row, k0, k1, k2, k3, n, out, pos, new_pos):
    """Keep the ids ``out[pos:new_pos]`` of the pre-token with packed key k0..k3 (``n`` bytes)
    in cache row ``row``, if they fit in it."""
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


@leaf_kernel
def encode_long_piece(buf, start, end, M, out, pos, ids, scratch, cache):
    """Encode a pre-token longer than 16 bytes that the cache did not have (``encode_uncached``),
    and remember it there if it has at most 32 bytes."""
    new_pos = encode_uncached(buf, start, end, M, out, pos, ids, scratch)
    n = end - start
    if n <= CACHE_KEY_BYTES:
        k0 = pack_word(buf, start, start + 8)
        k1 = pack_word(buf, start + 8, start + 16)
        k2 = pack_word(buf, start + 16, min(end, start + 24))
        k3 = pack_word(buf, start + 24, end)
        remember(cache, cache_slot(k0, k1, k2, k3, n, cache.shape[0] - 1), k0, k1, k2, k3, n, out, pos, new_pos)
    return new_pos


@inline_kernel
def encode_uncached(buf, start, end, M, out, pos, ids, scratch):
    """BPE, then tiktoken's whole-piece lookup where it can matter: a pre-token BPE leaves in
    one part (no cut, see ``encode_cut``) and more than one token may be a token BPE does
    not reach. For pre-tokens longer than 16 bytes (shorter ones: ``encode_miss``)."""
    cut = first_cut(buf, start + 1, end, M[9])
    new_pos, parts = encode_cut(buf, start, end, cut, M, out, pos, ids, scratch)
    if parts == 1 and new_pos - pos > 1 and M[7][0]:
        whole = bytesmap_get(M[2], M[3], M[0], M[1], buf, start, end)
        if whole >= 0:
            out[pos] = whole
            return pos + 1
    return new_pos


@leaf_kernel
def maybe_token(bits, k0, k1, n):
    """False when no token of 2..16 bytes has the packed key (k0, k1, n) (``bytelevel_tables.token_filter``)."""
    h = short_key_hash(k0, k1, n)
    return (bits[(h >> 6) & (bits.shape[0] - 1)] >> np.uint64(h & 63)) & np.uint64(1) != 0


@inline_kernel
def first_cut(buf, start, end, codes):
    """The first cut (see ``encode_cut``) p in ``start..end - 1``, or ``end``."""
    for p in range(start, end):
        if codes[(np.int64(buf[p - 1]) << 8) | np.int64(buf[p])] == 0:
            return p
    return end


@inline_kernel
def encode_cut(buf, start, end, cut, M, out, pos, ids, scratch):
    """BPE of ``buf[start:end]`` (no whole-piece lookup), part by part: a cut is a position p
    where no token contains the bytes ``buf[p - 1] buf[p]`` (``M[9]`` code 0). No merge ever
    joins symbols across a cut (the merged token would contain those two bytes), so BPE of
    the whole is the BPE of the parts, and a pre-token with a cut is no token. ``cut`` is the
    first cut (``first_cut``), ``end`` if none. Returns ``(new pos, number of parts)``."""
    s = start
    parts = 0
    while s < end:
        # one call site: encode_part is inlined, and a second copy doubled this kernel's compile time
        pos = encode_part(buf, s, cut, M, out, pos, ids, scratch)
        parts += 1
        s = cut
        cut = first_cut(buf, s + 1, end, M[9])
    return pos, parts


@inline_kernel
def encode_short_cut(buf, start, end, cut, M, out, pos, ids, scratch):
    """``encode_cut`` of a pre-token of at most ``SMALL_PIECE`` bytes (parts by
    ``encode_small_part``); returns the new pos."""
    s = start
    while s < end:
        pos = encode_small_part(buf, s, cut, M, out, pos, ids, scratch)
        s = cut
        cut = first_cut(buf, s + 1, end, M[9])
    return pos


@inline_kernel
def encode_part(buf, start, end, M, out, pos, ids, scratch):
    """BPE of ``buf[start:end]``: up to ``SMALL_PIECE`` bytes by ``encode_small_part``, longer
    ones by the merge loop (models/bpe/merge.py)."""
    if end - start <= SMALL_PIECE:
        return encode_small_part(buf, start, end, M, out, pos, ids, scratch)
    return bpe_piece(buf, start, end, M, out, pos, ids, scratch)


@inline_kernel
def encode_small_part(buf, start, end, M, out, pos, ids, scratch):
    """BPE of ``buf[start:end]`` (at most ``SMALL_PIECE`` bytes): one and two bytes from the
    byte-pair table, longer ones by ``merge_small`` of models/bpe/merge.py with its first pass
    read from the byte-pair table instead of the merge table. (That pass was a function of its
    own, ``merge_part``: one level less of Numba inlining, which copies the inlined code at
    each level, saves ~0.2 s of a first run's compilation.)"""
    n = end - start
    byte_ids = M[4]
    if n == 1:
        out[pos] = byte_ids[buf[start]]
        return pos + 1
    if n == 2:
        code = M[9][(np.int64(buf[start]) << 8) | np.int64(buf[start + 1])]
        if code >= 2:
            out[pos] = np.int32(M[10][code - 2] & LOW32)
            return pos + 1
        out[pos] = byte_ids[buf[start]]
        out[pos + 1] = byte_ids[buf[start + 1]]
        return pos + 2
    codes = M[9]
    pair_values = M[10]
    pair_at = scratch[3]
    for k in range(n):
        ids[k] = byte_ids[buf[start + k]]
    for i in range(n - 1):
        code = codes[(np.int64(buf[start + i]) << 8) | np.int64(buf[start + i + 1])]
        pair_at[i] = pair_values[code - 2] if code >= 2 else np.int64(-1)
    m = merge_scan(ids, n, pair_at, cached_table_pairs, (M[5], M[6], scratch[4]))
    for k in range(m):
        out[pos + k] = ids[k]
    return pos + m


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
    as tiktoken drops it. ``encode_short_pieces``, and ``encode_long_piece`` where it stops."""
    s = seg_start
    t = 0
    while True:
        done, s, pos = encode_short_pieces(buf, s, ends[t:], n_ends - t, M, out, pos, ids, scratch, cache)
        t += done
        if t == n_ends:
            return pos
        pos = encode_long_piece(buf, s, ends[t], M, out, pos, ids, scratch, cache)
        s = ends[t]
        t += 1


@inline_kernel
def encode_short_pieces(buf, seg_start, ends, n_ends, M, out, pos, ids, scratch, cache):
    """``encode_pieces`` up to the first pre-token longer than 16 bytes that the pre-token cache
    does not have: ``(t, s, pos)``, the ids of the pre-tokens before ``ends[t]`` written to
    ``out[:pos]``, pre-token t (starting at s) not encoded (t == n_ends when all are).

    The short-text kernel ``encode_doc`` is this and the pre-tokenizer: no code for long
    pre-tokens (the merge loop with its heaps; see the module docstring)."""
    s = seg_start
    mask = cache.shape[0] - 1
    byte_ids = M[4]
    codes = M[9]
    pair_values = M[10]
    for t in range(n_ends):
        e = ends[t]
        if e < 0:
            s = ~e
            continue
        n = e - s
        if n == 1:
            out[pos] = byte_ids[buf[s]]
            pos += 1
            s = e
            continue
        if n == 2:
            # the byte-pair table has the answer unless a token contains the two bytes but
            # their single-byte tokens do not merge (a token BPE may not reach: code 1)
            code = codes[(np.int64(buf[s]) << 8) | np.int64(buf[s + 1])]
            if code >= 2:
                out[pos] = np.int32(pair_values[code - 2] & LOW32)
                pos += 1
                s = e
                continue
            if code == 0:
                out[pos] = byte_ids[buf[s]]
                out[pos + 1] = byte_ids[buf[s + 1]]
                pos += 2
                s = e
                continue
        if n > CACHE_KEY_BYTES:
            return t, s, pos
        # the pre-token cache probe, here in the loop: a call passing the model and scratch
        # tuples costs more than a hit (~4x on one-byte pieces)
        k0 = pack_word(buf, s, min(e, s + 8))
        k1 = pack_word(buf, s + 8, min(e, s + 16))
        k2 = pack_word(buf, s + 16, min(e, s + 24))
        k3 = pack_word(buf, s + 24, e)
        row = cache_slot(k0, k1, k2, k3, n, mask)
        meta = cache[row, 4]
        if (meta & 255) == n and cache[row, 0] == k0 and cache[row, 1] == k1 and cache[row, 2] == k2 and cache[row, 3] == k3:
            count = meta >> 8
            for k in range(count):
                word = cache[row, 5 + (k >> 1)]
                out[pos + k] = (word >> 32) if k & 1 else (word & 0xFFFFFFFF)
            pos += count
        elif n > SHORT_KEY_BYTES:
            return t, s, pos
        else:
            pos = encode_miss(buf, s, e, k0, k1, row, M, out, pos, ids, scratch, cache)
        s = e
    return n_ends, s, pos


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


@inline_kernel
def encode_range(buf, start, end, M, P, S, out, pos, ends, ids, scratch, cache):
    """Encode ``buf[start:end]``: split at special tokens, pre-tokenize each segment, BPE each
    pre-token. ``ends`` may have room for fewer pre-tokens than a segment has: the scanner
    stops when it is full and goes on from the last end (same pieces, see pre_tokenizers/scanner.py);
    ``ids`` and ``scratch`` must hold the longest pre-token (``longest_pretoken``)."""
    seg = start
    while True:
        sp_pos, sp_len, sp_id = find_special(buf, seg, end, S)
        s = seg
        while s < sp_pos:
            n = pretokenize(buf, s, sp_pos, P[0], P[1], ends)
            pos = encode_pieces(buf, s, ends, n, M, out, pos, ids, scratch, cache)
            s = ends[n - 1]
        if sp_id < 0:
            return pos
        out[pos] = sp_id
        pos += 1
        seg = sp_pos + sp_len


@leaf_kernel
def longest_pretoken(buf, start, end, P, S, ends):
    """The length in bytes of the longest pre-token of ``buf[start:end]`` as ``encode_range``
    splits it (at special tokens ``S``, by the scanner ``P``), with ``ends`` (any size) as room."""
    longest = 0
    seg = start
    while True:
        sp_pos, sp_len, sp_id = find_special(buf, seg, end, S)
        s = seg
        while s < sp_pos:
            n = pretokenize(buf, s, sp_pos, P[0], P[1], ends)
            for t in range(n):
                longest = max(longest, ends[t] - s)
                s = ends[t]
        if sp_id < 0:
            return longest
        seg = sp_pos + sp_len


@kernel
def worker_scratch_caps(buf, offsets, bounds, w, n_workers, P, S, given_ends, given_offsets):
    """``(pre-token ends room, merge scratch room)`` for worker ``w`` of ``encode_batch``: its
    longest document's bytes, unless that is over ``LONG_TEXT``: then a window of ends and
    room for the longest pre-token of its documents (their length for short ones)."""
    cap, nbytes = worker_bytes(offsets, bounds, w, n_workers)
    if cap <= LONG_TEXT:
        return cap, cap
    window = np.empty(ENDS_WINDOW, np.int64)
    longest = 1
    for c in range(w, bounds.shape[0] - 1, n_workers):
        for d in range(bounds[c], bounds[c + 1]):
            s = offsets[d]
            e = offsets[d + 1]
            if e - s <= LONG_TEXT:
                longest = max(longest, e - s)
            elif given_offsets.shape[0] == 0:
                longest = max(longest, longest_pretoken(buf, s, e, P, S, window))
            else:
                p = s
                for t in range(given_offsets[d], given_offsets[d + 1]):
                    q = given_ends[t]
                    if q < 0:
                        p = ~q
                        continue
                    longest = max(longest, q - p)
                    p = q
    return ENDS_WINDOW, longest


@batch_kernel
def encode_batch(buf, offsets, M, P, S, given_ends, given_offsets, n_chunks, n_workers):
    """Encode every document ``buf[offsets[d]:offsets[d+1]]``; ids of document d are written at
    ``out[offsets[d]:offsets[d] + counts[d]]``. Returns ``(out, counts)``.

    The documents are cut into ``n_chunks`` runs of about equal bytes, dealt round-robin to
    ``n_workers`` workers (``prange``, one per thread): worker w takes chunks w, w + n_workers,
    ... with one scratch and one pre-token cache, which stays warm from chunk to chunk. Dealing
    small chunks round-robin balances the threads when the cost per byte varies along the
    batch (a batch of several languages, one after the other).

    With ``given_offsets`` empty the scanner splits pre-tokens (``P``) after special tokens
    (``S``) are cut out; otherwise (regex fallback) document d's pre-tokens end at
    ``given_ends[given_offsets[d]:given_offsets[d+1]]``."""
    n_docs = offsets.shape[0] - 1
    out = np.empty(max(offsets[n_docs], 1), np.int32)
    counts = np.zeros(n_docs, np.int64)
    bounds = chunk_bounds(offsets, n_chunks)
    scan = given_offsets.shape[0] == 0
    done = np.zeros(n_workers, np.bool_)
    for w in prange(n_workers):
        nbytes = worker_bytes(offsets, bounds, w, n_workers)[1]
        if nbytes == 0:
            done[w] = True
            continue
        ends_cap, piece_cap = worker_scratch_caps(buf, offsets, bounds, w, n_workers, P, S, given_ends,
                                                  given_offsets)
        ends = np.empty(ends_cap, np.int64)
        ids = np.empty(piece_cap, np.int32)
        scratch = new_piece_scratch(piece_cap)
        cache = new_cache(cache_slots_for(nbytes))
        for c in range(w, n_chunks, n_workers):
            for d in range(bounds[c], bounds[c + 1]):
                s = offsets[d]
                if scan:
                    pos = encode_range(buf, s, offsets[d + 1], M, P, S, out, s, ends, ids, scratch, cache)
                else:
                    e0 = given_offsets[d]
                    pos = encode_pieces(buf, s, given_ends[e0:], given_offsets[d + 1] - e0, M, out, s, ids,
                                        scratch, cache)
                counts[d] = pos - s
        done[w] = True
    if not done.all():
        # an allocation failed inside the prange loop: that worker stopped, and the error is
        # lost (or reaches Python as a SystemError); raise it here, outside the loop
        raise MemoryError("encode_batch: not enough memory for a worker's scratch")
    return out, counts


@kernel
def new_doc_scratch(cap, piece_cap, ends_cap):
    """What ``encode_doc`` needs for documents of up to ``cap`` bytes whose pre-tokens are at
    most ``piece_cap`` bytes long, pre-tokenized ``ends_cap`` at a time:
    ``(out, ends, ids, piece scratch, pre-token cache)``."""
    cap = max(cap, 1)
    piece_cap = max(piece_cap, 1)
    return (np.empty(cap, np.int32), np.empty(max(ends_cap, 1), np.int64), np.empty(piece_cap, np.int32),
            new_piece_scratch(piece_cap), new_cache(cache_slots_for(cap)))


@kernel
def doc_scratch_caps(buf, P, S):
    """``(out, piece, ends)`` sizes of ``new_doc_scratch`` for encoding ``buf``: all its length
    up to ``LONG_TEXT`` bytes, else room for its longest pre-token and a window of ends."""
    n = buf.shape[0]
    if n <= LONG_TEXT:
        return n, n, n
    window = np.empty(ENDS_WINDOW, np.int64)
    return n, max(longest_pretoken(buf, 0, n, P, S, window), SMALL_PIECE), ENDS_WINDOW


@leaf_kernel
def encode_doc(buf, M, P, S, doc):
    """Encode one document (no thread pool) into ``doc[0]``; returns the number of ids, or -1
    when the document has a pre-token longer than 16 bytes that the pre-token cache does not
    have: then ``encode_long_doc`` encodes it. ``doc`` is scratch from ``new_doc_scratch`` with
    at least the sizes ``doc_scratch_caps`` gives for ``buf``, and may be reused: its pre-token
    cache stays valid for the model. Pre-token ends are found a window of ``doc[1]`` at a time,
    as in ``encode_range``.

    ``encode_range`` with ``encode_short_pieces``, the kernel of a first ``encode("Hello
    world")``: without the code for long pre-tokens it compiles in about half the time.
    A leaf kernel, so that Python calls it without reference counting: unboxing the ~30 arrays
    of these tuples for a reference-counted kernel allocates a record for each, 2 us of the
    2.5 us an ``encode("hi")`` took."""
    out, ends, ids, scratch, cache = doc
    end = buf.shape[0]
    seg = 0
    pos = 0
    while True:
        sp_pos, sp_len, sp_id = find_special(buf, seg, end, S)
        s = seg
        while s < sp_pos:
            n = pretokenize(buf, s, sp_pos, P[0], P[1], ends)
            done, _, pos = encode_short_pieces(buf, s, ends, n, M, out, pos, ids, scratch, cache)
            if done < n:
                return -1
            s = ends[n - 1]
        if sp_id < 0:
            return pos
        out[pos] = sp_id
        pos += 1
        seg = sp_pos + sp_len


@leaf_kernel
def encode_long_doc(buf, M, P, S, doc):
    """``encode_doc`` for any document (long pre-tokens included); returns the number of ids."""
    out, ends, ids, scratch, cache = doc
    return encode_range(buf, 0, buf.shape[0], M, P, S, out, 0, ends, ids, scratch, cache)


@kernel
def encode_one(buf, M, P, S):
    """Encode one document with fresh scratch."""
    out_cap, piece_cap, ends_cap = doc_scratch_caps(buf, P, S)
    doc = new_doc_scratch(out_cap, piece_cap, ends_cap)
    return doc[0][:encode_long_doc(buf, M, P, S, doc)].copy()


@kernel
def encode_one_ends(buf, ends, M):
    """Encode one segment whose pre-token ends were computed outside (regex fallback)."""
    cap = max(buf.shape[0], 1)
    longest = SMALL_PIECE
    p = 0
    for e in ends:  # the merge scratch holds the longest pre-token (negative: skipped text)
        if e < 0:
            p = ~e
        else:
            longest = max(longest, e - p)
            p = e
    out = np.empty(cap, np.int32)
    ids = np.empty(longest, np.int32)
    pos = encode_pieces(buf, 0, ends, ends.shape[0], M, out, 0, ids, new_piece_scratch(longest),
                        new_cache(cache_slots_for(cap)))
    return out[:pos].copy()
