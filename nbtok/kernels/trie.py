"""Double-array trie over byte strings: build from a ragged key set, common-prefix search.

Layout (all int32, one cell per trie node, root = cell 0):

    bc[2 * s]      BASE of node s: the child labelled c lives in cell BASE + c
    bc[2 * s + 1]  CHECK of cell s: the parent node's cell (-1 = free)
    value[s]       the key id ending at node s, or -1

BASE and CHECK are interleaved so one transition touches one cache line. The arrays are
padded with 256 free cells past the largest BASE, so ``BASE + c`` is always in range and
a walk needs no bounds check. Nodes without children have BASE 0; since no cell has such a
node as its CHECK, the walk stops there. No two nodes share a BASE, so a cell's own label
(its index minus its parent's BASE) also tells whose child it is: ``labelled_units`` packs the
trie into one word a cell (BASE, a key-ends-here bit, the label), half the bytes of BASE + CHECK,
for the hot walks.

Build: a depth-first MSD radix partition of the keys (counting sort on byte d, insertion
sort for small ranges) yields each node's children, which are placed immediately. A free cell
is found through a doubly linked free list; a free cell that failed to host a base too
often is dropped from the search list (darts-clone's trick), keeping the build linear in
practice (250k keys in a fraction of a second).
"""
import numpy as np

from .._jit import inline_kernel, kernel, leaf_kernel

MAX_TRIALS = 8


@kernel
def _grow(bc, value, nxt, prv, fails, taken, need):
    """Extend the cell arrays to at least ``need`` cells, new cells free and linked at the end."""
    old = value.shape[0]
    if need <= old:
        return bc, value, nxt, prv, fails, taken
    new = old * 2
    while new < need:
        new *= 2
    bc2 = np.zeros(2 * new, np.int32)
    bc2[:2 * old] = bc
    for s in range(old, new):
        bc2[2 * s + 1] = -1
    value2 = np.full(new, -1, np.int32)
    value2[:old] = value
    nxt2 = np.empty(new, np.int32)
    prv2 = np.empty(new, np.int32)
    nxt2[:old] = nxt
    prv2[:old] = prv
    fails2 = np.zeros(new, np.int32)
    fails2[:old] = fails
    taken2 = np.zeros(new, np.bool_)
    taken2[:old] = taken
    # append [old, new) to the free list: the list is circular through sentinel cell 0's slots
    # (nxt[0]/prv[0] act as head/tail; cell 0 itself is the root and never free)
    tail = prv[0]
    for s in range(old, new):
        prv2[s] = tail
        nxt2[tail] = s
        tail = s
    nxt2[tail] = 0
    prv2[0] = tail
    return bc2, value2, nxt2, prv2, fails2, taken2


@kernel
def _unlink(nxt, prv, s):
    a = prv[s]
    b = nxt[s]
    nxt[a] = b
    prv[b] = a
    nxt[s] = -1
    prv[s] = -1


@kernel
def _key_byte(key_bytes, key_offsets, i, d):
    """Byte ``d`` of key ``i``, or -1 if the key has length ``d``."""
    p = key_offsets[i] + d
    return np.int32(key_bytes[p]) if p < key_offsets[i + 1] else np.int32(-1)


@kernel
def _sort_range(key_bytes, key_offsets, perm, tmp, cb, tmpb, lo, hi, d, counts):
    """Stable sort of ``perm[lo:hi]`` by byte ``d`` (ended keys, byte -1, first).

    ``cb[lo:hi]`` receives the sorted bytes, so the caller scans them without touching
    the (randomly placed) key bytes again.
    """
    for a in range(lo, hi):
        cb[a] = _key_byte(key_bytes, key_offsets, perm[a], d)
    if hi - lo <= 16:
        for a in range(lo + 1, hi):
            x = perm[a]
            kx = cb[a]
            b = a - 1
            while b >= lo and cb[b] > kx:
                perm[b + 1] = perm[b]
                cb[b + 1] = cb[b]
                b -= 1
            perm[b + 1] = x
            cb[b + 1] = kx
        return
    counts[:] = 0
    for a in range(lo, hi):
        counts[cb[a] + 2] += 1
    for c in range(1, 258):
        counts[c] += counts[c - 1]
    for a in range(lo, hi):
        k = cb[a] + 1
        tmp[lo + counts[k]] = perm[a]
        tmpb[lo + counts[k]] = cb[a]
        counts[k] += 1
    for a in range(lo, hi):
        perm[a] = tmp[a]
        cb[a] = tmpb[a]


@kernel
def _place(key_bytes, key_offsets, keys):
    """Depth-first MSD radix partition of the keys, placing each node's children as it goes."""
    n = keys.shape[0]
    perm = keys.copy()
    tmp = np.empty(n, np.int64)
    cb = np.empty(n, np.int32)
    tmpb = np.empty(n, np.int32)
    counts = np.zeros(258, np.int64)
    total = 0
    for k in range(n):
        total += key_offsets[keys[k] + 1] - key_offsets[keys[k]]
    cap = 1024
    while cap < total // 2 + 512:
        cap *= 2
    bc = np.zeros(2 * cap, np.int32)
    for s in range(cap):
        bc[2 * s + 1] = -1
    value = np.full(cap, -1, np.int32)
    nxt = np.empty(cap, np.int32)
    prv = np.empty(cap, np.int32)
    fails = np.zeros(cap, np.int32)
    taken = np.zeros(cap, np.bool_)  # BASE values in use: no two nodes share one
    nxt[0] = 1
    prv[0] = cap - 1
    for s in range(1, cap):
        nxt[s] = s + 1 if s + 1 < cap else 0
        prv[s] = s - 1
    bc[1] = -2  # root's CHECK matches no node
    # stack of (cell, lo, hi, depth)
    st_cell = np.empty(total + 2, np.int32)
    st_lo = np.empty(total + 2, np.int64)
    st_hi = np.empty(total + 2, np.int64)
    st_d = np.empty(total + 2, np.int32)
    sp = 0
    st_cell[0] = 0
    st_lo[0] = 0
    st_hi[0] = n
    st_d[0] = 0
    sp = 1
    max_base = 0
    labels = np.empty(256, np.int32)
    g_lo = np.empty(256, np.int64)
    g_hi = np.empty(256, np.int64)
    while sp > 0:
        sp -= 1
        cv = st_cell[sp]
        lo = st_lo[sp]
        hi = st_hi[sp]
        d = st_d[sp]
        _sort_range(key_bytes, key_offsets, perm, tmp, cb, tmpb, lo, hi, d, counts)
        # keys ending here
        while lo < hi and cb[lo] < 0:
            pid = perm[lo]
            if value[cv] < 0 or pid < value[cv]:
                value[cv] = pid
            lo += 1
        if lo == hi:
            continue
        k = 0
        a = lo
        while a < hi:
            c = cb[a]
            b = a + 1
            while b < hi and cb[b] == c:
                b += 1
            labels[k] = c
            g_lo[k] = a
            g_hi[k] = b
            k += 1
            a = b
        first = labels[0]
        s = nxt[0]
        base = 0
        while True:
            if s == 0:
                old = value.shape[0]
                bc, value, nxt, prv, fails, taken = _grow(bc, value, nxt, prv, fails, taken, old * 2)
                s = old
            b = s - first
            ok = b >= 1 and not taken[b]
            if ok:
                if b + 256 > value.shape[0]:
                    bc, value, nxt, prv, fails, taken = _grow(bc, value, nxt, prv, fails, taken, b + 257)
                for j in range(1, k):
                    if bc[2 * (b + labels[j]) + 1] != -1:
                        ok = False
                        break
            if ok:
                base = b
                break
            ns = nxt[s]
            fails[s] += 1
            if fails[s] >= MAX_TRIALS:
                _unlink(nxt, prv, s)
            s = ns
        bc[2 * cv] = base
        taken[base] = True
        if base > max_base:
            max_base = base
        for j in range(k):
            c = base + labels[j]
            bc[2 * c + 1] = cv
            if nxt[c] >= 0:
                _unlink(nxt, prv, c)
        # push children in reverse so the smallest label is processed first
        for j in range(k - 1, -1, -1):
            st_cell[sp] = base + labels[j]
            st_lo[sp] = g_lo[j]
            st_hi[sp] = g_hi[j]
            st_d[sp] = d + 1
            sp += 1
    size = max_base + 257
    if size > value.shape[0]:
        bc, value, nxt, prv, fails, taken = _grow(bc, value, nxt, prv, fails, taken, size)
    return bc[:2 * size].copy(), value[:size].copy()


@kernel
def _prefix64(key_bytes, key_offsets, keys):
    """First 8 bytes of each key as a big-endian uint64 (zero padded): a sort key."""
    out = np.zeros(keys.shape[0], np.uint64)
    for k in range(keys.shape[0]):
        s = key_offsets[keys[k]]
        e = min(key_offsets[keys[k] + 1], s + 8)
        v = np.uint64(0)
        for p in range(s, s + 8):
            v = v << np.uint64(8)
            if p < e:
                v |= np.uint64(key_bytes[p])
        out[k] = v
    return out


@kernel
def _regroup(key_bytes, key_offsets, keys):
    """Copy the keys (in the given order) into one contiguous buffer: (bytes, offsets)."""
    n = keys.shape[0]
    offs = np.zeros(n + 1, np.int64)
    for k in range(n):
        offs[k + 1] = offs[k] + key_offsets[keys[k] + 1] - key_offsets[keys[k]]
    out = np.empty(offs[n], np.uint8)
    for k in range(n):
        s = key_offsets[keys[k]]
        for j in range(offs[k + 1] - offs[k]):
            out[offs[k] + j] = key_bytes[s + j]
    return out, offs


@kernel
def _remap_values(value, keys):
    for s in range(value.shape[0]):
        if value[s] >= 0:
            value[s] = keys[value[s]]


def build_trie(key_bytes, key_offsets, key_ids):
    """Double-array trie over the keys ``key_ids`` (ids into a ragged byte vocabulary).

    Returns ``(bc int32[2 * cells], value int32[cells])``. If two keys are equal the
    lower id is stored. Empty keys are ignored.
    """
    key_ids = np.ascontiguousarray(key_ids, np.int64)
    if key_ids.size:
        lens = key_offsets[key_ids + 1] - key_offsets[key_ids]
        key_ids = key_ids[lens > 0]
    # Lay the keys out roughly sorted (by their first 8 bytes, ties by id) so the
    # radix partition walks memory in order; values are mapped back to the ids.
    order = np.lexsort((key_ids, _prefix64(key_bytes, key_offsets, key_ids)))
    keys = key_ids[order]
    kb, ko = _regroup(key_bytes, key_offsets, keys)
    bc, value = _place(kb, ko, np.arange(keys.size, dtype=np.int64))
    _remap_values(value, keys)
    return bc, value


# ------------------------------------------------------------------ labelled units
# units[s] = BASE << BASE_SHIFT | LEAF (a key ends at s) | the label of s. A step from unit u
# by byte c goes to cell (u >> BASE_SHIFT) + c and succeeds if that cell's label is c: with
# BASEs unique, only the child labelled c of this node has that label there. A free cell's
# label LABEL_MASK matches no byte; a node without children points at 256 free cells past the
# end. uint32 holds BASEs below 2**22 (tries of up to ~4M nodes), uint64 any.
LABEL_MASK = 0x1FF
LEAF = 0x200
BASE_SHIFT = 10
NARROW_CELLS = 1 << (32 - BASE_SHIFT)


def labelled_units(bc, value, wide=None):
    """The trie ``(bc, value)`` as labelled units: uint32 when every BASE fits, else uint64
    (``wide`` forces the choice)."""
    size = value.shape[0]
    if wide is None:
        wide = size + 256 > NARROW_CELLS
    units = np.full(size + 256, LABEL_MASK, np.uint64 if wide else np.uint32)
    _fill_units(bc, value, units)
    return units


@kernel
def _fill_units(bc, value, units):
    size = value.shape[0]
    for s in range(size):
        parent = bc[2 * s + 1]
        if s != 0 and parent < 0:
            continue  # a free cell
        base = bc[2 * s]
        if base == 0:
            base = size
        label = s - bc[2 * parent] if s != 0 else LABEL_MASK
        units[s] = (np.int64(base) << BASE_SHIFT) | (LEAF if value[s] >= 0 else 0) | label


@kernel
def unit_child(units, node, c):
    """Child of ``node`` labelled byte ``c`` in labelled units, or -1."""
    nx = (np.int64(units[node]) >> BASE_SHIFT) + c
    if (np.int64(units[nx]) & LABEL_MASK) != c:
        return -1
    return nx


# ------------------------------------------------------------------ search
@leaf_kernel
def common_prefix_search(bc, value, text, start, end, out_ids, out_lens):
    """Every key that is a prefix of ``text[start:end]``: fills ids/lengths, returns the count."""
    node = 0
    n = 0
    for i in range(start, end):
        nx = bc[2 * node] + text[i]
        if bc[2 * nx + 1] != node:
            break
        node = nx
        v = value[node]
        if v >= 0 and n < out_ids.shape[0]:
            out_ids[n] = v
            out_lens[n] = i + 1 - start
            n += 1
    return n


@inline_kernel
def bc_child(bc, value, node, c):
    """The child of ``node`` labelled ``c`` in the base/check trie ``bc``, or -1 (a cell outside
    the trie included)."""
    nx = bc[2 * node] + c
    if nx < 0 or nx >= value.shape[0] or bc[2 * nx + 1] != node:
        return -1
    return nx


@leaf_kernel
def longest_prefix(bc, value, text, start, end):
    """(id, length) of the longest key that is a prefix of ``text[start:end]``; (-1, 0) if none."""
    node = 0
    best = -1
    best_len = 0
    for i in range(start, end):
        nx = bc[2 * node] + text[i]
        if bc[2 * nx + 1] != node:
            break
        node = nx
        v = value[node]
        if v >= 0:
            best = v
            best_len = i + 1 - start
    return best, best_len


@kernel
def exact_match(bc, value, text, start, end):
    """Id of the key equal to ``text[start:end]``, or -1."""
    node = 0
    for i in range(start, end):
        nx = bc[2 * node] + text[i]
        if bc[2 * nx + 1] != node:
            return -1
        node = nx
    if start == end:
        return -1
    return value[node]


class DoubleArrayTrie:
    """Python handle: ``bc`` and ``value`` arrays plus convenience lookups."""

    __slots__ = ("bc", "value")

    def __init__(self, bc, value):
        self.bc = bc
        self.value = value

    @classmethod
    def build(cls, key_bytes, key_offsets, key_ids):
        return cls(*build_trie(key_bytes, key_offsets, key_ids))

    def prefixes(self, key: bytes):
        buf = np.frombuffer(key, np.uint8)
        ids = np.empty(max(1, buf.size), np.int32)
        lens = np.empty(max(1, buf.size), np.int32)
        n = common_prefix_search(self.bc, self.value, buf, 0, buf.size, ids, lens)
        return list(zip(ids[:n].tolist(), lens[:n].tolist()))

    def get(self, key: bytes, default=-1):
        buf = np.frombuffer(key, np.uint8)
        v = exact_match(self.bc, self.value, buf, 0, buf.size)
        return default if v < 0 else int(v)
