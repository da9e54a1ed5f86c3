"""Open-addressing hash maps kept in flat arrays.

* ``IntMap``: ``int64`` key (>= 0) -> ``int64`` value. Linear probing over a power-of-two
  table; ``keys[i] == -1`` marks an empty slot. Used for merge tables: key
  ``left << 32 | right``, value ``rank << 32 | merged_id``. Keys and values are interleaved
  in one ``int64[cap, 2]`` array and handed to kernels as the two strided views
  ``keys = table[:, 0]``, ``values = table[:, 1]``: a probe touches one cache line, which
  matters because a random read outside L2 costs 40-300 ns on the machines we measured.
* ``BytesMap``: byte string -> ``int32`` id, for a vocabulary stored as one ragged byte
  buffer (``piece_bytes`` + ``piece_offsets``). A slot holds an id and the 64-bit hash of
  its bytes; a lookup compares the hash first and then the bytes, so a collision can never
  return a wrong id.

The kernels read the maps; NumPy builds them (``kernels.hashbuild``, with the same hashes).
"""
import numpy as np

from .._jit import leaf_kernel
from . import hashbuild as hb
from .swar import load8

EMPTY = -1


@leaf_kernel
def mix64(key):
    """splitmix64 finaliser: a cheap, well-spread hash of an int64 (result >= 0)."""
    z = np.uint64(key)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@leaf_kernel
def hash_bytes(buf, start, end):
    """FNV-1a over ``buf[start:end]`` followed by a final mix; result >= 0."""
    h = np.uint64(0xCBF29CE484222325)
    prime = np.uint64(0x100000001B3)
    for i in range(start, end):
        h = (h ^ np.uint64(buf[i])) * prime
    return mix64(np.int64(h >> np.uint64(1)) ^ np.int64(end - start))


@leaf_kernel
def fnv_run(buf, start, end, h, prefixes):
    """FNV-1a from state ``h`` over ``buf[start:end]``: the state after the last byte, and the
    state after each byte ``i`` in ``prefixes[i]`` when ``prefixes`` is not empty. For the
    bytes of a long vocabulary token (``kernels.hashbuild.fnv_spans``)."""
    h = np.uint64(h)
    prime = np.uint64(0x100000001B3)
    keep = prefixes.shape[0] > 0
    for i in range(start, end):
        h = (h ^ np.uint64(buf[i])) * prime
        if keep:
            prefixes[i] = h
    return h


def table_capacity(n):
    """A power of two at least twice ``n`` (load factor <= 0.5)."""
    cap = 16
    while cap < 2 * n:
        cap *= 2
    return cap


# ---------------------------------------------------------------- int64 -> int64
@leaf_kernel
def intmap_insert(keys, values, key, value):
    """Insert or overwrite; returns False if the key was already present."""
    mask = keys.shape[0] - 1
    i = mix64(key) & mask
    while True:
        k = keys[i]
        if k == EMPTY:
            keys[i] = key
            values[i] = value
            return True
        if k == key:
            values[i] = value
            return False
        i = (i + 1) & mask


@leaf_kernel
def intmap_get(keys, values, key, default):
    mask = keys.shape[0] - 1
    i = mix64(key) & mask
    while True:
        k = keys[i]
        if k == key:
            return values[i]
        if k == EMPTY:
            return default
        i = (i + 1) & mask


def intmap_build(in_keys, in_values, capacity):
    """Build a map from parallel arrays; on duplicate keys the first occurrence wins (and keys of
    one home slot take their slots in the order given). Returns the interleaved
    ``int64[capacity, 2]`` table. Built with NumPy (``kernels.hashbuild``)."""
    first = hb.first_of_each(in_keys)
    keys = in_keys[first]
    slots = hb.probe_slots(hb.mix64(keys) & (capacity - 1), capacity)
    table = np.zeros((capacity, 2), np.int64)
    table[:, 0] = EMPTY
    table[slots, 0] = keys
    table[slots, 1] = in_values[first]
    return table


class IntMap:
    """int64 -> int64 map; ``keys`` and ``values`` (views of ``table``) go to kernels directly."""

    __slots__ = ("table", "keys", "values")

    def __init__(self, table):
        self.table = table
        self.keys = table[:, 0]
        self.values = table[:, 1]

    @classmethod
    def from_arrays(cls, keys, values):
        keys = np.ascontiguousarray(keys, np.int64)
        values = np.ascontiguousarray(values, np.int64)
        if keys.shape != values.shape or keys.ndim != 1:
            raise ValueError("keys and values must be 1-D arrays of the same length")
        if keys.size and keys.min() < 0:
            raise ValueError("IntMap keys must be >= 0")
        return cls(intmap_build(keys, values, table_capacity(keys.size)))

    @classmethod
    def from_table(cls, table):
        """The map of a table ``intmap_build`` returned earlier (e.g. read from a cache)."""
        cap = table.shape[0]
        if table.dtype != np.int64 or table.shape != (cap, 2) or cap < 16 or cap & (cap - 1):
            raise ValueError("an IntMap table is int64[2**k, 2]")
        return cls(table)

    def get(self, key, default=-1):
        return int(intmap_get(self.keys, self.values, np.int64(key), np.int64(default)))

    def __len__(self):
        return int(np.count_nonzero(self.keys != EMPTY))


# ---------------------------------------------------------------- bytes -> id
def bytesmap_build(piece_bytes, piece_offsets, capacity):
    """Index every piece of a ragged byte vocabulary; a repeated piece keeps its lowest id.

    Returns ``(slot_ids int32[cap], slot_hashes int64[cap])``; empty slots have id -1.
    Built with NumPy (``kernels.hashbuild``)."""
    starts, lengths = hb.piece_spans(piece_offsets)
    hashes = hb.hash_spans(piece_bytes, starts, lengths)
    ids = hb.distinct_pieces(piece_bytes, piece_offsets, hashes)
    slots = hb.probe_slots(hashes[ids] & (capacity - 1), capacity)
    slot_ids = np.full(capacity, -1, np.int32)
    slot_hashes = np.zeros(capacity, np.int64)
    slot_ids[slots] = ids
    slot_hashes[slots] = hashes[ids]
    return slot_ids, slot_hashes


@leaf_kernel
def _same_bytes(piece_bytes, piece_offsets, pid, buf, start, end):
    ps = piece_offsets[pid]
    if piece_offsets[pid + 1] - ps != end - start:
        return False
    for k in range(end - start):
        if piece_bytes[ps + k] != buf[start + k]:
            return False
    return True


@leaf_kernel
def bytesmap_get(slot_ids, slot_hashes, piece_bytes, piece_offsets, buf, start, end):
    """Id of the piece equal to ``buf[start:end]``, or -1."""
    h = hash_bytes(buf, start, end)
    mask = slot_ids.shape[0] - 1
    i = h & mask
    while True:
        pid = slot_ids[i]
        if pid == -1:
            return -1
        if slot_hashes[i] == h and _same_bytes(piece_bytes, piece_offsets, pid, buf, start, end):
            return pid
        i = (i + 1) & mask


class BytesMap:
    """byte string -> id over a ragged vocabulary (``piece_bytes``, ``piece_offsets``)."""

    __slots__ = ("slot_ids", "slot_hashes", "piece_bytes", "piece_offsets")

    def __init__(self, piece_bytes, piece_offsets):
        self.piece_bytes = piece_bytes
        self.piece_offsets = piece_offsets
        cap = table_capacity(piece_offsets.shape[0] - 1)
        self.slot_ids, self.slot_hashes = bytesmap_build(piece_bytes, piece_offsets, cap)

    @classmethod
    def from_slots(cls, piece_bytes, piece_offsets, slot_ids, slot_hashes):
        """The map whose slots ``bytesmap_build`` returned earlier (e.g. read from a cache)."""
        cap = slot_ids.shape[0]
        if (slot_ids.dtype != np.int32 or slot_hashes.dtype != np.int64 or slot_ids.ndim != 1
                or slot_hashes.shape != (cap,) or cap < 16 or cap & (cap - 1)):
            raise ValueError("BytesMap slots must be int32 ids and int64 hashes, a power of two of each")
        self = cls.__new__(cls)
        self.piece_bytes, self.piece_offsets = piece_bytes, piece_offsets
        self.slot_ids, self.slot_hashes = slot_ids, slot_hashes
        return self

    def get(self, key: bytes, default=-1):
        buf = np.frombuffer(key, np.uint8)
        pid = bytesmap_get(self.slot_ids, self.slot_hashes, self.piece_bytes, self.piece_offsets, buf, 0, buf.size)
        return default if pid < 0 else int(pid)


# ---------------------------------------------------------------- short byte strings -> id
SHORT_KEY_BYTES = 16


@leaf_kernel
def pack_key(buf, start, end):
    """Bytes ``buf[start:end]`` (at most 16) as two little-endian words: an exact key."""
    k0 = np.uint64(0)
    k1 = np.uint64(0)
    n = end - start
    for k in range(min(n, 8)):
        k0 |= np.uint64(buf[start + k]) << np.uint64(8 * k)
    for k in range(8, n):
        k1 |= np.uint64(buf[start + k]) << np.uint64(8 * (k - 8))
    return np.int64(k0), np.int64(k1)


@leaf_kernel
def pack_word(buf, start, end):
    """``buf[start:end]`` (at most 8 bytes) as one little-endian word (as ``pack_key``), with one
    unaligned load where 8 bytes from ``start`` lie inside ``buf``."""
    n = end - start
    if n <= 0:
        return np.int64(0)
    if start + 8 <= buf.shape[0]:
        w = load8(buf, start)
        if n < 8:
            w &= (np.uint64(1) << np.uint64(8 * n)) - np.uint64(1)
        return np.int64(w)
    w = np.uint64(0)
    for k in range(n):
        w |= np.uint64(buf[start + k]) << np.uint64(8 * k)
    return np.int64(w)


@leaf_kernel
def short_key_hash(k0, k1, n):
    h = np.uint64(k0) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(k1) * np.uint64(0xC2B2AE3D27D4EB4F) + np.uint64(n)
    return np.int64(h >> np.uint64(24))


def shortmap_build(piece_bytes, piece_offsets, capacity):
    """``ShortMap`` table ``int64[capacity, 4]``: row = (k0, k1, length | id << 8, 0) for every
    piece of 1..16 bytes (``pack_key``; a repeated piece keeps its lowest id); the key is stored
    in the row, so a lookup reads one cache line. Built with NumPy (``kernels.hashbuild``)."""
    starts, lengths = hb.piece_spans(piece_offsets)
    ids = np.flatnonzero((lengths >= 1) & (lengths <= SHORT_KEY_BYTES))
    k0, k1 = packed_keys(piece_bytes, starts[ids], lengths[ids])
    n = lengths[ids]
    first = hb.first_of_each(np.stack([k0, k1, n], axis=1))
    ids, k0, k1, n = ids[first], k0[first], k1[first], n[first]
    slots = hb.probe_slots(hb.short_key_hash(k0, k1, n) & (capacity - 1), capacity)
    table = np.zeros((capacity, 4), np.int64)
    table[slots, 0] = k0
    table[slots, 1] = k1
    table[slots, 2] = n | (ids << 8)
    return table


def packed_keys(buf, starts, lengths):
    """``pack_key`` of each span of 0..16 bytes: two int64 arrays."""
    col = np.arange(SHORT_KEY_BYTES)
    inside = col < lengths[:, None]
    at = np.where(inside, starts[:, None] + col, 0)
    rows = np.where(inside, buf[at] if buf.shape[0] else 0, 0).astype(np.uint8)
    words = np.ascontiguousarray(rows).view("<u8")
    return words[:, 0].astype(np.int64), words[:, 1].astype(np.int64)


@leaf_kernel
def shortmap_get(table, k0, k1, n):
    """Id of the piece with packed key (k0, k1) and length n (1..16), or -1."""
    mask = table.shape[0] - 1
    i = short_key_hash(k0, k1, n) & mask
    while True:
        meta = table[i, 2]
        if meta == 0:
            return -1
        if table[i, 0] == k0 and table[i, 1] == k1 and (meta & 255) == n:
            return meta >> 8
        i = (i + 1) & mask


def shortmap_capacity(n):
    cap = 16
    while cap * 0.7 < n:
        cap *= 2
    return cap
