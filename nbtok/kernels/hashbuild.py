"""The hash maps of ``kernels.hashmap`` built with NumPy instead of a kernel.

A map is built once per model, when it is loaded; a kernel that fills it compiles for longer
than it runs (the four builders and the merge table's kernel were ~3.7 s of the 12.7 s that
the README's first command spent compiling from empty caches, for ~10 ms of work). Here the
same tables come from whole-array operations: the hashes are the kernels' own (FNV-1a and
splitmix64, bit for bit), and the slots a layout that the kernels' linear probing reads.

Layout (``probe_slots``): linear probing finds a key at slot s from its home slot h when every
slot from h to s (round the table) is taken. Put the keys in order of home (keys with the same
home in the order given: the first gets the nearest slot) and give each the next slot after the
previous key's, or its home if that is further: slot_t = t + max(h_j - j, j <= t), one
``np.maximum.accumulate``. Keys pushed past the end go round to slot 0, before the keys whose
home is there. This is the table that inserting the keys one by one in order of home gives; in
any insertion order linear probing takes the same slots and the same total displacement, so
the kernels' lookups cost the same (the keys of one home keep the priority of the order given).

Span hashes (``fnv_spans``): FNV-1a runs along a byte string, so the spans advance together,
one byte position per step, longest first (the spans still running are a prefix of that order).
A step is one vectorised operation, so a vocabulary with one very long token takes as many
steps as the token has bytes.
"""
import numpy as np

U64 = np.uint64
FNV_OFFSET = U64(0xCBF29CE484222325)
FNV_PRIME = U64(0x100000001B3)


def mix64(key):
    """``kernels.hashmap.mix64`` of an array of int64 (splitmix64's finaliser, result >= 0)."""
    z = np.asarray(key).astype(U64)
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    z = z ^ (z >> U64(31))
    return (z >> U64(1)).astype(np.int64)


def fnv_finish(state, length):
    """``kernels.hashmap.fnv_finish``: the hash of a byte string from its FNV-1a state."""
    return mix64((state >> U64(1)).astype(np.int64) ^ np.asarray(length, np.int64))


def short_key_hash(k0, k1, n):
    """``kernels.hashmap.short_key_hash`` of arrays of packed keys and their lengths."""
    h = (np.asarray(k0).astype(U64) * U64(0x9E3779B97F4A7C15) + np.asarray(k1).astype(U64) * U64(0xC2B2AE3D27D4EB4F)
         + np.asarray(n).astype(U64))
    return (h >> U64(24)).astype(np.int64)


LONG_SPAN = 512  # bytes of a span hashed or compared in whole-array steps; the rest span by span


def _longest_first(lengths):
    """Spans in order of length, longest first, and how many are longer than each j < the
    whole-array steps (``LONG_SPAN`` at most): the spans a step reads are a prefix."""
    order = np.argsort(-lengths, kind="stable")
    run = lengths[order]
    steps = min(int(run[0]) if run.size else 0, LONG_SPAN)
    return order, run, np.searchsorted(-run, -np.arange(steps), side="left")


def fnv_spans(buf, starts, lengths, keep_prefixes=False):
    """FNV-1a states of the spans ``buf[starts[k]:starts[k] + lengths[k]]`` (``uint64``). With
    ``keep_prefixes`` also the state after each byte, at that byte's index of ``buf`` (every
    byte of ``buf`` in at most one span). Bytes past ``LONG_SPAN`` of a span go through the
    kernel ``fnv_run``, one span per call, so that a vocabulary with a token of a megabyte
    takes 512 steps, not a million."""
    starts = np.asarray(starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    order, run, running = _longest_first(lengths)
    pos = starts[order]
    h = np.full(run.size, FNV_OFFSET, U64)
    prefixes = np.zeros(buf.shape[0], U64) if keep_prefixes else np.zeros(0, U64)
    for j, k in enumerate(running):
        at = pos[:k] + j
        h[:k] = (h[:k] ^ buf[at].astype(U64)) * FNV_PRIME
        if keep_prefixes:
            prefixes[at] = h[:k]
    from .hashmap import fnv_run  # a kernel; hashmap imports this module
    for k in range(int(np.count_nonzero(run > LONG_SPAN))):
        h[k] = fnv_run(buf, pos[k] + LONG_SPAN, pos[k] + run[k], h[k], prefixes)
    states = np.empty(run.size, U64)
    states[order] = h
    return (states, prefixes) if keep_prefixes else states


def hash_spans(buf, starts, lengths):
    """``kernels.hashmap.hash_bytes`` of each span."""
    return fnv_finish(fnv_spans(buf, starts, lengths), lengths)


def spans_equal(buf, a_starts, b_starts, lengths):
    """Are ``buf[a:a + n]`` and ``buf[b:b + n]`` equal, for each (a, b, n)?"""
    a_starts = np.asarray(a_starts, np.int64)
    b_starts = np.asarray(b_starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    order, run, running = _longest_first(lengths)
    a, b = a_starts[order], b_starts[order]
    same = np.ones(run.size, np.bool_)
    for j, k in enumerate(running):
        same[:k] &= buf[a[:k] + j] == buf[b[:k] + j]
    for k in range(int(np.count_nonzero(run > LONG_SPAN))):
        same[k] &= np.array_equal(buf[a[k] + LONG_SPAN:a[k] + run[k]], buf[b[k] + LONG_SPAN:b[k] + run[k]])
    out = np.empty(run.size, np.bool_)
    out[order] = same
    return out


def probe_slots(home, capacity):
    """A slot for each key of home slot ``home[k]`` in a linear-probing table of ``capacity``
    slots (a power of two, more than the keys): see the module docstring. Keys with the same
    home keep their order."""
    n = home.shape[0]
    if n >= capacity:
        raise ValueError(f"{n} keys do not fit a table of {capacity} slots")
    order = np.argsort(home, kind="stable")
    t = np.arange(n, dtype=np.int64)
    wrapped = order[:0]
    while True:
        seq = np.concatenate([wrapped, order])  # keys gone round the end first, at home 0
        h = np.concatenate([np.zeros(wrapped.size, np.int64), home[order]])
        slot = t[:seq.size] + np.maximum.accumulate(h - t[:seq.size]) if seq.size else h
        over = slot[wrapped.size:] >= capacity
        if not over.any():
            out = np.empty(n, np.int64)
            out[seq] = slot
            return out
        wrapped = np.concatenate([wrapped, order[over]])
        order = order[~over]


def first_of_each(keys):
    """Indices of the first occurrence of each distinct row or value of ``keys``, ascending."""
    return np.sort(np.unique(keys, axis=0, return_index=True)[1])


def piece_spans(piece_offsets):
    offsets = np.asarray(piece_offsets, np.int64)
    return offsets[:-1], np.diff(offsets)


def distinct_pieces(piece_bytes, piece_offsets, hashes):
    """The ids of a ragged vocabulary without its repeats (a repeated piece keeps its lowest
    id), ascending. Pieces are compared by hash, then by their bytes."""
    starts, lengths = piece_spans(piece_offsets)
    order = np.argsort(hashes, kind="stable")  # equal hashes: ascending ids
    h = hashes[order]
    first = np.ones(order.size, np.bool_)  # the lowest id of each hash
    first[1:] = h[1:] != h[:-1]
    group = np.cumsum(first) - 1
    later = np.flatnonzero(~first)  # the others: a repeat of their group's first, or a collision
    a, b = order[later], order[first][group[later]]
    repeat = lengths[a] == lengths[b]
    repeat[repeat] = spans_equal(piece_bytes, starts[a[repeat]], starts[b[repeat]], lengths[a[repeat]])
    keep = first.copy()
    for g in np.unique(group[later[~repeat]]):  # a true 64-bit collision: sort the group out by bytes
        seen = {}
        for m in np.flatnonzero(group == g):
            i = order[m]
            seen.setdefault(bytes(piece_bytes[starts[i]:starts[i] + lengths[i]]), m)
        keep[list(seen.values())] = True
    return np.sort(order[keep])


def find_pieces(slot_ids, slot_hashes, piece_bytes, piece_offsets, starts, lengths, hashes):
    """``kernels.hashmap.bytesmap_get`` of each span ``piece_bytes[starts[k]:starts[k] + lengths[k]]``
    of hash ``hashes[k]`` (``hash_spans``): the id of the piece equal to it, or -1. The spans
    probe the table together, one slot per step."""
    out = np.full(starts.shape[0], -1, np.int64)
    p_starts, p_lengths = piece_spans(piece_offsets)
    mask = slot_ids.shape[0] - 1
    slot = hashes & mask
    todo = np.arange(starts.shape[0])
    while todo.size:
        pid = slot_ids[slot[todo]].astype(np.int64)
        todo, pid = todo[pid >= 0], pid[pid >= 0]  # an empty slot: no such piece
        hit = (slot_hashes[slot[todo]] == hashes[todo]) & (p_lengths[pid] == lengths[todo])
        hit[hit] = spans_equal(piece_bytes, p_starts[pid[hit]], starts[todo[hit]], lengths[todo[hit]])
        out[todo[hit]] = pid[hit]
        todo = todo[~hit]
        slot[todo] = (slot[todo] + 1) & mask
    return out
