"""Decoding on ``SentencePieceModel``: ids and pieces back to text as sentencepiece's
``Decode`` / ``DecodePieces`` (byte pieces joined, the unknown surface, the denormalizer, the
leading space dropped; kernels: ``decoders.sentencepiece``)."""
import numpy as np

from ..normalizers import sentencepiece as knorm
from ..decoders import sentencepiece as kdec


class Decoding:
    """The decode methods of ``SentencePieceModel`` (a mixin: it reads the model's vocabulary,
    byte values, unknown surface and denormalizer)."""

    def decode_bytes(self, ids):
        ids = self.vocab.check_ids(ids)
        raw = kdec.decode_ids(ids, self.vocab.piece_bytes, self.vocab.piece_offsets, self.vocab.kinds,
                               self.byte_values, self.unk_surface, self._strip_first, self._keep_bos_ws)
        if self.denorm is not None:
            return self._denormalize(raw.tobytes())
        return raw.tobytes()

    def decode_ragged(self, ids, offsets):
        """Decode a ragged batch (flat ids + offsets) in one kernel call: list of str."""
        ids = self.vocab.check_ids(ids)
        offsets = np.ascontiguousarray(offsets, np.int64)
        if offsets.ndim != 1 or offsets.size == 0 or offsets[0] != 0 or offsets[-1] != ids.size \
                or np.any(np.diff(offsets) < 0):
            raise ValueError("offsets must start at 0, be non-decreasing and end at len(ids)")
        raw, off = kdec.decode_ragged(ids, offsets, self.vocab.piece_bytes, self.vocab.piece_offsets,
                                       self.vocab.kinds, self.byte_values, self.unk_surface,
                                       self._strip_first, self._keep_bos_ws)
        data = raw.tobytes()
        o = off.tolist()
        if self.denorm is None:
            return [data[o[d]:o[d + 1]].decode("utf-8", "replace") for d in range(len(o) - 1)]
        return [self._denormalize(data[o[d]:o[d + 1]]).decode("utf-8", "replace") for d in range(len(o) - 1)]

    def decode_batch(self, batch):
        batch = [np.asarray(b) for b in batch]
        offsets = np.zeros(len(batch) + 1, np.int64)
        np.cumsum([b.size for b in batch], out=offsets[1:])
        flat = np.concatenate(batch) if batch else np.zeros(0, np.int32)
        return self.decode_ragged(flat.astype(np.int64, copy=False), offsets)

    def _denormalize(self, data):
        raw = np.frombuffer(data, np.uint8)
        out, n = knorm.normalize(raw, 0, raw.size, *self.denorm, np.empty(raw.size * 3 + 8, np.uint8))
        return out[:n].tobytes()

    def decode(self, ids):
        if isinstance(ids, (list, tuple)) and ids and isinstance(ids[0], str):
            return self.decode_pieces(ids)
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def decode_pieces(self, pieces):
        """Decode piece strings; a string that is not a piece is copied as is (sentencepiece)."""
        ids = [self.piece_to_id(p) for p in pieces]
        parts = []
        run = []
        for p, i in zip(pieces, ids):
            if i == self.unk_id and p != self.id_to_piece(i):
                run.append(p)
                continue
            run.append(i)
        # segments of literal strings are spliced between id runs
        out = []
        cur = []
        first = True
        for x in run:
            if isinstance(x, str):
                if cur:
                    out.append(self._decode_segment(cur, first))
                    first = False
                    cur = []
                out.append(x)
                first = False
            else:
                cur.append(x)
        if cur:
            out.append(self._decode_segment(cur, first))
        parts = "".join(out)
        return parts

    def _decode_segment(self, ids, first):
        if first:
            return self.decode(np.asarray(ids, np.int32))
        # not at the start: no leading-space stripping
        marker = self.V  # decode with a dummy visible prefix: emulate by a plain join
        ids = self.vocab.check_ids(np.asarray(ids, np.int32))
        raw = kdec.decode_ids(ids, self.vocab.piece_bytes, self.vocab.piece_offsets, self.vocab.kinds,
                               self.byte_values, self.unk_surface, False, True)
        del marker
        return raw.tobytes().decode("utf-8", "replace")

    # ------------------------------------------------------------------ vocabulary
