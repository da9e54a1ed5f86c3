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


def byte_pairs(vocab, byte_ids, merge_map):
    """``(pair_codes, pair_values)`` of ``models.bpe.bytelevel.byte_pair_table``: uint16 codes
    (128 KB, stays in L2) unless more than 65534 byte pairs merge."""
    codes = np.empty(65536, np.int32)
    values = K.byte_pair_table(vocab.piece_bytes, vocab.piece_offsets, byte_ids, merge_map.keys,
                               merge_map.values, codes)
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
