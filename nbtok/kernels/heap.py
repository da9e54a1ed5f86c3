"""Binary min-heap of ``int64`` keys in a flat array.

Callers pack their ordering into the key (for BPE: ``rank << 32 | position``), so one
integer comparison orders entries. Entries are never updated in place: a caller pushes a
new entry and drops stale ones when they are popped (lazy invalidation).
The heap array is allocated by the caller with room for every push it can make.
"""
from .._jit import kernel


@kernel
def heap_push(heap, size, key):
    """Insert ``key``; returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        pk = heap[parent]
        if pk <= key:
            break
        heap[i] = pk
        i = parent
    heap[i] = key
    return size + 1


@kernel
def heap_pop(heap, size):
    """Remove the smallest key; returns ``(key, new_size)``. ``size`` must be > 0."""
    top = heap[0]
    size -= 1
    last = heap[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        right = child + 1
        if right < size and heap[right] < heap[child]:
            child = right
        ck = heap[child]
        if last <= ck:
            break
        heap[i] = ck
        i = child
    if size > 0:
        heap[i] = last
    return top, size


@kernel
def heapify(heap, size):
    """Turn ``heap[:size]`` into a heap in O(size)."""
    for start in range((size - 2) // 2, -1, -1):
        i = start
        key = heap[i]
        while True:
            child = 2 * i + 1
            if child >= size:
                break
            right = child + 1
            if right < size and heap[right] < heap[child]:
                child = right
            ck = heap[child]
            if key <= ck:
                break
            heap[i] = ck
            i = child
        heap[i] = key
