"""The BPE merge loop: priority queue + doubly linked list, lazy invalidation, O(N log N).

One kernel serves every BPE flavour. The model supplies a merge table (``IntMap``):

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
"""
import numpy as np

from .._jit import kernel
from .hashmap import intmap_get
from .heap import heap_pop, heap_push, heapify

LOW32 = 0xFFFFFFFF


@kernel
def pair_value(map_keys, map_values, left, right):
    return intmap_get(map_keys, map_values, (np.int64(left) << 32) | np.int64(right), np.int64(-1))


@kernel
def new_scratch(n):
    """Scratch for ``bpe_merge`` on up to n symbols: (heap, prev, next, pair_at)."""
    return (np.empty(3 * n + 1, np.int64), np.empty(n + 1, np.int32),
            np.empty(n + 1, np.int32), np.empty(n + 1, np.int64))


@kernel
def bpe_merge(ids, n, map_keys, map_values, heap, prev, nxt, pair_at, dropout):
    """Merge the symbols ``ids[:n]`` in place; returns m, with the result in ``ids[:m]``.

    ``dropout`` in [0, 1): each valid merge popped from the queue is skipped with that
    probability and not re-queued (sentencepiece's BPE-dropout). Pass 0.0 for encoding.
    """
    if n < 2:
        return n
    size = 0
    for i in range(n):
        prev[i] = i - 1
        nxt[i] = i + 1
    for i in range(n - 1):
        v = pair_value(map_keys, map_values, ids[i], ids[i + 1])
        pair_at[i] = v
        if v >= 0:
            heap[size] = ((v >> 32) << 32) | i
            size += 1
    pair_at[n - 1] = -1
    heapify(heap, size)
    while size > 0:
        key, size = heap_pop(heap, size)
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
            pv = pair_value(map_keys, map_values, ids[p], ids[i])
            pair_at[p] = pv
            if pv >= 0:
                size = heap_push(heap, size, ((pv >> 32) << 32) | p)
        if k < n:
            nv = pair_value(map_keys, map_values, ids[i], ids[k])
            pair_at[i] = nv
            if nv >= 0:
                size = heap_push(heap, size, ((nv >> 32) << 32) | i)
        else:
            pair_at[i] = -1
    m = 0
    i = 0
    while i < n:
        ids[m] = ids[i]
        m += 1
        i = nxt[i]
    return m
