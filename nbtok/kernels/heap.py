"""4-ary min-heap of ``int64`` keys in a flat array.

Callers pack their ordering into the key (for BPE: ``rank << 32 | position``), so one
integer comparison orders entries. Entries are never updated in place: a caller pushes a
new entry and drops stale ones when they are popped (lazy invalidation).
Four children per node halve the depth of a binary heap and keep the children of a node in
one cache line (4 x 8 bytes), which is what matters once the heap outgrows the caches (a 1 MB
piece without spaces puts a million entries in it).
The heap array is allocated by the caller with room for every push it can make.
"""
from .._jit import kernel, leaf_kernel

ARITY = 4


@leaf_kernel
def heap_push(heap, size, key):
    """Insert ``key``; returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) >> 2
        pk = heap[parent]
        if pk <= key:
            break
        heap[i] = pk
        i = parent
    heap[i] = key
    return size + 1


@leaf_kernel
def _sift_down(heap, size, i, key):
    """Place ``key`` at or below node ``i``."""
    while True:
        first = 4 * i + 1
        if first >= size:
            break
        best = first
        bk = heap[first]
        last = min(first + 4, size)
        for c in range(first + 1, last):
            ck = heap[c]
            if ck < bk:
                bk = ck
                best = c
        if key <= bk:
            break
        heap[i] = bk
        i = best
    heap[i] = key


@leaf_kernel
def heap_pop(heap, size):
    """Remove the smallest key; returns ``(key, new_size)``. ``size`` must be > 0."""
    top = heap[0]
    size -= 1
    if size > 0:
        _sift_down(heap, size, 0, heap[size])
    return top, size


@kernel
def heapify(heap, size):
    """Turn ``heap[:size]`` into a heap in O(size)."""
    for i in range((size - 2) // 4, -1, -1):
        _sift_down(heap, size, i, heap[i])
