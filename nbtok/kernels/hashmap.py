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
"""
import numpy as np

from .._jit import kernel, leaf_kernel
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


# hash_bytes in steps, for the hashes of every prefix of a string in one pass (kept apart
# from hash_bytes, which the encoders call in their inner loops): fnv_finish(h, k) after k
# fnv_steps from FNV_OFFSET is hash_bytes of those k bytes (tests/test_robust_load.py)
FNV_OFFSET = np.uint64(0xCBF29CE484222325)


@leaf_kernel
def fnv_step(h, byte):
    return (np.uint64(h) ^ np.uint64(byte)) * np.uint64(0x100000001B3)


@leaf_kernel
def fnv_finish(h, length):
    return mix64(np.int64(np.uint64(h) >> np.uint64(1)) ^ np.int64(length))


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
    """Build a map from parallel arrays; on duplicate keys the first occurrence wins.
    Returns the interleaved ``int64[capacity, 2]`` table.

    The builders allocate their tables in NumPy and fill them in a kernel: each allocation
    inside a kernel compiles NumPy's implementation for its dtype and shape, ~0.1-0.2 s apiece
    on a first run (docs/benchmarks.md, "First run and short calls")."""
    table = np.zeros((capacity, 2), np.int64)
    table[:, 0] = EMPTY
    _intmap_fill(in_keys, in_values, table)
    return table


@kernel
def _intmap_fill(in_keys, in_values, table):
    capacity = table.shape[0]
    keys = table[:, 0]
    values = table[:, 1]
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
    (Allocated here, filled by a kernel: see ``intmap_build``.)
    """
    slot_ids = np.full(capacity, -1, np.int32)
    slot_hashes = np.zeros(capacity, np.int64)
    _bytesmap_fill(piece_bytes, piece_offsets, slot_ids, slot_hashes)
    return slot_ids, slot_hashes


@kernel
def _bytesmap_fill(piece_bytes, piece_offsets, slot_ids, slot_hashes):
    mask = slot_ids.shape[0] - 1
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
    return bytesmap_get_hashed(slot_ids, slot_hashes, piece_bytes, piece_offsets, buf, start, end,
                               hash_bytes(buf, start, end))


@leaf_kernel
def bytesmap_get_hashed(slot_ids, slot_hashes, piece_bytes, piece_offsets, buf, start, end, h):
    """``bytesmap_get`` given ``h = hash_bytes(buf, start, end)`` (computed by the caller, for
    one pass over the prefixes of a string: ``fnv_step``)."""
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
    piece of 1..16 bytes; the key is stored in the row, so a lookup reads one cache line.
    (Allocated here, filled by a kernel: see ``intmap_build``.)"""
    table = np.zeros((capacity, 4), np.int64)
    _shortmap_fill(piece_bytes, piece_offsets, table)
    return table


@kernel
def _shortmap_fill(piece_bytes, piece_offsets, table):
    mask = table.shape[0] - 1
    for pid in range(piece_offsets.shape[0] - 1):
        s = piece_offsets[pid]
        e = piece_offsets[pid + 1]
        n = e - s
        if n == 0 or n > SHORT_KEY_BYTES:
            continue
        k0, k1 = pack_key(piece_bytes, s, e)
        i = short_key_hash(k0, k1, n) & mask
        while True:
            meta = table[i, 2]
            if meta == 0:
                table[i, 0] = k0
                table[i, 1] = k1
                table[i, 2] = n | (np.int64(pid) << 8)
                break
            if table[i, 0] == k0 and table[i, 1] == k1 and (meta & 255) == n:
                break  # a repeated piece keeps its lowest id
            i = (i + 1) & mask


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
