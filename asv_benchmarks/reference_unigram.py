"""Reference Unigram Viterbi: the nested-loop forward pass, for seed table 2 (bench_seed_unigram.py).

For each end position, for each start position, look the substring up in a hash map of
the vocabulary (nbtok's ``BytesMap``: FNV-1a over the bytes, then a byte compare) and
relax ``best[end]``. Starts are bounded by the longest piece, so this is
O(N * L) lookups each hashing up to L bytes, i.e. O(N * L^2) byte operations, where the
trie-based common-prefix search (nbtok.kernels.trie + nbtok.models.unigram.viterbi) walks each
start once: O(N * depth).

``@njit`` like the library, and sentencepiece's exact rules so that the ids are the same
(``src/unigram_model.cc``, ``EncodeOptimized``; REFERENCE_NOTES §3b):

* lattice over UTF-8 byte positions; scores accumulated in float32;
* NORMAL and USER_DEFINED pieces take part (USER_DEFINED score = bytes * max_score - 0.1),
  CONTROL / UNKNOWN / UNUSED / BYTE pieces do not;
* ``best[end]`` changes only on a strictly greater score; candidates for one end come in
  increasing start order, so on a tie the earliest start wins;
* a character with no single-character piece gets an UNK node, score min_score - 10;
* consecutive UNK tokens are merged into one (byte_fallback off).

The input is the normalized text (for the ASCII seed sentences: whitespace -> ``▁`` and a
leading ``▁``), as UTF-8 bytes.
"""
import numpy as np
from numba import njit

from . import _common as common  # noqa: I001  (first: puts the working tree on sys.path if needed)
from nbtok.kernels.hashmap import BytesMap, bytesmap_get

jit = njit(cache=True, nogil=True)

K_UNK_PENALTY = 10.0


@jit
def nested_loop_viterbi(text, slot_ids, slot_hashes, piece_bytes, piece_offsets,
                        scores, usable, max_len, unk_id, unk_score):
    """Token ids of the best segmentation of ``text`` (uint8 UTF-8 bytes)."""
    n = text.shape[0]
    best = np.zeros(n + 1, np.float32)
    from_start = np.full(n + 1, -1, np.int64)
    from_id = np.full(n + 1, -1, np.int32)
    for e in range(1, n + 1):
        if e < n and (text[e] & 0xC0) == 0x80:
            continue  # not a character boundary
        # start of the last character before e (for the unknown node)
        last = e - 1
        while last > 0 and (text[last] & 0xC0) == 0x80:
            last -= 1
        lo = e - max_len
        if lo < 0:
            lo = 0
        for s in range(lo, e):
            if s > 0 and (text[s] & 0xC0) == 0x80:
                continue
            if from_start[s] < 0 and s > 0:
                continue  # unreachable (cannot happen: UNK nodes make every start reachable)
            pid = bytesmap_get(slot_ids, slot_hashes, piece_bytes, piece_offsets, text, s, e)
            if pid >= 0 and usable[pid]:
                cand = best[s] + scores[pid]
                if from_start[e] < 0 or cand > best[e]:
                    best[e] = cand
                    from_start[e] = s
                    from_id[e] = pid
            elif s == last:
                cand = best[s] + unk_score
                if from_start[e] < 0 or cand > best[e]:
                    best[e] = cand
                    from_start[e] = s
                    from_id[e] = unk_id
    # backtrack
    count = 0
    e = n
    while e > 0:
        count += 1
        e = from_start[e]
    out = np.empty(count, np.int32)
    e = n
    k = count
    while e > 0:
        k -= 1
        out[k] = from_id[e]
        e = from_start[e]
    # merge consecutive unknowns
    m = 0
    for t in range(count):
        if out[t] == unk_id and m > 0 and out[m - 1] == unk_id:
            continue
        out[m] = out[t]
        m += 1
    return out[:m].copy()


NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


class NestedLoopUnigram:
    """A sentencepiece Unigram model as a hash map of pieces + scores (for the nested loop)."""

    def __init__(self, pieces, scores, kinds, unk_id):
        self.pieces = pieces
        self.unk_id = unk_id
        raw = [p.encode("utf-8") for p in pieces]
        self.map = BytesMap(*_ragged(raw))
        kinds = np.asarray(kinds, np.int8)
        scores64 = np.asarray(scores, np.float64)
        normal = kinds == NORMAL
        # sentencepiece: min/max over NORMAL pieces, starting from FLT_MAX / FLT_MIN
        flt_min = float(np.finfo(np.float32).tiny)
        min_score = min([float(np.finfo(np.float32).max)] + scores64[normal].astype(np.float32).tolist())
        max_score = max([flt_min] + scores64[normal].astype(np.float32).tolist())
        lengths = np.array([len(b) for b in raw], np.float64)
        eff = np.where(kinds == USER_DEFINED, lengths * np.float32(max_score) - 0.1, scores64)
        self.scores = eff.astype(np.float32)
        self.usable = (kinds == NORMAL) | (kinds == USER_DEFINED)
        self.max_len = int(max(len(raw[i]) for i in range(len(raw)) if self.usable[i]))
        self.unk_score = np.float32(np.float32(min_score) - np.float32(K_UNK_PENALTY))

    @classmethod
    def from_sentencepiece(cls, model_file):
        spm = common.peer_or_skip("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=str(model_file))
        n = sp.get_piece_size()
        kinds = []
        for i in range(n):
            if sp.is_unknown(i):
                kinds.append(UNKNOWN)
            elif sp.is_control(i):
                kinds.append(CONTROL)
            elif sp.is_unused(i):
                kinds.append(UNUSED)
            elif sp.is_byte(i):
                kinds.append(BYTE)
            else:
                kinds.append(NORMAL)  # the Python API cannot tell USER_DEFINED apart
        return cls([sp.id_to_piece(i) for i in range(n)], [sp.get_score(i) for i in range(n)],
                   kinds, sp.unk_id())

    @classmethod
    def from_nbtok(cls, model):
        """From an nbtok model object with a ``vocab`` (nbtok.vocab.Vocab)."""
        v = model.vocab
        pieces = [b.decode("utf-8", errors="replace") for b in v.pieces()]
        unk = int(np.flatnonzero(v.kinds == UNKNOWN)[0])
        return cls(pieces, v.scores, v.kinds, unk)

    def encode_normalized(self, text_bytes):
        m = self.map
        return nested_loop_viterbi(text_bytes, m.slot_ids, m.slot_hashes, m.piece_bytes, m.piece_offsets,
                                   self.scores, self.usable, self.max_len, self.unk_id, self.unk_score)

    def encode(self, normalized: str):
        return self.encode_normalized(np.frombuffer(normalized.encode("utf-8"), np.uint8))


def _ragged(pieces):
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
    offsets = np.zeros(len(pieces) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(b"".join(pieces), np.uint8).copy(), offsets


SENTENCES = {
    "quick_fox": "The quick brown fox jumps over the lazy dog",
    # "udhr_article1": common.udhr_article(1)   (read at setup time: needs the data folder)
}


def seed_sentence(name):
    if name == "udhr_article1":
        return common.udhr_article(1, "English")
    return SENTENCES[name]
