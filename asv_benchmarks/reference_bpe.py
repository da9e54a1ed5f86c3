"""Three reference BPE merge algorithms, for the seed table (bench_seed_bpe.py).

They are deliberately small and separate from the library, but compiled with ``@njit``
exactly like it, and they use the same merge table (nbtok's ``IntMap``), the same pair
lookup (``nbtok.models.bpe.merge.pair_value``) and the same array heap, so a comparison with
nbtok's production kernel (``nbtok.models.bpe.merge.bpe_merge``: priority queue + linked list)
is about the algorithm only.

Merge table (see nbtok/models/bpe/merge.py): ``key = left_id << 32 | right_id``,
``value = rank << 32 | merged_id``; the lowest rank merges first, ties go to the leftmost
pair. All four algorithms therefore produce the same tokens.

* ``naive_bpe``          rescans every adjacent pair for the best one after each merge
                         and deletes the right symbol by shifting the arrays: O(N^2).
* ``naive_presplit_bpe`` the same, run word by word after splitting the text before
                         each ``▁`` (whitespace pre-splitting): O(sum of word_len^2).
                         Equal to whole-text BPE when no piece has ``▁`` after its first
                         character (true for sentencepiece models trained with the
                         default ``split_by_whitespace``).
* ``pq_tree_bpe``        priority queue of candidate pairs plus an ordered set of live
                         symbol positions kept in a balanced binary tree (leaf-oriented,
                         with live counts per subtree): finding a neighbour and deleting
                         a symbol cost O(log N), where the linked list costs O(1).

SentencePiece-style input: ``_common.sentencepiece_text`` (whitespace -> ``▁`` plus a
leading ``▁``), one initial symbol per code point, unknown characters -> the unk id (an
unk symbol never merges). ``sp_merge_table`` turns a sentencepiece BPE model into a merge
table with sentencepiece's rule: *any* split of a piece into two pieces merges, with the
priority of the merged piece's score (higher first; equal scores share a rank).
"""
import numpy as np
from numba import njit

from . import _common as common  # noqa: I001  (first: puts the working tree on sys.path if needed)
from nbtok.models.bpe.merge import bpe_merge, new_scratch, pair_value
from nbtok.kernels.hashmap import IntMap
from nbtok.kernels.heap import heap_pop, heap_push, heapify

jit = njit(cache=True, nogil=True)

LOW32 = 0xFFFFFFFF
NO_PAIR = np.int64(-1)
SPACE = 0x2581  # ▁


# ---------------------------------------------------------------------- naive, O(N^2)
@jit
def _naive_core(sym, vals, n, map_keys, map_values):
    """Merge ``sym[:n]`` in place (``vals`` = scratch of size n); returns the new length."""
    if n < 2:
        return n
    for i in range(n - 1):
        vals[i] = pair_value(map_keys, map_values, sym[i], sym[i + 1])
    m = n
    while m > 1:
        best = -1
        best_rank = np.int64(0)
        for i in range(m - 1):  # rescan every pair
            v = vals[i]
            if v >= 0 and (best < 0 or (v >> 32) < best_rank):
                best = i
                best_rank = v >> 32
        if best < 0:
            break
        sym[best] = np.int32(vals[best] & LOW32)
        for k in range(best + 1, m - 1):  # delete the right symbol: shift everything after it
            sym[k] = sym[k + 1]
            vals[k] = vals[k + 1]
        m -= 1
        if best > 0:
            vals[best - 1] = pair_value(map_keys, map_values, sym[best - 1], sym[best])
        if best < m - 1:
            vals[best] = pair_value(map_keys, map_values, sym[best], sym[best + 1])
    return m


@jit
def naive_bpe(ids, map_keys, map_values):
    """Whole-text naive BPE: returns the token ids."""
    n = ids.shape[0]
    sym = ids.copy()
    vals = np.empty(max(n, 1), np.int64)
    m = _naive_core(sym, vals, n, map_keys, map_values)
    return sym[:m].copy()


@jit
def naive_presplit_bpe(cps, ids, map_keys, map_values):
    """Naive BPE per word; a word starts at each ``▁`` (code points ``cps``, symbols ``ids``)."""
    n = ids.shape[0]
    out = np.empty(n, np.int32)
    sym = np.empty(n, np.int32)
    vals = np.empty(max(n, 1), np.int64)
    m = 0
    start = 0
    while start < n:
        end = start + 1
        while end < n and cps[end] != SPACE:
            end += 1
        w = end - start
        for k in range(w):
            sym[k] = ids[start + k]
        r = _naive_core(sym, vals, w, map_keys, map_values)
        for k in range(r):
            out[m + k] = sym[k]
        m += r
        start = end
    return out[:m].copy()


# ---------------------------------------------------------------------- priority queue + tree
@jit
def _tree_delete(cnt, leaf0, i):
    node = leaf0 + i
    while node >= 1:
        cnt[node] -= 1
        node >>= 1


@jit
def _tree_next(cnt, leaf0, i):
    """Smallest live position > i, or -1: a search from the root, as in any ordered map."""
    node = 1
    cand = -1
    half = leaf0 >> 1
    while node < leaf0:  # walk down to leaf i, remembering the last right subtree passed by
        if i & half:
            node = 2 * node + 1
        else:
            if cnt[2 * node + 1] > 0:
                cand = 2 * node + 1
            node = 2 * node
        half >>= 1
    if cand < 0:
        return -1
    node = cand
    while node < leaf0:  # leftmost live leaf of that subtree
        node = 2 * node if cnt[2 * node] > 0 else 2 * node + 1
    return node - leaf0


@jit
def _tree_prev(cnt, leaf0, i):
    """Largest live position < i, or -1 (search from the root)."""
    node = 1
    cand = -1
    half = leaf0 >> 1
    while node < leaf0:
        if i & half:
            if cnt[2 * node] > 0:
                cand = 2 * node
            node = 2 * node + 1
        else:
            node = 2 * node
        half >>= 1
    if cand < 0:
        return -1
    node = cand
    while node < leaf0:  # rightmost live leaf
        node = 2 * node + 1 if cnt[2 * node + 1] > 0 else 2 * node
    return node - leaf0


@jit
def pq_tree_bpe(ids, map_keys, map_values):
    """Priority queue of pairs + balanced tree over live positions: O(N log N)."""
    n = ids.shape[0]
    sym = ids.copy()
    if n < 2:
        return sym
    leaf0 = 1
    while leaf0 < n:
        leaf0 *= 2
    cnt = np.zeros(2 * leaf0, np.int32)
    for i in range(n):
        cnt[leaf0 + i] = 1
    for node in range(leaf0 - 1, 0, -1):
        cnt[node] = cnt[2 * node] + cnt[2 * node + 1]
    heap = np.empty(3 * n + 1, np.int64)
    pair_at = np.empty(n, np.int64)
    size = 0
    for i in range(n - 1):
        v = pair_value(map_keys, map_values, sym[i], sym[i + 1])
        pair_at[i] = v
        if v >= 0:
            heap[size] = ((v >> 32) << 32) | i
            size += 1
    pair_at[n - 1] = -1
    heapify(heap, size)
    while size > 0:
        key, size = heap_pop(heap, size)
        i = key & LOW32
        v = pair_at[i]
        if v < 0 or (v >> 32) != (key >> 32):
            continue  # stale
        j = _tree_next(cnt, leaf0, i)
        sym[i] = np.int32(v & LOW32)
        pair_at[j] = -1
        _tree_delete(cnt, leaf0, j)
        p = _tree_prev(cnt, leaf0, i)
        if p >= 0:
            pv = pair_value(map_keys, map_values, sym[p], sym[i])
            pair_at[p] = pv
            if pv >= 0:
                size = heap_push(heap, size, ((pv >> 32) << 32) | p)
        k = _tree_next(cnt, leaf0, i)
        if k >= 0:
            nv = pair_value(map_keys, map_values, sym[i], sym[k])
            pair_at[i] = nv
            if nv >= 0:
                size = heap_push(heap, size, ((nv >> 32) << 32) | i)
        else:
            pair_at[i] = -1
    out = np.empty(cnt[1], np.int32)
    m = 0
    i = 0  # position 0 is never deleted (only right symbols are)
    while i >= 0:
        out[m] = sym[i]
        m += 1
        i = _tree_next(cnt, leaf0, i)
    return out


# ---------------------------------------------------------------------- production kernel
@jit
def linked_list_bpe(ids, map_keys, map_values):
    """nbtok's production kernel (priority queue + linked list, ``bpe_merge``) on a copy of ``ids``."""
    sym = ids.copy()
    n = sym.shape[0]
    heap, prev, nxt, pair_at = new_scratch(n)
    m = bpe_merge(sym, n, map_keys, map_values, heap, prev, nxt, pair_at, 0.0)
    return sym[:m].copy()


def merge_unknowns(ids, unk_id):
    """sentencepiece's output rule (byte_fallback off): a run of unk ids becomes one unk."""
    ids = np.asarray(ids)
    if ids.size == 0:
        return ids
    keep = np.ones(ids.shape[0], bool)
    keep[1:] = ~((ids[1:] == unk_id) & (ids[:-1] == unk_id))
    return ids[keep]


ALGORITHMS = {
    "naive": lambda cps, ids, t: naive_bpe(ids, t.keys, t.values),
    "naive_presplit": lambda cps, ids, t: naive_presplit_bpe(cps, ids, t.keys, t.values),
    "pq_tree": lambda cps, ids, t: pq_tree_bpe(ids, t.keys, t.values),
    "pq_linked_list": lambda cps, ids, t: linked_list_bpe(ids, t.keys, t.values),
}


# ---------------------------------------------------------------------- model -> merge table
class MergeTable:
    """A sentencepiece BPE model as a merge table plus a char -> initial symbol map."""

    def __init__(self, pieces, scores, normal, unk_id):
        self.pieces = pieces
        self.unk_id = unk_id
        piece_id = {}
        for i, p in enumerate(pieces):
            if normal[i] and p not in piece_id:
                piece_id[p] = i
        self.char_id = {p: i for p, i in piece_id.items() if len(p) == 1}
        # dense rank of the merged piece's score, highest score first
        uniq = sorted({float(scores[i]) for i in piece_id.values()}, reverse=True)
        rank_of = {s: r for r, s in enumerate(uniq)}
        keys, values = [], []
        for p, pid in piece_id.items():
            rank = rank_of[float(scores[pid])]
            for k in range(1, len(p)):
                left = piece_id.get(p[:k])
                right = piece_id.get(p[k:])
                if left is not None and right is not None:
                    keys.append((left << 32) | right)
                    values.append((rank << 32) | pid)
        self.table = IntMap.from_arrays(np.array(keys, np.int64), np.array(values, np.int64))
        self.keys = self.table.keys
        self.values = self.table.values

    @classmethod
    def from_nbtok(cls, model):
        """From nbtok's SentencePiece model object (``model.vocab``: pieces, scores, kinds)."""
        v = model.vocab
        pieces = [b.decode("utf-8", errors="replace") for b in v.pieces()]
        normal = (v.kinds == 1) | (v.kinds == 4)  # NORMAL, USER_DEFINED
        unk = int(np.flatnonzero(v.kinds == 2)[0])
        return cls(pieces, v.scores.tolist(), normal.tolist(), unk)

    @classmethod
    def load(cls, model_file):
        """Read a .model with sentencepiece, or with nbtok when sentencepiece is missing."""
        try:
            return cls.from_sentencepiece(model_file)
        except NotImplementedError:
            import nbtok
            return cls.from_nbtok(nbtok.Tokenizer.from_sentencepiece(str(model_file)).model)

    @classmethod
    def from_sentencepiece(cls, model_file):
        spm = common.peer_or_skip("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=str(model_file))
        n = sp.get_piece_size()
        pieces = [sp.id_to_piece(i) for i in range(n)]
        scores = [sp.get_score(i) for i in range(n)]
        normal = [not (sp.is_unknown(i) or sp.is_control(i) or sp.is_unused(i) or sp.is_byte(i))
                  for i in range(n)]
        return cls(pieces, scores, normal, sp.unk_id())

    def symbols(self, sp_text):
        """``(cps uint32[n], ids int32[n])``: one initial symbol per code point."""
        cps = np.frombuffer(sp_text.encode("utf-32-le"), np.uint32)
        uniq, inverse = np.unique(cps, return_inverse=True)
        lut = np.array([self.char_id.get(chr(c), self.unk_id) for c in uniq.tolist()], np.int32)
        return cps, lut[inverse.reshape(-1)].astype(np.int32)


def train_shakespeare_model(vocab_size=8000):
    """A sentencepiece BPE model trained on tiny Shakespeare (identity normalization), cached."""
    path = common.cache_dir() / f"tinyshakespeare_bpe_{vocab_size}.model"
    if not path.is_file():
        spm = common.peer_or_skip("sentencepiece")
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            spm.SentencePieceTrainer.train(
                input=str(common.corpus_path("tinyshakespeare")), model_writer=f,
                vocab_size=vocab_size, model_type="bpe", normalization_rule_name="identity",
                num_threads=1, minloglevel=2)
        tmp.replace(path)
    return path
