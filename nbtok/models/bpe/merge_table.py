"""The byte-level BPE merge table from a rank file's ranks (tiktoken semantics): every split of a
token into two tokens is a merge to it, ranked by the token's rank."""
import numpy as np

from ..._jit import kernel
from ...kernels.hashmap import FNV_OFFSET, bytesmap_get, bytesmap_get_hashed, fnv_finish, fnv_step


def merge_table_from_ranks(piece_bytes, piece_offsets, slot_ids, slot_hashes, ranks):
    """tiktoken semantics: every split of a token into two tokens is a merge to it, ranked by
    the token's rank. Returns parallel ``(keys, values)`` for ``IntMap``.

    Near-linear in the vocabulary's bytes whatever its longest token (hashing both parts of
    every split was quadratic: a 64 KB token took 14 s, 1 MB about 40 min): a token is split
    only where both parts can be tokens, the hashes of its left parts come from one pass over it
    (``fnv_step``), and the right part is hashed only when the left one is a token.

    Each part of a split is a token shorter than the whole, so no longer than ``p``, the
    longest token length below the token's ``length``: ``length - p <= left <= p``. Those
    bounds come from NumPy here (``np.unique`` and ``np.searchsorted`` in the kernel compiled
    ~2.5 s more on a first run, for ~1 ms of work), and so does the output (see
    ``kernels.hashmap.intmap_build``)."""
    lengths = np.diff(piece_offsets)
    distinct = np.unique(lengths)
    below = np.searchsorted(distinct, lengths) - 1
    p = np.where(below >= 0, distinct[np.maximum(below, 0)], 0)
    lo, hi = np.maximum(1, lengths - p), np.minimum(lengths - 1, p)
    out = np.empty((2, int(np.maximum(hi - lo + 1, 0).sum())), np.int64)
    m = _merge_table(piece_bytes, piece_offsets, slot_ids, slot_hashes, ranks, lo, hi, out)
    return out[0, :m].copy(), out[1, :m].copy()


@kernel
def _merge_table(piece_bytes, piece_offsets, slot_ids, slot_hashes, ranks, lo, hi, out):
    """``merge_table_from_ranks`` into ``out[0, :m]`` (keys) and ``out[1, :m]`` (values), the left
    part of a split of token t ``lo[t]..hi[t]`` bytes; returns m."""
    n = piece_offsets.shape[0] - 1
    keys = out[0]
    values = out[1]
    m = 0
    for t in range(n):
        s = piece_offsets[t]
        e = piece_offsets[t + 1]
        if ranks[t] < 0 or lo[t] > hi[t]:
            continue
        h = FNV_OFFSET
        for j in range(s, s + lo[t] - 1):
            h = fnv_step(h, piece_bytes[j])
        for cut in range(lo[t], hi[t] + 1):
            k = s + cut
            h = fnv_step(h, piece_bytes[k - 1])
            left = bytesmap_get_hashed(slot_ids, slot_hashes, piece_bytes, piece_offsets, piece_bytes, s, k,
                                       fnv_finish(h, cut))
            if left < 0 or ranks[left] < 0:
                continue
            right = bytesmap_get(slot_ids, slot_hashes, piece_bytes, piece_offsets, piece_bytes, k, e)
            if right < 0 or ranks[right] < 0:
                continue
            keys[m] = (np.int64(left) << 32) | right
            values[m] = (np.int64(ranks[t]) << 32) | t
            m += 1
    return m
