"""A priority queue of ``(rank, position)`` pairs stored as ascending runs, for long BPE pieces.

On a long piece (a megabyte without spaces) the merge loop pushes millions of entries, and
a plain array heap of that size lives in main memory: every push and pop walks a path of
cache misses. But the pushes come in order: the first pass pushes every pair left to right,
and merging one rank's pairs left to right creates the next ranks' pairs left to right too.
So this queue keeps, per rank, a *run*: a linked list of positions in ascending order, and a
small heap holding only the head of each run. A push whose position is past the tail of the
open run of its rank appends to the run in O(1); any other push starts a new run. Popping
takes the smallest head and puts the run's next position in its place. The order of pops is
exactly that of one heap over all entries (ties between equal entries aside, which are the
same entry), so the merge loop gives identical results; only the memory traffic changes.

Layout (``new_runqueue(cap)``, ``cap`` = the most entries that will ever be pushed):

    keys   int64[cap]  heap of run heads, key = rank << 32 | position (4-ary, min first)
    nodes  int32[cap]  for each heap slot, the pool node of that head
    pool   int64[cap]  pool node = position << 32 | next node (LOW32 = end of run)
    open_  int64[OPEN_SLOTS, 2]  per rank (direct-mapped): (rank, tail node of its open run)
    state  int64[2]    (heap size, pool nodes used)
"""
import numpy as np

from .._jit import kernel, leaf_kernel

LOW32 = 0xFFFFFFFF
OPEN_SLOTS = 1024


@kernel
def new_runqueue(cap):
    return runqueue_over(np.empty(cap, np.int64))


@kernel
def runqueue_over(keys):
    """A run queue whose heap of run heads lives in ``keys`` (e.g. the merge loop's array
    heap, which the loop does not use while it runs on the queue)."""
    cap = keys.shape[0]
    opened = np.empty((OPEN_SLOTS, 2), np.int64)
    opened[:, 1] = -1
    return keys, np.empty(cap, np.int32), np.empty(cap, np.int64), opened, np.zeros(2, np.int64)


@leaf_kernel
def _sift_down(keys, nodes, size, i, key, node):
    while True:
        first = 4 * i + 1
        if first >= size:
            break
        best = first
        bk = keys[first]
        for c in range(first + 1, min(first + 4, size)):
            if keys[c] < bk:
                bk = keys[c]
                best = c
        if key <= bk:
            break
        keys[i] = bk
        nodes[i] = nodes[best]
        i = best
    keys[i] = key
    nodes[i] = node


@leaf_kernel
def _heap_push(keys, nodes, size, key, node):
    i = size
    while i > 0:
        parent = (i - 1) >> 2
        if keys[parent] <= key:
            break
        keys[i] = keys[parent]
        nodes[i] = nodes[parent]
        i = parent
    keys[i] = key
    nodes[i] = node


@leaf_kernel
def rq_push(q, rank, pos):
    keys, nodes, pool, opened, state = q
    node = state[1]
    state[1] = node + 1
    pool[node] = (np.int64(pos) << 32) | LOW32
    slot = rank & (OPEN_SLOTS - 1)
    tail = opened[slot, 1]
    if tail >= 0 and opened[slot, 0] == rank and (pool[tail] >> 32) < pos:
        pool[tail] = (pool[tail] & ~np.int64(LOW32)) | node
    else:
        _heap_push(keys, nodes, state[0], (np.int64(rank) << 32) | pos, np.int32(node))
        state[0] += 1
    opened[slot, 0] = rank
    opened[slot, 1] = node


@leaf_kernel
def rq_pop(q):
    """Remove the smallest entry; returns ``rank << 32 | position``. The queue must not be empty."""
    keys, nodes, pool, opened, state = q
    key = keys[0]
    node = np.int64(nodes[0])
    nxt = pool[node] & LOW32
    if nxt != LOW32:
        _sift_down(keys, nodes, state[0], 0, ((key >> 32) << 32) | (pool[nxt] >> 32), np.int32(nxt))
    else:
        slot = (key >> 32) & (OPEN_SLOTS - 1)
        if opened[slot, 1] == node:
            opened[slot, 1] = -1  # the run is used up: later pushes start a new one
        state[0] -= 1
        size = state[0]
        if size > 0:
            _sift_down(keys, nodes, size, 0, keys[size], nodes[size])
    return key


@leaf_kernel
def rq_capacity(q):
    return q[2].shape[0]


@leaf_kernel
def rq_clear(q):
    keys, nodes, pool, opened, state = q
    state[0] = 0
    state[1] = 0
    for s in range(OPEN_SLOTS):
        opened[s, 1] = -1
