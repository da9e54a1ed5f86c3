"""The byte-level BPE merge table from a rank file's ranks (tiktoken semantics): every split of a
token into two tokens is a merge to it, ranked by the token's rank."""
import numpy as np

from ...kernels import hashbuild as hb


def merge_table_from_ranks(piece_bytes, piece_offsets, slot_ids, slot_hashes, ranks):
    """tiktoken semantics: every split of a token into two tokens is a merge to it, ranked by
    the token's rank. Returns parallel ``(keys, values)`` for ``IntMap`` (key
    ``left << 32 | right``, value ``rank << 32 | token``), by token, then by the left part's
    length. ``ranks[i] < 0``: piece i is no token; ``slot_ids``, ``slot_hashes``: the pieces'
    ``BytesMap``.

    Each part of a split is a token shorter than the whole, so no longer than ``p``, the
    longest token length below the token's ``length``: ``length - p <= left <= p``. The
    hashes of every left part come from one pass over the tokens (``hashbuild.fnv_spans`` keeps
    the state after each byte), and a right part is hashed only when its left part is a token:
    near-linear in the vocabulary's bytes whatever its longest token (hashing both parts of
    every split was quadratic: a 64 KB token took 14 s, 1 MB about 40 min).

    NumPy: the kernel that did this compiled in ~0.6 s on a first run, for ~10 ms of work."""
    starts, lengths = hb.piece_spans(piece_offsets)
    ranks = np.asarray(ranks)
    distinct = np.unique(lengths)
    below = np.searchsorted(distinct, lengths) - 1
    p = np.where(below >= 0, distinct[np.maximum(below, 0)], 0)
    lo, hi = np.maximum(1, lengths - p), np.minimum(lengths - 1, p)
    tokens = np.flatnonzero((ranks >= 0) & (lo <= hi))
    counts = (hi - lo + 1)[tokens]
    t = np.repeat(tokens, counts)
    cut = lo[t] + np.arange(t.size) - np.repeat(np.cumsum(counts) - counts, counts)

    prefixes = hb.fnv_spans(piece_bytes, starts, lengths, keep_prefixes=True)[1]

    def tokens_of(span_starts, span_lengths, span_hashes):
        found = hb.find_pieces(slot_ids, slot_hashes, piece_bytes, piece_offsets, span_starts, span_lengths,
                               span_hashes)
        return np.where((found >= 0) & (ranks[np.maximum(found, 0)] >= 0), found, -1)

    left = tokens_of(starts[t], cut, hb.fnv_finish(prefixes[starts[t] + cut - 1], cut))
    keep = left >= 0
    t, cut, left = t[keep], cut[keep], left[keep]
    right_starts, right_lengths = starts[t] + cut, lengths[t] - cut
    right = tokens_of(right_starts, right_lengths, hb.hash_spans(piece_bytes, right_starts, right_lengths))
    keep = right >= 0
    keys = (left[keep].astype(np.int64) << 32) | right[keep]
    values = (ranks[t[keep]].astype(np.int64) << 32) | t[keep]
    return keys, values
