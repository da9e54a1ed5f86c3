"""Building ``ByteLevelBPE``'s arrays: the vocabulary from ranks, byte ids, merges read back
from a merge table, and the checks a rank file's or a cache's tables must pass before a kernel
reads them."""
import numpy as np

from .bpe import bytelevel as K
from ..vocab import CONTROL, NORMAL, UNUSED, Vocab, check_dense_ids


def merges_from_table(model):
    """One merge per multi-byte token, in rank order: BPE over the token's bytes using only
    lower-ranked merges leaves exactly two parts (tiktoken's ``bpe(..., max_rank)``)."""
    ranks = model.ranks
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        parts = [token[i:i + 1] for i in range(len(token))]
        while len(parts) > 2:
            best, where = None, -1
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < rank and (best is None or r < best):
                    best, where = r, i
            if best is None:
                break
            parts[where:where + 2] = [parts[where] + parts[where + 1]]
        if len(parts) == 2:
            merges.append((parts[0], parts[1]))
    return merges


def token_arrays(tokens):
    """``(piece_bytes, piece_offsets, ids)`` of a ``dict[bytes, int]``."""
    for tok in tokens:
        if not isinstance(tok, bytes) or not tok:
            raise ValueError(f"token {tok!r} must be non-empty bytes")
    offsets = np.zeros(len(tokens) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, tokens), np.int64, len(tokens)), out=offsets[1:])
    try:
        ids = np.fromiter(tokens.values(), np.int64, len(tokens))
    except (TypeError, ValueError, OverflowError):
        raise ValueError("token ids must be integers") from None
    return np.frombuffer(b"".join(tokens), np.uint8), offsets, ids


def build_vocab(piece_bytes, piece_offsets, ids, special_tokens, where="vocabulary"):
    """A ``Vocab`` over ids 0..max (token k at ``ids[k]``, then the special tokens) with gaps
    marked UNUSED; returns (vocab, rank per id or -1). ``ValueError`` (naming ``where``) for
    ids too sparse for that (``vocab.check_dense_ids``), before anything is sized by them."""
    if ids.size == 0:
        raise ValueError("empty vocabulary")
    for text in special_tokens:
        if not isinstance(text, str) or not text:
            raise ValueError(f"special token {text!r} must be a non-empty str")
    sp_ids = np.fromiter(special_tokens.values(), np.int64, len(special_tokens))
    all_ids = np.concatenate([ids, sp_ids])
    lo, n = int(all_ids.min()), int(all_ids.max()) + 1
    if lo < 0 or n > 1 << 30:
        raise ValueError(f"token id {lo if lo < 0 else n - 1} is out of range [0, 2**30)")
    check_dense_ids(n - 1, all_ids.size, where)
    taken = np.bincount(all_ids, minlength=n)
    if taken.max() > 1:
        i = int(taken.argmax())
        who = [t for t, j in special_tokens.items() if j == i]
        raise ValueError(f"special token {who[0]!r} reuses id {i}" if who else f"id {i} is given to two tokens")
    sp = [t.encode("utf-8") for t in special_tokens]
    sp_offsets = np.cumsum([0] + [len(b) for b in sp], dtype=np.int64)
    all_bytes = np.concatenate([piece_bytes, np.frombuffer(b"".join(sp), np.uint8)])
    all_offsets = np.concatenate([piece_offsets, piece_offsets[-1] + sp_offsets[1:]])
    from ..formats.rankfile import pieces_by_id
    vocab_bytes, vocab_offsets = pieces_by_id(all_bytes, all_offsets, all_ids, n)
    kinds = np.full(n, UNUSED, np.int8)
    kinds[ids] = NORMAL
    kinds[sp_ids] = CONTROL
    rank_of = np.full(n, -1, np.int64)
    rank_of[ids] = ids
    return Vocab.from_arrays(vocab_bytes, vocab_offsets, kinds=kinds), rank_of


def check_table_ids(tables, n):
    """ValueError unless every id the encode kernels read from the derived tables is one of the
    n pieces: hash-map slots (-1 = free), short-map rows (0 = free), merge-table keys (two ids,
    -1 = free) and values (``rank << 32 | merged``), byte-pair values, byte-pair codes (``k + 2``
    -> value k). A cache file's digest already rules out damage; this keeps a kernel's reads in
    bounds whatever the file. A few vectorized passes (~2 ms for GPT-2's tables)."""
    low = np.int64(0xFFFFFFFF)
    slot_ids = tables["slot_ids"]
    meta = tables["short_map"][:, 2]
    table = tables["merge_table"]
    keys, values = table[:, 0], table[:, 1]
    free = keys == -1
    pair_values = tables["pair_values"]
    checks = {
        "slot_ids": slot_ids.size == 0 or (slot_ids.min() >= -1 and slot_ids.max() < n),
        # a used row: length 1..16 in the low byte, the id above it
        "short_map": meta.min() >= 0 and meta.max() >> 8 < n
        and not ((meta != 0) & (((meta & 255) == 0) | ((meta & 255) > 16))).any(),
        "merge_table": not (~free & ((keys < 0) | (keys >> 32 >= n) | ((keys & low) >= n)
                                     | (values < 0) | ((values & low) >= n))).any(),
        "pair_values": pair_values.size == 0 or (pair_values.min() >= 0 and (pair_values & low).max() < n),
        "pair_codes": int(tables["pair_codes"].max()) <= pair_values.shape[0] + 1,
    }
    for name, ok in checks.items():
        if not ok:
            raise ValueError(f"table {name} refers to ids outside the vocabulary of {n}")


def byte_pair_table(piece_bytes, piece_offsets, byte_ids, merge_keys, merge_values):
    """``(codes, values)``: ``codes`` (``int32[65536]``, indexed ``a << 8 | b``) for every byte
    pair is 0 when no token contains the bytes ``a b`` (a cut, see ``K.first_cut``), 1 when some
    token does but the single-byte tokens of a and b do not merge, ``k + 2`` when they merge
    and the merge-table value is ``values[k]``, numbered in pair order. The merges are the
    ``IntMap``'s arrays (on a key given twice the first wins, as ``intmap_build``). (NumPy: as a
    kernel it compiled in ~0.4 s on a first run, for ~1 ms of work.)"""
    total = piece_bytes.shape[0]
    inner = np.ones(total, np.bool_)  # positions k whose byte k - 1 is in the same token
    starts = piece_offsets[:-1]
    inner[starts[starts < total]] = False
    k = np.flatnonzero(inner)
    codes = np.zeros(65536, np.int32)
    codes[(piece_bytes[k - 1].astype(np.int64) << 8) | piece_bytes[k]] = 1
    pairs = np.flatnonzero(codes)
    query = (byte_ids[pairs >> 8].astype(np.int64) << 32) | byte_ids[pairs & 255].astype(np.int64)
    keys, first = np.unique(merge_keys, return_index=True)
    at = np.minimum(np.searchsorted(keys, query), max(keys.shape[0] - 1, 0))
    merge = keys[at] == query if keys.shape[0] else np.zeros(query.shape[0], np.bool_)
    codes[pairs[merge]] = np.arange(2, 2 + int(merge.sum()), dtype=np.int32)
    return codes, np.ascontiguousarray(merge_values[first[at[merge]]], np.int64)


def token_filter(piece_bytes, piece_offsets, words):
    """A one-hash Bloom filter (``uint64[words]``) of the pieces of 2..16 bytes: bit
    ``short_key_hash(k0, k1, n)`` of each piece's packed key (``pack_key``), as ``K.maybe_token``
    reads it. (NumPy: as a kernel it compiled in ~0.5 s on a first run, for ~1 ms of work.)"""
    lengths = np.diff(piece_offsets)
    short = np.flatnonzero((lengths >= 2) & (lengths <= K.SHORT_KEY_BYTES))
    n, start = lengths[short], piece_offsets[:-1][short]
    column = np.arange(K.SHORT_KEY_BYTES)
    inside = column < n[:, None]
    keys = np.zeros((short.shape[0], K.SHORT_KEY_BYTES), np.uint8)
    keys[inside] = piece_bytes[(start[:, None] + column)[inside]]
    k = keys.view("<u8")  # pack_key's two little-endian words
    h = (k[:, 0] * np.uint64(0x9E3779B97F4A7C15) + k[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)
         + n.astype(np.uint64)) >> np.uint64(24)  # short_key_hash
    bits = np.zeros(words, np.uint64)
    np.bitwise_or.at(bits, (h >> np.uint64(6)) & np.uint64(words - 1), np.uint64(1) << (h & np.uint64(63)))
    return bits


def byte_pairs(vocab, byte_ids, merge_keys, merge_values):
    """``(pair_codes, pair_values)`` of ``byte_pair_table`` over the merge table's arrays:
    uint16 codes (128 KB, stays in L2) unless more than 65534 byte pairs merge."""
    codes, values = byte_pair_table(vocab.piece_bytes, vocab.piece_offsets, byte_ids, merge_keys, merge_values)
    if values.shape[0] <= 65534:
        codes = codes.astype(np.uint16)
    return codes, values


#: the bytes that never occur in UTF-8
NOT_UTF8 = np.array([0xC0, 0xC1] + list(range(0xF5, 0x100)), np.int64)


def byte_ids_of(piece_bytes, piece_offsets, ids, utf8_only=False):
    """The id of each single byte's token (token k at ``ids[k]``). ``utf8_only``: a byte that
    never occurs in UTF-8 may have none (it gets id 0, which no UTF-8 text reaches)."""
    one = np.flatnonzero(np.diff(piece_offsets) == 1)
    byte_ids = np.full(256, -1, np.int32)
    byte_ids[piece_bytes[piece_offsets[one]]] = ids[one]
    if utf8_only:
        byte_ids[NOT_UTF8[byte_ids[NOT_UTF8] < 0]] = 0
    if (byte_ids < 0).any():
        b = int(np.flatnonzero(byte_ids < 0)[0])
        raise ValueError(f"the vocabulary has no token for the single byte 0x{b:02x}: "
                         "byte-level BPE needs all 256")
    return byte_ids
