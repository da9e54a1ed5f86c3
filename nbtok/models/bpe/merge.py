"""The BPE merge loop: priority queue + doubly linked list, lazy invalidation, O(N log N).

One kernel serves every BPE flavour. A merge table (``IntMap``) maps pairs to merges:

    key   = left_id << 32 | right_id
    value = rank << 32 | merged_id          (lower rank merges first)

* byte-level BPE (tiktoken / GPT-2): rank = the merged token's rank.
* SentencePiece BPE: rank = dense rank of the merged piece's score, highest score first,
  so equal scores share a rank and the position breaks the tie.

The heap key is ``rank << 32 | position`` so ties go to the leftmost pair, as in tiktoken,
HF tokenizers and sentencepiece. Merging writes the result into the left node and unlinks
the right one. ``pair_at[i]`` holds the merge-table value of the pair starting at node i
(or -1); a popped heap entry whose rank no longer matches ``pair_at`` is stale and dropped.
An entry whose rank does match describes exactly the merge a fresh entry would, so taking
it is correct even after the node changed.

The queue depends on the piece's length; all three pop in the same (rank, position) order:
pieces of up to ``SMALL_PIECE`` symbols scan their pairs (``merge_small``), longer ones use
the array heap, and from ``LONG_PIECE`` symbols on a run queue (``kernels/runqueue.py``),
whose heap holds only runs of ascending positions and so stays in cache on a megabyte-long piece.

The pair lookup is a function argument (see "pair lookups" below), so the one loop serves
byte-level, HF and SentencePiece BPE alike.
"""
import numpy as np

from ..._jit import inline_kernel, kernel, leaf_kernel
from ...kernels.hashmap import intmap_get
from ...kernels.heap import heap_pop, heap_push, heapify
from ...kernels.runqueue import rq_capacity, runqueue_over, rq_clear, rq_pop, rq_push

LOW32 = 0xFFFFFFFF


@leaf_kernel
def pair_value(map_keys, map_values, left, right):
    return intmap_get(map_keys, map_values, (np.int64(left) << 32) | np.int64(right), np.int64(-1))


# ---------------------------------------------------------------- pair lookups
# The merge loop takes its pair lookup as a function argument ``pairs(P, left, right)`` ->
# merge value (rank << 32 | merged id) or -1, with the lookup's own arrays in the tuple ``P``.
# Numba compiles one loop per lookup function, each calling its lookup directly. All flavours
# look pairs up in a merge table (``table_pairs``), byte-level BPE behind a front cache
# (``cached_table_pairs``), SentencePiece BPE's word loop behind a bit set of the merges
# (``filtered_table_pairs``). The loops that take ``pairs`` are ``@inline_kernel``:
# a function value passed on through a call that is not inlined leaves the Python function
# object's address in the compiled code, which Numba then refuses to cache on disk.

@leaf_kernel
def table_pairs(P, left, right):
    """P = (map_keys, map_values): the merge table."""
    return pair_value(P[0], P[1], left, right)


PAIR_CACHE_SLOTS = 4096


@kernel
def new_pair_cache(slots=PAIR_CACHE_SLOTS):
    """A direct-mapped front cache for merge-table lookups, ``int64[slots, 2]`` (64 KB by
    default; ``slots`` a power of two): rows of (key, value), misses included. Byte pairs are
    Zipfian, so most lookups of a long piece are answered here instead of in the
    multi-megabyte merge table. Private to one kernel call."""
    cache = np.empty((slots, 2), np.int64)
    cache[:, 0] = -1
    return cache


@leaf_kernel
def cached_table_pairs(P, left, right):
    """P = (map_keys, map_values, cache): the merge table behind a ``new_pair_cache``."""
    cache = P[2]
    key = (np.int64(left) << 32) | np.int64(right)
    row = np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & (cache.shape[0] - 1)
    if cache[row, 0] == key:
        return cache[row, 1]
    v = intmap_get(P[0], P[1], key, np.int64(-1))
    cache[row, 0] = key
    cache[row, 1] = v
    return v


@inline_kernel
def _filter_bit(key, nbits):
    return np.int64((np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & (nbits - 1)


@kernel
def new_pair_filter(map_keys):
    """Bit set (``uint64[]``, a power of two of at least 2^10 words) over the hashed keys of a
    merge table: about 16 bits a merge, so a pair that is no merge finds its bit clear
    (most of them, see ``filtered_table_pairs``) in a set that stays in cache."""
    n = 0
    for i in range(map_keys.shape[0]):
        if map_keys[i] != -1:
            n += 1
    nbits = 1 << 16
    while nbits < 16 * n and nbits < (1 << 24):
        nbits *= 2
    bits = np.zeros(nbits >> 6, np.uint64)
    for i in range(map_keys.shape[0]):
        if map_keys[i] != -1:
            h = _filter_bit(map_keys[i], nbits)
            bits[h >> 6] |= np.uint64(1) << np.uint64(h & 63)
    return bits


@leaf_kernel
def filtered_table_pairs(P, left, right):
    """P = (map_keys, map_values, filter): the merge table behind a ``new_pair_filter``. Most
    adjacent symbols of a word are no merge; the filter answers them without a probe of the
    (multi-megabyte) table."""
    bits = P[2]
    key = (np.int64(left) << 32) | np.int64(right)
    h = _filter_bit(key, bits.shape[0] << 6)
    if (bits[h >> 6] >> np.uint64(h & 63)) & np.uint64(1) == 0:
        return np.int64(-1)
    return intmap_get(P[0], P[1], key, np.int64(-1))


# ---------------------------------------------------------------- the merge loop
LONG_PIECE = 256  # from this many symbols on, the queue is a ``RunQueue`` (kernels/runqueue.py)
SMALL_PIECE = 16  # up to this many symbols, a scan for the best pair beats any queue


@kernel
def new_scratch(n):
    """Scratch for merging up to n symbols: (heap, prev, next, pair_at)."""
    return (np.empty(3 * n + 1, np.int64), np.empty(n + 1, np.int32),
            np.empty(n + 1, np.int32), np.empty(n + 1, np.int64))


@kernel
def bpe_merge(ids, n, map_keys, map_values, heap, prev, nxt, pair_at, dropout):
    """Merge the symbols ``ids[:n]`` in place through the merge table; returns m, with the
    result in ``ids[:m]``. Always through ``merge_loop``, so ``nxt`` is left as the linked list
    of the merged symbols (``nxt[i]`` = the original position after the symbol starting at i),
    from which ``models/text_units.py`` reads each token's span.

    ``dropout`` in [0, 1): each valid merge popped from the queue is skipped with that
    probability and not re-queued (sentencepiece's BPE-dropout). Pass 0.0 for encoding.
    """
    P = (map_keys, map_values)
    if n >= LONG_PIECE:
        return merge_loop(ids, n, heap, prev, nxt, pair_at, dropout, runqueue_over(heap), table_pairs, P)
    return merge_loop(ids, n, heap, prev, nxt, pair_at, dropout, None, table_pairs, P)


@inline_kernel
def merge_piece(ids, n, heap, prev, nxt, pair_at, dropout, queue, pairs, P):
    """Merge ``ids[:n]`` in place, pairs looked up by ``pairs(P, left, right)``; returns the new
    count. Picks the queue by length: a scan (``merge_small``), the array ``heap``, or from
    ``LONG_PIECE`` symbols on the run ``queue`` (``new_runqueue``) if it has room. All three
    merge in the same order, so the results are identical."""
    if n <= SMALL_PIECE and dropout == 0.0:
        return merge_small(ids, n, pair_at, pairs, P)
    if n >= LONG_PIECE and rq_capacity(queue) >= 3 * n + 1:
        rq_clear(queue)
        return merge_loop(ids, n, heap, prev, nxt, pair_at, dropout, queue, pairs, P)
    return merge_loop(ids, n, heap, prev, nxt, pair_at, dropout, None, pairs, P)


@inline_kernel
def merge_small(ids, n, pair_at, pairs, P):
    """The merge loop for short pieces, without a queue: scan the pairs for the lowest rank
    (the leftmost on ties), merge, shift the tail left, look up the two new pairs. O(n^2)
    with a tiny constant; pops in the same order as the queue, so the result is identical."""
    if n < 2:
        return n
    for i in range(n - 1):
        pair_at[i] = pairs(P, ids[i], ids[i + 1])
    return merge_scan(ids, n, pair_at, pairs, P)


@inline_kernel
def merge_scan(ids, m, pair_at, pairs, P):
    """``merge_small`` after its first pass: ``pair_at[:m-1]`` holds the values of the pairs."""
    while m > 1:
        best = np.int64(1) << 62
        at = -1
        for i in range(m - 1):
            v = pair_at[i]
            if v >= 0 and (v >> 32) < best:
                best = v >> 32
                at = i
        if at < 0:
            break
        ids[at] = np.int32(pair_at[at] & LOW32)
        for i in range(at + 1, m - 1):
            ids[i] = ids[i + 1]
            pair_at[i] = pair_at[i + 1]
        m -= 1
        if at > 0:
            pair_at[at - 1] = pairs(P, ids[at - 1], ids[at])
        if at < m - 1:
            pair_at[at] = pairs(P, ids[at], ids[at + 1])
    return m


@leaf_kernel
def _push(heap, size, queue, rank, pos):
    if queue is None:
        return heap_push(heap, size, (rank << 32) | pos)
    rq_push(queue, rank, pos)
    return size + 1


@leaf_kernel
def _pop(heap, size, queue):
    if queue is None:
        return heap_pop(heap, size)
    return rq_pop(queue), size - 1


@inline_kernel
def merge_loop(ids, n, heap, prev, nxt, pair_at, dropout, queue, pairs, P):
    """The merge loop over ``heap`` (``queue`` is None: an array heap, heapified after the first
    pass) or over a ``RunQueue`` (for long pieces); both pop in the same order."""
    if n < 2:
        return n
    size = 0
    for i in range(n):
        prev[i] = i - 1
        nxt[i] = i + 1
    for i in range(n - 1):
        v = pairs(P, ids[i], ids[i + 1])
        pair_at[i] = v
        if v >= 0:
            if queue is None:
                heap[size] = ((v >> 32) << 32) | i
                size += 1
            else:
                size = _push(heap, size, queue, v >> 32, i)
    pair_at[n - 1] = -1
    if queue is None:
        heapify(heap, size)
    while size > 0:
        key, size = _pop(heap, size, queue)
        i = key & LOW32
        v = pair_at[i]
        if v < 0 or (v >> 32) != (key >> 32):
            continue
        if dropout > 0.0 and np.random.random() < dropout:
            continue
        j = nxt[i]
        k = nxt[j]
        ids[i] = np.int32(v & LOW32)
        nxt[i] = k
        if k < n:
            prev[k] = i
        pair_at[j] = -1
        p = prev[i]
        if p >= 0:
            pv = pairs(P, ids[p], ids[i])
            pair_at[p] = pv
            if pv >= 0:
                size = _push(heap, size, queue, pv >> 32, p)
        if k < n:
            nv = pairs(P, ids[i], ids[k])
            pair_at[i] = nv
            if nv >= 0:
                size = _push(heap, size, queue, nv >> 32, i)
        else:
            pair_at[i] = -1
    m = 0
    i = 0
    while i < n:
        ids[m] = ids[i]
        m += 1
        i = nxt[i]
    return m
