"""sentencepiece's protobuf outputs for ``nbtok.compat.sentencepiece``: ``SentencePieceText``
(``out_type='serialized_proto'``: its bytes, as sentencepiece serializes them) and the
``Immutable*`` objects of sentencepiece 0.2.1's wrapper (``out_type='immutable_proto'``).

What goes into a ``SentencePieceText`` follows sentencepiece's C++ (``sentencepiece_processor.cc``):

* encode (``PopulateSentencePieceText``): ``text`` is the input; each piece covers normalized
  bytes ``[p, q)``, so the input bytes ``[norm_to_orig[p], norm_to_orig[q])`` (``begin`` /
  ``end``, byte offsets) whose text is its ``surface``. The normalizer with ``norm_to_orig`` is
  the one of nbtok's offsets (``normalizers.sentencepiece_offsets.normalize_aligned``), the segmentation is
  the model's symbols (``models.unigram.viterbi`` / ``models.bpe.sentencepiece``). An unknown character's piece
  is its normalized text, and a run of them is one piece; with byte fallback it is one
  ``<0xXX>`` piece a byte, the last holding the surface and span, the others no surface and
  the empty span at the character's start. n-best results come from sentencepiece's A* search
  replayed (``models.unigram.nbest``), in its order with its float32 ``score`` (0 for
  ``nbest_size <= 1``, where sentencepiece encodes).
* decode (``Decode``): ``text`` is the decoded text; each piece's ``surface`` is what it
  printed, ``begin`` / ``end`` its place in the text before the denormalizer (which rewrites
  the text only). Byte pieces print their character on the last byte piece (the others an
  empty surface), an invalid byte U+FFFD.

Fields are written in field-number order, a field only when sentencepiece sets it (proto2
presence), so the bytes are sentencepiece's. The immutable objects convert ``begin`` / ``end``
to character offsets (``ConvertToUnicodeSpans``), also in what their ``SerializeAsString``
returns, as sentencepiece 0.2.1 does.
"""
import math

import numpy as np

from ..formats.sentencepiece_model import BYTE, CONTROL, FIXED32, LEN, UNKNOWN, VARINT, _key, _len_field, \
    _varint, pack_float

SPACE = "\u2581".encode()
REPLACEMENT = "\ufffd".encode()
MAX_NBEST = 512  # kMaxNBestSize of sentencepiece_processor.cc
_ID, _BEGIN, _END, _SCORE = _key(2, VARINT), _key(4, VARINT), _key(5, VARINT), _key(3, FIXED32)
_F1, _F2, _F3 = _key(1, LEN), _key(2, LEN), _key(3, LEN)
_SMALL = [_varint(v) for v in range(128)]  # one-byte varints (most lengths, offsets, ids of a text)


def _uv(v):
    if v < 128:
        return _SMALL[v]
    return bytes((v & 0x7F | 0x80, v >> 7)) if v < 16384 else _varint(v)


def proto_options_check(add_bos, add_eos, reverse, emit_unk_piece):
    """sentencepiece's proto API refuses these options (``RewriteIds`` of its wrapper)."""
    if add_bos or add_eos or reverse or emit_unk_piece:
        raise RuntimeError("add_bos, add_eos, reverse, and emit_unk_piece is not supported in proto API")


def _as_bytes(text):
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"a text must be str or bytes, not {type(text).__name__}")


# ------------------------------------------------------------------ segmentations
def _aligned(m, data):
    """(normalized bytes as an array, norm_to_orig list) of ``data``."""
    from ..normalizers.sentencepiece_offsets import normalized_with_alignment
    norm, n2o = normalized_with_alignment(np.frombuffer(data, np.uint8), m.N)
    return norm, n2o.tolist()


def _viterbi(m, data, dropout=0.0):
    """(normalized bytes, norm_to_orig, symbols) of the model's segmentation (BPE: with dropout)."""
    norm, n2o = _aligned(m, data)
    syms, norm2 = m._symbols(data, dropout) if dropout > 0.0 else m._symbols(data)
    if norm2.tobytes() != norm.tobytes():  # the two normalizer paths are one normalizer
        raise RuntimeError("nbtok: the aligned normalizer disagrees with the encoder's (please report)")
    return norm, n2o, syms


def _nbest_syms(m, norm, k):
    """[(symbols, float32 score)] of the k (>= 2) best segmentations of ``norm`` (not empty) as
    sentencepiece's ``Model::NBestEncode`` returns them (``models.unigram.nbest``: its A* search)."""
    from ..models.unigram.nbest import astar_nbest
    if m.model_type != "unigram":
        raise ValueError("NBestEncode is not available for the current model (BPE): n-best needs a Unigram model")
    lat, idsc, unk_score, V = m.ML
    syms, off, scores = astar_nbest(norm, norm.size, lat, idsc, unk_score, V, min(int(k), 1024))
    return [(syms[off[j]:off[j + 1]], float(scores[j])) for j in range(off.size - 1)]


def _check_nbest_size(nbest_size):
    if nbest_size > MAX_NBEST:
        raise ValueError(f"nbest_size must be nbest_size <= {MAX_NBEST}")


def encode_pieces(m, text, sample=False, alpha=0.1, nbest_size=-1):
    """(input bytes, pieces) of ``text`` as sentencepiece's ``Encode`` (``sample``:
    ``SampleEncode``); a piece is ``[piece, id, surface or None, begin, end]``."""
    from ..normalizers import sentencepiece_offsets as koff
    from ..models.unigram import sampling as ksample
    data = _as_bytes(text)
    if not sample:
        return data, _populate(m, data, *_viterbi(m, data))
    nbest_size, alpha = int(nbest_size), float(alpha)
    if m.model_type == "bpe":  # BPE-dropout (nbest_size is ignored, as sentencepiece does)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError("alpha must be in [0, 1] for BPE-dropout")
        return data, _populate(m, data, *_viterbi(m, data, alpha))
    if not (np.isfinite(alpha) and alpha >= 0.0):
        raise ValueError("alpha must be finite and >= 0")
    _check_nbest_size(nbest_size)
    if nbest_size in (0, 1):
        return data, _populate(m, data, *_viterbi(m, data))
    norm, n2o = _aligned(m, data)
    if norm.size == 0:
        return data, []
    if nbest_size > 1:
        results = _nbest_syms(m, norm, nbest_size)
        j = koff.sample_nbest_index(np.array([s for _, s in results]), alpha)
        return data, _populate(m, data, norm, n2o, results[j][0])
    lat, idsc, unk_score, V = m.ML
    syms = np.empty(norm.size + 1, np.int64)
    k = ksample.ffbs_sample(norm, norm.size, lat, idsc, unk_score, V, alpha, syms)
    return data, _populate(m, data, norm, n2o, syms[:k])


def nbest_pieces(m, text, nbest_size):
    """(input bytes, [(pieces, score)]) as sentencepiece's ``NBestEncode``."""
    data = _as_bytes(text)
    nbest_size = int(nbest_size)
    _check_nbest_size(nbest_size)
    if m.model_type != "unigram":
        raise ValueError("NBestEncode is not available for the current model (BPE): n-best needs a Unigram model")
    norm, n2o = _aligned(m, data)
    if norm.size == 0:  # Model::NBestEncode: one empty result
        return data, [([], 0.0)]
    if nbest_size <= 1:
        return data, [(_populate(m, data, *_viterbi(m, data)), 0.0)]
    return data, [(_populate(m, data, norm, n2o, syms), score) for syms, score in _nbest_syms(m, norm, nbest_size)]


def sample_and_score_pieces(m, text, num_samples, alpha, wor, include_best):
    """(input bytes, [(pieces, score)]) as sentencepiece's ``SampleEncodeAndScore``
    (``Model::SampleEncodeAndScore`` of ``unigram_model.cc``): ``num_samples`` segmentations
    drawn from p ~ exp(alpha * score). With ``wor`` they are distinct (a Gumbel-top-k draw of
    ``num_samples + 1``, the last one's perturbed score ``kappa`` giving each kept sample's
    log inclusion probability, ``log(1 - exp(-exp(log p - kappa)))``); ``include_best`` puts the
    Viterbi segmentation first with score 0 (and out of the samples). Without ``wor`` they
    are independent draws scored by their log-probability."""
    from ..models.unigram.nbest import gumbel_topk
    from ..models.unigram.sampling import ffbs_scored
    data = _as_bytes(text)
    if m.model_type != "unigram":
        raise RuntimeError("SampleEncodeAndScore is not available for the current model "
                           f"({m.model_type.upper()}): it needs a Unigram model")
    norm, n2o = _aligned(m, data)
    if norm.size == 0:
        raise RuntimeError("SampleEncodeAndScore returns empty result.")
    lat, idsc, unk_score, V = m.ML
    theta, k = float(alpha), int(num_samples)
    if not wor:
        syms, off, logp = ffbs_scored(norm, norm.size, lat, idsc, unk_score, V, theta, k)
        return data, [(_populate(m, data, norm, n2o, syms[off[j]:off[j + 1]]), float(np.float32(logp[j])))
                      for j in range(k)]
    syms, off, perturbed, logp = gumbel_topk(norm, norm.size, lat, idsc, unk_score, V, k + 1, theta)
    drawn = [(syms[off[j]:off[j + 1]], perturbed[j], logp[j]) for j in range(off.size - 1)]
    results = []
    if include_best:
        best = np.asarray(_viterbi(m, data)[2], np.int64)
        results.append((best, 0.0))
        same = [j for j, d in enumerate(drawn) if np.array_equal(d[0], best)]
        drawn.pop(same[0] if same else -1)
    if drawn:
        kappa = drawn.pop()[1]
        for path, _, lp in drawn:
            results.append((path, _inclusion_log_probability(float(np.float32(lp)), kappa)))
    if not results:
        raise RuntimeError("SampleEncodeAndScore returns empty result.")
    return data, [(_populate(m, data, norm, n2o, path), score) for path, score in results]


def _inclusion_log_probability(logp, kappa):
    """log P(a path of log-probability ``logp`` is among the samples), given the perturbed score
    ``kappa`` of the first path left out: the log survival function of a Gumbel at
    ``kappa - logp``, by its series below -10 (where ``expm1`` would lose it), as sentencepiece."""
    if logp == 0.0:  # sentencepiece leaves a score of exactly 0 (the best path's) as it is
        return 0.0
    x = logp - kappa
    y = math.exp(x)
    if x <= -10:
        p = x - y / 2 + y ** 2 / 24 - y ** 4 / 2880
    else:
        p = math.log(-math.expm1(-y))
    return float(np.float32(p))


def _symbol_lengths(m, syms):
    """Normalized bytes each symbol covers (a piece, or one unknown character ``V + cp``)."""
    V = m.V
    syms = np.asarray(syms, np.int64)
    plen = np.diff(m.vocab.piece_offsets)
    known = syms < V
    cp = syms - V
    clen = np.where(cp < 0x80, 1, np.where(cp < 0x800, 2, np.where(cp < 0x10000, 3, 4)))
    clen[cp >= 0x110000] = 1  # a byte that is not valid UTF-8
    return np.where(known, plen[np.where(known, syms, 0)], clen)


def _populate(m, data, norm, n2o, syms):
    """``PopulateSentencePieceText`` of the symbols ``syms`` over ``norm`` (see module doc)."""
    V, unk_id, byte_fallback, byte_ids = m.V, m.unk_id, m.byte_fallback, m.byte_ids
    norm = norm.tobytes()
    lens = _symbol_lengths(m, syms).tolist()
    pieces = []
    p = 0
    prev_unk = False
    for s, ln in zip(np.asarray(syms).tolist(), lens):
        q = p + ln
        if q > len(norm):
            raise RuntimeError("nbtok: a segmentation outgrew the normalized text (please report)")
        w = norm[p:q]
        b, e = n2o[p], n2o[q]
        surface = data[b:e]
        if s < V:
            pieces.append([w, s, surface, b, e])
            prev_unk = False
        else:
            if byte_fallback:
                for i, byte in enumerate(w):
                    last = i == len(w) - 1
                    pieces.append([b"<0x%02X>" % byte, int(byte_ids[byte]), surface if last else None, b,
                                   e if last else b])
            elif prev_unk:  # a run of unknown characters is one piece
                pieces[-1][0] += w
                pieces[-1][2] += surface
                pieces[-1][4] = e
            else:
                pieces.append([w, unk_id, surface, b, e])
            prev_unk = True
        p = q
    if p != len(norm):
        raise RuntimeError("nbtok: all normalized characters are not consumed (please report)")
    return pieces


# ------------------------------------------------------------------ decoding
def decode_pieces(m, items):
    """(text bytes, pieces) of sentencepiece's ``Decode`` of ids or piece strings."""
    from ..normalizers.sentencepiece import utf8_char_len
    kinds = m.vocab.kinds
    entries = []
    for x in items:
        if isinstance(x, (str, bytes)):
            w = _as_bytes(x)
            entries.append([w, m.piece_to_id(w)])
        else:
            if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
                raise TypeError(f"decode takes ids (int) or pieces (str), not {type(x).__name__}")
            i = int(x)
            if not 0 <= i < m.V:
                raise IndexError(f"piece id is out of range: {i} (the model has {m.V} pieces)")
            entries.append([m.vocab.piece(i), i])
    text = bytearray()
    pieces = [[w, i, b"", 0, 0] for w, i in entries]

    def put(j, surface):
        pieces[j][2:] = [bytes(surface), len(text), len(text) + len(surface)]
        text.extend(surface)

    def flush(lo, hi):
        run = np.array([m.byte_values[pieces[j][1]] for j in range(lo, hi)], np.uint8)
        at = 0
        while at < run.size:
            ln = utf8_char_len(run, at, run.size)
            if ln == 0:
                put(lo + at, REPLACEMENT)
                at += 1
                continue
            for k in range(ln - 1):
                put(lo + at + k, b"")
            put(lo + at + ln - 1, run[at:at + ln].tobytes())
            at += ln

    strip = m._strip_first
    remove_extra = not m._keep_bos_ws
    unk_piece = m.vocab.piece(m.unk_id)
    unk_surface = m.unk_surface.tobytes()
    byte_start, is_bos_ws, bos_ws_seen = 0, True, False
    for j, (w, i) in enumerate(entries):
        if kinds[i] == BYTE:
            continue
        flush(byte_start, j)
        if bos_ws_seen or text:
            is_bos_ws = False
        byte_start = j + 1
        bos_ws_seen = False
        if kinds[i] == CONTROL:
            out = b""
        elif kinds[i] == UNKNOWN:
            out = unk_surface if w == unk_piece else w
        else:
            if is_bos_ws and strip and w.startswith(SPACE):
                w = w[len(SPACE):]
                bos_ws_seen = not remove_extra
            out = w.replace(SPACE, b" ")
        put(j, out)
    flush(byte_start, len(entries))
    text = bytes(text)
    if m.denorm is not None:
        text = m._denormalize(text)
    return text, pieces


# ------------------------------------------------------------------ serialization
def serialize_piece(piece):
    """The bytes of a ``SentencePieceText.SentencePiece`` (piece = 1, id = 2, surface = 3,
    begin = 4, end = 5); ``_len_field`` / ``_varint`` written out for the one-byte case."""
    w, i, surface, b, e = piece
    if surface is None:
        return b"".join((_F1, _uv(len(w)), w, _ID, _uv(i), _BEGIN, _uv(b), _END, _uv(e)))
    return b"".join((_F1, _uv(len(w)), w, _ID, _uv(i), _F3, _uv(len(surface)), surface, _BEGIN, _uv(b), _END,
                     _uv(e)))


def serialize_text(text, pieces, score=None):
    """The bytes of a ``SentencePieceText`` (text = 1, pieces = 2, score = 3)."""
    parts = [_len_field(1, text)]
    for p in pieces:
        body = serialize_piece(p)
        parts += (_F2, _uv(len(body)), body)
    if score is not None:
        parts.append(_SCORE + pack_float(score))
    return b"".join(parts)


def serialize_nbest(texts):
    """The bytes of a ``NBestSentencePieceText`` of serialized ``SentencePieceText`` s."""
    return b"".join(_len_field(1, t) for t in texts)


def unicode_spans(text, pieces):
    """``ConvertToUnicodeSpans``: begin / end as character offsets into ``text``."""
    if not text or text.isascii():
        return pieces
    try:
        text.decode("utf-8")
        b = np.frombuffer(text, np.uint8)
        u = np.empty(b.size + 1, np.int64)
        np.cumsum((b & 0xC0) != 0x80, out=u[:-1])
        u[:-1] -= 1
        u[-1] = u[-2] + 1
        u = u.tolist()
    except UnicodeDecodeError:  # bytes input that is not UTF-8: sentencepiece's walk by lead bytes
        u = [0] * (len(text) + 1)
        prev = ulen = 0
        while prev < len(text):
            c = text[prev]
            mblen = 4 if c >= 0xF0 else 3 if c >= 0xE0 else 2 if c >= 0xC0 else 1
            for k in range(prev, min(prev + mblen, len(text))):
                u[k] = ulen
            ulen += 1
            prev += mblen
        u[min(prev, len(text))] = ulen
    top = len(u) - 1
    return [[w, i, s, u[min(max(0, bb), top)], u[min(max(0, e), top)]] for w, i, s, bb, e in pieces]


# ------------------------------------------------------------------ sentencepiece 0.2.1's immutable objects
class ImmutableSentencePieceText_ImmutableSentencePiece:  # noqa: N801 - sentencepiece's name
    """One piece of an ``ImmutableSentencePieceText``: ``piece``, ``id``, ``surface``,
    ``begin``, ``end`` (character offsets into the text), ``piece_as_bytes``, ``surface_as_bytes``."""

    __slots__ = ("_piece", "_id", "_surface", "_begin", "_end")

    def __init__(self, piece=b"", id=0, surface=b"", begin=0, end=0):  # noqa: A002
        self._piece, self._id, self._surface, self._begin, self._end = piece, id, surface or b"", begin, end

    piece = property(lambda self: self._piece.decode("utf-8"))
    piece_as_bytes = property(lambda self: self._piece)
    surface = property(lambda self: self._surface.decode("utf-8"))
    surface_as_bytes = property(lambda self: self._surface)
    id = property(lambda self: self._id)
    begin = property(lambda self: self._begin)
    end = property(lambda self: self._end)

    def __str__(self):
        return ('piece: "{}"\nid: {}\nsurface: "{}"\nbegin: {}\nend: {}\n').format(
            self.piece, self.id, self.surface, self.begin, self.end)

    __repr__ = __str__

    def __eq__(self, other):
        if not isinstance(other, ImmutableSentencePieceText_ImmutableSentencePiece):
            return NotImplemented
        return (self._piece, self._id, self._surface, self._begin, self._end) == \
            (other._piece, other._id, other._surface, other._begin, other._end)

    def __hash__(self):
        return hash(str(self))


class _Sequence:
    """sentencepiece 0.2.1's ``ImmutableSentencePieceIterator``: ``len``, indexing (negative and
    slices, a slice giving a list), iteration."""

    __slots__ = ("_items", "_what", "_label")

    def __init__(self, items, what, label):
        self._items, self._what, self._label = items, what, label

    def __len__(self):
        return len(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self._items[index]
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"{self._what} indices must be integers or slices, not {type(index).__name__}")
        n = len(self._items)
        i = int(index) + n if index < 0 else int(index)
        if not 0 <= i < n:
            raise IndexError(f"{self._what} index is out of range")
        return self._items[i]

    def __iter__(self):
        return iter(self._items)

    def __str__(self):
        return "\n".join(f"{self._label} {{\n{x}}}" for x in self._items)

    __repr__ = __str__


class ImmutableSentencePieceText:
    """sentencepiece 0.2.1's result of ``encode(..., out_type='immutable_proto')`` and of the
    proto decodes: ``text``, ``text_as_bytes``, ``score``, ``pieces``, ``SerializeAsString()``;
    equal (and hashed) by its serialization."""

    __slots__ = ("_text", "_pieces", "_score", "_serialized")

    def __init__(self, text=b"", pieces=(), score=None):
        """``pieces``: ``[piece, id, surface or None, begin, end]`` with byte offsets, converted
        here to character offsets (``ConvertToUnicodeSpans``)."""
        pieces = unicode_spans(text, [list(p) for p in pieces])
        self._text, self._score = text, score
        self._serialized = serialize_text(text, pieces, score)
        self._pieces = [ImmutableSentencePieceText_ImmutableSentencePiece(*p) for p in pieces]

    text = property(lambda self: self._text.decode("utf-8"))
    text_as_bytes = property(lambda self: self._text)
    score = property(lambda self: 0.0 if self._score is None else float(np.float32(self._score)))

    @property
    def pieces(self):
        return _Sequence(self._pieces, "piece", "pieces")

    def SerializeAsString(self):  # noqa: N802 - sentencepiece's name
        return self._serialized

    def __eq__(self, other):
        if not isinstance(other, ImmutableSentencePieceText):
            return NotImplemented
        return self._serialized == other._serialized

    def __hash__(self):
        return hash(self._serialized)

    def __str__(self):
        return 'text: "{}"\nscore: {}\n{}'.format(self.text, self.score, str(self.pieces))

    __repr__ = __str__


class ImmutableNBestSentencePieceText:
    """sentencepiece 0.2.1's n-best result: ``nbests`` (``ImmutableSentencePieceText`` s),
    ``SerializeAsString()``."""

    __slots__ = ("_nbests",)

    def __init__(self, nbests=()):
        self._nbests = list(nbests)

    @property
    def nbests(self):
        return _Sequence(self._nbests, "nbests", "nbests")

    def SerializeAsString(self):  # noqa: N802
        return serialize_nbest([t.SerializeAsString() for t in self._nbests])

    def __eq__(self, other):
        if not isinstance(other, ImmutableNBestSentencePieceText):
            return NotImplemented
        return self.SerializeAsString() == other.SerializeAsString()

    def __hash__(self):
        return hash(self.SerializeAsString())

    def __str__(self):
        return str(self.nbests)

    __repr__ = __str__
