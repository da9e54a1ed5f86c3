"""The vocabulary: every piece as bytes in one ragged buffer, plus score and kind per id.

    piece_bytes   uint8[total]     all pieces' bytes back to back
    piece_offsets int64[V + 1]     piece i is piece_bytes[piece_offsets[i]:piece_offsets[i+1]]
    scores        float32[V]
    kinds         int8[V]          NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE
                                   (sentencepiece's ModelProto.SentencePiece.Type values)

``decode_ids`` gathers the bytes of a token sequence in one kernel call.
"""
import numpy as np

from ._jit import kernel
from .kernels.hashmap import BytesMap, shortmap_build, shortmap_capacity

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

#: How sparse a file's ids may be. A vocabulary here is dense (one entry per id from 0 to the
#: largest, UNUSED in the holes), so its memory follows the largest id, not the file: one edited
#: rank of 1073741823 would take 12 GB. A file whose ids leave holes (tiktoken's published files
#: skip ids for special tokens, tokenizer.json files number added tokens after the model's) loads
#: while its largest id is below ``2 * entries + ID_SLACK``.
ID_SLACK = 1 << 16


def check_dense_ids(largest, entries, where):
    """``ValueError`` unless ``largest`` (the largest id) is below ``2 * entries + ID_SLACK``
    (see ``ID_SLACK``); ``where`` names the file or table in the message."""
    limit = 2 * entries + ID_SLACK
    if largest >= limit:
        raise ValueError(
            f"{where}: id {largest} is far past the {entries} entries: nbtok stores one entry per id "
            f"from 0 to the largest, so it loads ids below 2 * entries + {ID_SLACK} = {limit} (memory "
            f"bounded by the file's content); tiktoken and HF tokenizers store ids sparsely and would "
            f"accept this file")


@kernel
def _gather_lengths(ids, piece_offsets, skip):
    total = 0
    for t in range(ids.shape[0]):
        i = ids[t]
        if not skip[i]:
            total += piece_offsets[i + 1] - piece_offsets[i]
    return total


@kernel
def gather_piece_bytes(ids, piece_bytes, piece_offsets, skip):
    """Concatenate the bytes of ``ids`` (skipping ids with ``skip[id]``) into one array."""
    out = np.empty(_gather_lengths(ids, piece_offsets, skip), np.uint8)
    pos = 0
    for t in range(ids.shape[0]):
        i = ids[t]
        if skip[i]:
            continue
        for k in range(piece_offsets[i], piece_offsets[i + 1]):
            out[pos] = piece_bytes[k]
            pos += 1
    return out


class Vocab:
    """Pieces as flat arrays; ``piece_to_id`` through a ``BytesMap``."""

    def __init__(self, pieces, scores=None, kinds=None):
        """``pieces``: a list of ``bytes`` indexed by id."""
        lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
        self.piece_offsets = np.zeros(len(pieces) + 1, np.int64)
        np.cumsum(lengths, out=self.piece_offsets[1:])
        self.piece_bytes = np.frombuffer(b"".join(pieces), np.uint8).copy()
        self.scores = (np.zeros(len(pieces), np.float32) if scores is None
                       else np.ascontiguousarray(scores, np.float32))
        self.kinds = (np.full(len(pieces), NORMAL, np.int8) if kinds is None
                      else np.ascontiguousarray(kinds, np.int8))
        self._map = None
        self._short_map = None
        self._validate()

    @classmethod
    def from_arrays(cls, piece_bytes, piece_offsets, scores=None, kinds=None):
        n = len(piece_offsets) - 1
        vocab = cls.__new__(cls)
        vocab.__setstate__({"piece_bytes": piece_bytes, "piece_offsets": piece_offsets,
                            "scores": np.zeros(n, np.float32) if scores is None else scores,
                            "kinds": np.full(n, NORMAL, np.int8) if kinds is None else kinds})
        return vocab

    def _validate(self):
        """Every array a kernel indexes with: checked once, where it enters (a file, a user)."""
        offs, data = self.piece_offsets, self.piece_bytes
        if offs.ndim != 1 or offs.shape[0] < 1 or data.ndim != 1:
            raise ValueError("piece_offsets and piece_bytes must be 1-D, with at least one offset")
        if offs[0] != 0 or offs[-1] != data.shape[0] or (offs.shape[0] > 1 and (np.diff(offs) < 0).any()):
            raise ValueError("piece_offsets must rise from 0 to len(piece_bytes)")
        n = offs.shape[0] - 1
        if self.scores.shape != (n,) or self.kinds.shape != (n,):
            raise ValueError("scores and kinds must have one entry per piece")

    def __len__(self):
        return self.piece_offsets.shape[0] - 1

    @property
    def map(self):
        if self._map is None:
            self._map = BytesMap(self.piece_bytes, self.piece_offsets)
        return self._map

    @property
    def short_map(self):
        """The pieces of 1..16 bytes keyed by their packed bytes (``kernels.hashmap.shortmap_get``)."""
        if self._short_map is None:
            self._short_map = shortmap_build(self.piece_bytes, self.piece_offsets, shortmap_capacity(len(self)))
        return self._short_map

    def set_maps(self, piece_map, short_map):
        """Use maps built earlier for these pieces (a ``BytesMap`` and a ``shortmap_build``
        table, e.g. read from a cache) instead of building them on first use."""
        rows = short_map.shape[0]
        if short_map.dtype != np.int64 or short_map.ndim != 2 or short_map.shape[1] != 4 or rows < 16 or rows & (rows - 1):
            raise ValueError("the short map must be int64[2**k, 4]")
        self._map, self._short_map = piece_map, short_map

    def piece(self, i) -> bytes:
        if not 0 <= i < len(self):
            raise IndexError(f"id {i} is out of range for a vocabulary of {len(self)}")
        return self.piece_bytes[self.piece_offsets[i]:self.piece_offsets[i + 1]].tobytes()

    def pieces(self):
        data = self.piece_bytes.tobytes()
        offs = self.piece_offsets.tolist()
        return [data[offs[i]:offs[i + 1]] for i in range(len(self))]

    def get(self, piece: bytes, default=-1):
        return self.map.get(piece, default)

    def check_ids(self, ids):
        """Validate ids coming from a user before a kernel indexes with them."""
        ids = np.asarray(ids)
        if ids.size == 0:
            return np.zeros(0, np.int32)
        if ids.dtype.kind not in "iu":
            raise TypeError(f"token ids must be integers, not {ids.dtype}")
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= len(self):
            bad = lo if lo < 0 else hi
            raise ValueError(f"token id {bad} is out of range [0, {len(self)})")
        return np.ascontiguousarray(ids.ravel(), np.int32)

    def __getstate__(self):
        return {"piece_bytes": self.piece_bytes, "piece_offsets": self.piece_offsets,
                "scores": self.scores, "kinds": self.kinds}

    def __setstate__(self, state):
        self.piece_bytes = np.ascontiguousarray(state["piece_bytes"], np.uint8)
        self.piece_offsets = np.ascontiguousarray(state["piece_offsets"], np.int64)
        self.scores = np.ascontiguousarray(state["scores"], np.float32)
        self.kinds = np.ascontiguousarray(state["kinds"], np.int8)
        self._map = None
        self._short_map = None
        self._validate()
