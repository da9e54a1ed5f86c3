"""Aho-Corasick automaton over the Unigram lattice trie, for a Viterbi that reads each byte once.

The plain lattice walk (``models.unigram.viterbi.viterbi``) starts a trie walk at every character and
follows it as long as some piece continues: 4 steps a character in English, 6 in Russian or
Japanese, each a load that waits for the one before. The automaton instead reads the text once:
its state after byte e is the longest suffix of ``text[:e]`` that begins some piece, and every
piece that ends at e is a suffix of that state. A byte costs one step, plus the failure steps
(one for every byte the state sheds, so fewer than one a byte on average); the pieces that end at
e come from a flat list kept per state, longest first, which is the order in which
sentencepiece's walk proposes them to position e (by increasing start).

States are the trie's own cells (``kernels.trie``: labelled units, the root at 0). Arrays:

    au    int64[size]   fail state << 32 | the state's labelled unit (one load a step)
    outs  int32[size]   first record << 8 | number of records of the pieces ending at the state
    rec   int32[2 * R]  piece id << 10 | length in bytes, float32 score bits (``idsc``'s)

Records are only valid on text where pieces start at character starts: the caller uses the
automaton when the pieces and the normalized text are valid UTF-8 (``unigram.lattice_utf8_ok``).
``build_automaton`` returns empty arrays when a limit does not hold (a piece of 1024 bytes or
more, more than 255 pieces ending at one state, ids of 2**21 or more, 2**23 records or more,
units wider than 32 bits); the Viterbi then takes the walk.
"""
import numpy as np

from ..._jit import inline_kernel, kernel
from ...kernels.trie import BASE_SHIFT, LABEL_MASK, LEAF

MAX_LEN = 1 << 10
MAX_ID = 1 << 21
MAX_RECORDS = 1 << 23
LOW32 = 0xFFFFFFFF


@kernel
def _bfs_order(bc, size):
    """The trie's cells in order of depth (the root first), and each cell's depth (-1: free)."""
    depth = np.full(size, -1, np.int32)
    depth[0] = 0
    path = np.empty(size, np.int32)
    for s in range(1, size):
        # climb to a cell of known depth, then come back down
        k = 0
        t = s
        while depth[t] < 0 and bc[2 * t + 1] >= 0:
            path[k] = t
            k += 1
            t = bc[2 * t + 1]
        if depth[t] < 0:
            continue  # a free cell
        d = depth[t]
        while k > 0:
            k -= 1
            d += 1
            depth[path[k]] = d
    count = np.zeros(size + 1, np.int64)
    for s in range(size):
        if depth[s] >= 0:
            count[depth[s] + 1] += 1
    for d in range(size):
        count[d + 1] += count[d]
    order = np.empty(count[size], np.int32)
    for s in range(size):
        if depth[s] >= 0:
            order[count[depth[s]]] = s
            count[depth[s]] += 1
    return order, depth


@kernel
def build_automaton(units, bc, idsc):
    """(au, outs, rec) for the trie ``bc`` (``kernels.trie``) as ``units`` with ``idsc``
    (``viterbi.pack_lattice_trie``); empty arrays when a limit of the module doc fails."""
    size = units.shape[0] - 256  # (labelled units carry 256 free cells past the trie)
    order, depth = _bfs_order(bc, size)
    fail = np.zeros(size, np.int32)
    dict_link = np.full(size, -1, np.int32)  # the longest proper suffix state where a piece ends
    count = np.zeros(size, np.int64)
    total = np.int64(0)
    for k in range(1, order.shape[0]):
        y = order[k]
        x = bc[2 * y + 1]
        c = np.int64(units[y]) & LABEL_MASK
        f = 0
        if x != 0:
            f = fail[x]
            while True:
                z = (np.int64(units[f]) >> BASE_SHIFT) + c
                if (np.int64(units[z]) & LABEL_MASK) == c:
                    f = z
                    break
                if f == 0:
                    break
                f = fail[f]
        fail[y] = f
        dict_link[y] = f if (np.int64(units[f]) & LEAF) != 0 and f != 0 else dict_link[f]
        leaf = (np.int64(units[y]) & LEAF) != 0
        count[y] = (1 if leaf else 0) + (count[dict_link[y]] if dict_link[y] >= 0 else 0)
        total += count[y]
        if count[y] > 255 or total >= MAX_RECORDS or (leaf and (depth[y] >= MAX_LEN or idsc[2 * y] >= MAX_ID)):
            return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)
    au = np.empty(units.shape[0], np.int64)
    for s in range(units.shape[0]):
        au[s] = np.int64(units[s])
        if au[s] > LOW32:  # (wide units, BASE >= 2**22: a trie of millions of nodes)
            return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)
    outs = np.zeros(size, np.int32)
    rec = np.empty(2 * total, np.int32)
    p = 0
    for k in range(1, order.shape[0]):
        y = order[k]
        au[y] |= np.int64(fail[y]) << 32
        outs[y] = (p << 8) | count[y]
        z = y if (np.int64(units[y]) & LEAF) != 0 else dict_link[y]
        while z >= 0:
            rec[2 * p] = (idsc[2 * z] << 10) | depth[z]
            rec[2 * p + 1] = idsc[2 * z + 1]
            p += 1
            z = dict_link[z]
    return au, outs, rec


@inline_kernel
def automaton_step(au, x, u, c):
    """The state after byte ``c`` (uint64) from state x (uint64) whose ``au`` entry is u:
    (state, its entry)."""
    shift = np.uint64(BASE_SHIFT)
    low = np.uint64(LOW32)
    label = np.uint64(LABEL_MASK)
    while True:
        y = ((np.uint64(u) & low) >> shift) + c
        v = au[y]
        if (np.uint64(v) & label) == c:
            return y, v
        if x == np.uint64(0):
            return x, u
        x = np.uint64(u) >> np.uint64(32)
        u = au[x]
