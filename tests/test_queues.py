"""The priority queues of the BPE merge loop: the array heap and the run queue pop in the same
order as Python's ``heapq`` for any interleaving of pushes and pops, and the merge loop gives
the same result through either queue."""
import heapq

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import nbtok
from nbtok.models.bpe import merge as bpe
from nbtok.kernels import heap, runqueue

# an operation is a push (rank, position) or a pop (None)
ops = st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 40), st.integers(0, 2000))), max_size=400)


@settings(max_examples=200, deadline=None)
@given(ops)
def test_runqueue_and_heap_pop_like_heapq(operations):
    cap = len(operations) + 1
    q = runqueue.new_runqueue(cap)
    h = np.empty(cap, np.int64)
    size = 0
    ref = []
    for op in operations:
        if op is None:
            if not ref:
                continue
            want = heapq.heappop(ref)
            assert runqueue.rq_pop(q) == want
            key, size = heap.heap_pop(h, size)
            assert key == want
        else:
            rank, pos = op
            key = rank << 32 | pos
            heapq.heappush(ref, key)
            runqueue.rq_push(q, rank, pos)
            size = heap.heap_push(h, size, key)
    while ref:
        want = heapq.heappop(ref)
        assert runqueue.rq_pop(q) == want
        key, size = heap.heap_pop(h, size)
        assert key == want
    assert size == 0 and q[4][0] == 0


def test_runqueue_keeps_ordered_pushes_in_few_runs():
    q = runqueue.new_runqueue(10_001)
    for pos in range(10_000):
        runqueue.rq_push(q, pos % 3, pos)
    assert q[4][0] == 3  # three runs in the heap, 10,000 entries in the pool
    assert [runqueue.rq_pop(q) for _ in range(4)] == [0, 3, 6, 9]


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet="abcdefghij", min_size=300, max_size=3000))
def test_merge_loop_same_through_heap_and_run_queue(text):
    model = nbtok.get_encoding("gpt2").model
    keys, values = model.merge_map.keys, model.merge_map.values
    base = model.byte_ids[np.frombuffer(text.encode(), np.uint8)].astype(np.int32)
    n = base.size
    results = []
    for queue in (None, runqueue.new_runqueue(3 * n + 1)):
        ids = base.copy()
        heap_, prev, nxt, pair_at = bpe.new_scratch(n)
        m = bpe.merge_loop(ids, n, heap_, prev, nxt, pair_at, 0.0, queue, bpe.cached_table_pairs,
                           (keys, values, bpe.new_pair_cache()))
        results.append(ids[:m].tolist())
    assert results[0] == results[1]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \u00e9\u65e5", max_size=16))
def test_short_piece_scan_equals_queue(text):
    """merge_small (pieces of up to SMALL_PIECE symbols) against the heap loop."""
    model = nbtok.get_encoding("gpt2").model
    keys, values = model.merge_map.keys, model.merge_map.values
    base = model.byte_ids[np.frombuffer(text.encode(), np.uint8)].astype(np.int32)
    n = base.size
    heap_, prev, nxt, pair_at = bpe.new_scratch(n)
    a = base.copy()
    ma = bpe.merge_loop(a, n, heap_, prev, nxt, pair_at, 0.0, None, bpe.cached_table_pairs,
                        (keys, values, bpe.new_pair_cache()))
    b = base.copy()
    mb = bpe.merge_small(b, n, pair_at, bpe.table_pairs, (keys, values))
    assert a[:ma].tolist() == b[:mb].tolist()
