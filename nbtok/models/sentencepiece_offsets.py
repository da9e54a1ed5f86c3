"""Offsets on ``SentencePieceModel``: each token's character span in its text, as sentencepiece's
``SentencePieceText`` ``begin`` / ``end`` (kernels: ``normalizers.sentencepiece_offsets``, the normalizer with
its alignment)."""
import numba
import numpy as np

from .._jit import thread_limit


class Offsets:
    """The offset methods of ``SentencePieceModel`` (a mixin)."""

    def encode_batch_offsets(self, texts, add_bos=False, add_eos=False, num_threads=None, **opts):
        """``(ids int32[total], offsets int64[n+1], starts int64[total], ends int64[total])``:
        the ids of ``encode_batch_ragged`` and, per token, its character span in its text, as
        sentencepiece's ``SentencePieceText`` ``begin`` / ``end`` (see ``normalizers.sentencepiece_offsets``
        for the two deliberate differences). One parallel kernel call over the flat batch."""
        from ..normalizers import sentencepiece_offsets as koff
        from . import char_word as kcw
        self._check_opts(opts)
        if num_threads is not None:
            with thread_limit(num_threads):
                return self.encode_batch_offsets(texts, add_bos, add_eos)
        if isinstance(texts, (str, bytes)):
            raise TypeError("encode_batch_offsets expects a list of str, not a single text")
        try:
            data = [t.encode("utf-8") for t in texts]  # bytes have no .encode
        except AttributeError:
            raise TypeError("offsets are character offsets: texts must be str") from None
        n = len(data)
        lens = np.fromiter(map(len, data), np.int64, n)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        if n and lens.max() >= 2 ** 31:
            raise ValueError("a text of 2 GiB or more: offsets are not supported")
        buf = np.frombuffer(b"".join(data), np.uint8)
        F = self._F(add_bos, add_eos)
        po = self.vocab.piece_offsets

        def run(buf, offsets, room, n_chunks):
            out_offsets = np.zeros(room.size + 1, np.int64)
            np.cumsum(room, out=out_offsets[1:])
            total = int(out_offsets[-1])
            ids = np.empty(total, np.int32)
            st = np.empty(total, np.int32)  # per-document character offsets
            en = np.empty(total, np.int32)
            counts = np.zeros(room.size, np.int64)
            if room.size:
                if self.model_type in ("char", "word"):
                    kcw.offsets_batch(buf, offsets, self.N, self.D, F, po, (out_offsets, n_chunks, ids, st, en, counts))
                elif self.model_type == "unigram":
                    koff.unigram_offsets_batch(buf, offsets, out_offsets, self.N, self.M, F, po, n_chunks,
                                               ids, st, en, counts)
                else:
                    koff.bpe_offsets_batch(buf, offsets, out_offsets, self.N, self.M, F, self.W, po, n_chunks,
                                           ids, st, en, counts)
            return ids, st, en, out_offsets, counts

        per_thread = 8 if self.model_type == "unigram" else 2
        n_chunks = max(1, min(n, numba.get_num_threads() * per_thread))
        ids, st, en, out_offsets, counts = run(buf, offsets, lens + 4, n_chunks)
        # documents whose ids outgrew lens + 4 (NFKC expansions, byte fallback): again, with
        # room for the worst case (18 normalized bytes per input byte, 4 ids per byte, + 8)
        redo = np.flatnonzero(counts < 0)
        if redo.size:
            parts = [data[d] for d in redo.tolist()]
            sub_buf = np.frombuffer(b"".join(parts), np.uint8)
            sub_off = np.zeros(redo.size + 1, np.int64)
            np.cumsum(lens[redo], out=sub_off[1:])
            room = 72 * lens[redo] + 16
            while True:
                r = run(sub_buf, sub_off, room, max(1, min(redo.size, numba.get_num_threads())))
                if np.all(r[4] >= 0):
                    break
                room = room * 4  # a custom charsmap can expand more than NFKC does
        final = counts.copy()
        if redo.size:
            final[redo] = r[4]
        res_off = np.zeros(n + 1, np.int64)
        np.cumsum(final, out=res_off[1:])
        total = int(res_off[-1])
        rid = np.empty(total, np.int32)
        rst = np.empty(total, np.int64)
        ren = np.empty(total, np.int64)
        koff.compact3(ids, st, en, out_offsets, np.maximum(counts, 0), res_off, rid, rst, ren)
        if redo.size:
            koff.compact3(r[0], r[1], r[2], r[3], r[4], res_off[redo], rid, rst, ren)
        return rid, res_off, rst, ren

    def encode_with_offsets(self, text, add_bos=False, add_eos=False, **opts):
        """``(ids, starts, ends)`` of one text (character offsets, see ``encode_batch_offsets``)."""
        ids, _, st, en = self.encode_batch_offsets([text], add_bos, add_eos, **opts)
        return ids, st, en
