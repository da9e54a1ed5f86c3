"""The hash maps NumPy builds (``nbtok.kernels.hashbuild``) are read by the kernels' lookups:
every key is found with its value, repeats keep their first value, nothing else is found,
whatever the collisions, repeats and wrap-around of the table."""
import numpy as np
import pytest

from nbtok.kernels import hashbuild as hb
from nbtok.kernels.hashmap import BytesMap, IntMap, hash_bytes, pack_key, shortmap_build, shortmap_get


def ragged(pieces):
    offsets = np.zeros(len(pieces) + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pieces])
    return np.frombuffer(b"".join(pieces), np.uint8).copy(), offsets


def linear_probing_holds(home, slots, capacity):
    """Every slot from a key's home to its slot (round the table) holds some key."""
    taken = np.zeros(capacity, bool)
    taken[slots] = True
    return all(taken[(h + np.arange((s - h) % capacity + 1)) % capacity].all() for h, s in zip(home, slots))


@pytest.mark.parametrize("seed", range(6))
def test_probe_slots_is_a_linear_probing_layout(seed):
    rng = np.random.default_rng(seed)
    capacity = 64
    n = int(rng.integers(1, 60))
    # crowd the homes near the end of the table, so that keys go round to slot 0
    home = rng.choice([0, 1, 2, 61, 62, 63, int(rng.integers(64))], n)
    slots = hb.probe_slots(home, capacity)
    assert len(set(slots.tolist())) == n and slots.min() >= 0 and slots.max() < capacity
    assert linear_probing_holds(home, slots, capacity)
    for h in np.unique(home):  # keys of one home keep the order given
        mine = slots[home == h]
        assert ((mine - h) % capacity).tolist() == sorted(((mine - h) % capacity).tolist())
    with pytest.raises(ValueError):
        hb.probe_slots(np.zeros(16, np.int64), 16)


def test_intmap_first_value_wins_and_others_are_absent():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 1 << 40, 5000)
    keys[100:200] = keys[:100]  # repeated keys keep their first value
    values = np.arange(keys.size, dtype=np.int64)
    m = IntMap.from_arrays(keys, values)
    first = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        first.setdefault(k, v)
    assert len(m) == len(first)
    assert all(m.get(k) == v for k, v in first.items())
    assert all(m.get(k) == -1 for k in rng.integers(1 << 41, 1 << 42, 500).tolist())


def test_bytes_and_short_maps_keep_the_lowest_id_of_a_repeat():
    rng = np.random.default_rng(2)
    pieces = [bytes(rng.integers(0, 256, int(rng.integers(1, 40)), dtype=np.uint8)) for _ in range(3000)]
    pieces += pieces[:50] + [b"", b"", b"x" * 300]  # repeats, empty pieces, a long one
    piece_bytes, offsets = ragged(pieces)
    bm = BytesMap(piece_bytes, offsets)
    short = shortmap_build(piece_bytes, offsets, 8192)
    lowest = {}
    for i, p in enumerate(pieces):
        lowest.setdefault(p, i)
    for p, i in lowest.items():
        assert bm.get(p) == i
        if 1 <= len(p) <= 16:
            buf = np.frombuffer(p, np.uint8)
            k0, k1 = pack_key(buf, 0, len(p))
            assert shortmap_get(short, k0, k1, len(p)) == i
    assert bm.get(b"not a piece" * 3) == -1
    assert int(np.count_nonzero(bm.slot_ids >= 0)) == len(lowest)
    # the hashes the table keeps are the kernel's
    used = bm.slot_ids >= 0
    for slot in np.flatnonzero(used)[:200]:
        i = bm.slot_ids[slot]
        assert bm.slot_hashes[slot] == hash_bytes(piece_bytes, offsets[i], offsets[i + 1])


def test_pieces_of_one_hash_are_told_apart_by_their_bytes():
    """A 64-bit collision cannot be made on purpose, so give every piece the same hash: repeats
    and distinct pieces must still be sorted out by their bytes."""
    pieces = [b"ab", b"cd", b"ab", b"e", b"cd", b"ab", b"fgh"]
    piece_bytes, offsets = ragged(pieces)
    same = np.full(len(pieces), 12345, np.int64)
    assert hb.distinct_pieces(piece_bytes, offsets, same).tolist() == [0, 1, 3, 6]
    ids = np.array([0, 1, 3, 6])
    capacity = 16
    slots = hb.probe_slots(same[ids] & (capacity - 1), capacity)
    slot_ids = np.full(capacity, -1, np.int32)
    slot_hashes = np.zeros(capacity, np.int64)
    slot_ids[slots], slot_hashes[slots] = ids, same[ids]
    queries, q_offsets = ragged([b"cd", b"fgh", b"ab", b"zz", b"e"])
    both = np.concatenate([piece_bytes, queries])
    starts = q_offsets[:-1] + piece_bytes.size
    found = hb.find_pieces(slot_ids, slot_hashes, both, offsets, starts, np.diff(q_offsets),
                           np.full(5, 12345, np.int64))
    assert found.tolist() == [1, 6, 0, -1, 3]


def test_long_spans_compare_past_the_whole_array_steps():
    """Spans longer than ``LONG_SPAN`` are compared (and hashed) past it too."""
    rng = np.random.default_rng(3)
    n = hb.LONG_SPAN + 300
    a = rng.integers(0, 256, n, dtype=np.uint8)
    b = a.copy()
    b[hb.LONG_SPAN + 100] ^= 1  # differs only past the whole-array steps
    buf = np.concatenate([a, a, b])
    starts = np.array([0, n]), np.array([n, 2 * n])
    lengths = np.array([n, n])
    assert hb.spans_equal(buf, starts[0], starts[1], lengths).tolist() == [True, False]
    hashes = hb.hash_spans(buf, np.array([0, n, 2 * n]), np.full(3, n))
    assert hashes.tolist() == [hash_bytes(buf, s, s + n) for s in (0, n, 2 * n)]
    assert hashes[0] == hashes[1] != hashes[2]
