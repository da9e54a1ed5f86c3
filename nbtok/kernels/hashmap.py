"""Open-addressing hash maps kept in flat arrays.

* ``IntMap``: ``int64`` key (>= 0) -> ``int64`` value. Linear probing over a power-of-two
  table; ``keys[i] == -1`` marks an empty slot. Used for merge tables: key
  ``left << 32 | right``, value ``rank << 32 | merged_id``.
* ``BytesMap``: byte string -> ``int32`` id, for a vocabulary stored as one ragged byte
  buffer (``piece_bytes`` + ``piece_offsets``). A slot holds an id and the 64-bit hash of
  its bytes; a lookup compares the hash first and then the bytes, so a collision can never
  return a wrong id.
"""
import numpy as np

from .._jit import kernel

EMPTY = -1


@kernel
def mix64(key):
    """splitmix64 finaliser: a cheap, well-spread hash of an int64 (result >= 0)."""
    z = np.uint64(key)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(1))


@kernel
def hash_bytes(buf, start, end):
    """FNV-1a over ``buf[start:end]`` followed by a final mix; result >= 0."""
    h = np.uint64(0xCBF29CE484222325)
    prime = np.uint64(0x100000001B3)
    for i in range(start, end):
        h = (h ^ np.uint64(buf[i])) * prime
    return mix64(np.int64(h >> np.uint64(1)) ^ np.int64(end - start))


def table_capacity(n):
    """A power of two at least twice ``n`` (load factor <= 0.5)."""
    cap = 16
    while cap < 2 * n:
        cap *= 2
    return cap


# ---------------------------------------------------------------- int64 -> int64
@kernel
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


@kernel
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


@kernel
def intmap_build(in_keys, in_values, capacity):
    """Build a map from parallel arrays; on duplicate keys the first occurrence wins."""
    keys = np.full(capacity, EMPTY, np.int64)
    values = np.zeros(capacity, np.int64)
    mask = capacity - 1
    for j in range(in_keys.shape[0]):
        key = in_keys[j]
        i = mix64(key) & mask
        while True:
            k = keys[i]
            if k == EMPTY:
                keys[i] = key
                values[i] = in_values[j]
                break
            if k == key:
                break
            i = (i + 1) & mask
    return keys, values


class IntMap:
    """int64 -> int64 map; the arrays are public so kernels can take them directly."""

    __slots__ = ("keys", "values")

    def __init__(self, keys, values):
        self.keys = keys
        self.values = values

    @classmethod
    def from_arrays(cls, keys, values):
        keys = np.ascontiguousarray(keys, np.int64)
        values = np.ascontiguousarray(values, np.int64)
        if keys.shape != values.shape or keys.ndim != 1:
            raise ValueError("keys and values must be 1-D arrays of the same length")
        if keys.size and keys.min() < 0:
            raise ValueError("IntMap keys must be >= 0")
        return cls(*intmap_build(keys, values, table_capacity(keys.size)))

    def get(self, key, default=-1):
        return int(intmap_get(self.keys, self.values, np.int64(key), np.int64(default)))

    def __len__(self):
        return int(np.count_nonzero(self.keys != EMPTY))


# ---------------------------------------------------------------- bytes -> id
@kernel
def bytesmap_build(piece_bytes, piece_offsets, capacity):
    """Index every piece of a ragged byte vocabulary; a repeated piece keeps its lowest id.

    Returns ``(slot_ids int32[cap], slot_hashes int64[cap])``; empty slots have id -1.
    """
    slot_ids = np.full(capacity, -1, np.int32)
    slot_hashes = np.zeros(capacity, np.int64)
    mask = capacity - 1
    n = piece_offsets.shape[0] - 1
    for pid in range(n):
        s = piece_offsets[pid]
        e = piece_offsets[pid + 1]
        h = hash_bytes(piece_bytes, s, e)
        i = h & mask
        while True:
            other = slot_ids[i]
            if other == -1:
                slot_ids[i] = pid
                slot_hashes[i] = h
                break
            if slot_hashes[i] == h and _same_bytes(piece_bytes, piece_offsets, other, piece_bytes, s, e):
                break
            i = (i + 1) & mask
    return slot_ids, slot_hashes


@kernel
def _same_bytes(piece_bytes, piece_offsets, pid, buf, start, end):
    ps = piece_offsets[pid]
    if piece_offsets[pid + 1] - ps != end - start:
        return False
    for k in range(end - start):
        if piece_bytes[ps + k] != buf[start + k]:
            return False
    return True


@kernel
def bytesmap_get(slot_ids, slot_hashes, piece_bytes, piece_offsets, buf, start, end):
    """Id of the piece equal to ``buf[start:end]``, or -1."""
    mask = slot_ids.shape[0] - 1
    h = hash_bytes(buf, start, end)
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

    def get(self, key: bytes, default=-1):
        buf = np.frombuffer(key, np.uint8)
        pid = bytesmap_get(self.slot_ids, self.slot_hashes, self.piece_bytes, self.piece_offsets, buf, 0, buf.size)
        return default if pid < 0 else int(pid)
