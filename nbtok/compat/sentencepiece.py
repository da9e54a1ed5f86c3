"""sentencepiece's ``SentencePieceProcessor`` on nbtok's kernels:
``from nbtok.compat.sentencepiece import SentencePieceProcessor``.

The calls of sentencepiece 0.2's Python API with its argument names, defaults and return types
(ints or piece strings, one text or a batch), in snake_case and CamelCase. The protobuf outputs
(``out_type='serialized_proto'``: the bytes of a ``SentencePieceText``, byte for byte
sentencepiece's; ``out_type='immutable_proto'``: sentencepiece 0.2.1's ``ImmutableSentencePieceText``
objects, begin / end in characters) are built in ``_spm_proto``. What nbtok cannot answer exactly
raises ``NotImplementedError`` naming the call: ``out_type='proto'`` (a protobuf message in
sentencepiece 0.2.3), ``set_vocabulary``,
``SentencePieceNormalizer(rule_tsv=...)``. ``normalize`` and ``SentencePieceNormalizer`` are in
``_spm_normalizer``. Sampling draws from the same
distributions as sentencepiece with nbtok's own random generator, so a seeded sequence of
samples differs from sentencepiece's.

Examples:
    >>> from nbtok.compat.sentencepiece import SentencePieceProcessor
    >>> sp = SentencePieceProcessor(model_file="llama.model")  # doctest: +SKIP
    >>> sp.encode(["Hello world", "bye"], out_type=str)  # doctest: +SKIP
    [['▁Hello', '▁world'], ['▁by', 'e']]
"""
import numpy as np

from ..formats._atomic import write_many_atomic
from ..formats.sentencepiece_model import BYTE, CONTROL, UNKNOWN, UNUSED
from ..tokenizer import Tokenizer
from . import _spm_proto as _P
from ._spm_proto import (ImmutableNBestSentencePieceText, ImmutableSentencePieceText,
                         ImmutableSentencePieceText_ImmutableSentencePiece)

#: the sentencepiece release whose Python API this module follows
__version__ = "0.2.1"

__all__ = ["SentencePieceProcessor", "SentencePieceTrainer", "SentencePieceNormalizer",
           "ImmutableSentencePieceText", "ImmutableSentencePieceText_ImmutableSentencePiece",
           "ImmutableNBestSentencePieceText", "set_random_generator_seed", "set_min_log_level"]


def _unsupported(call, why):
    raise NotImplementedError(f"{call} is not implemented by nbtok.compat.sentencepiece: {why}")


_PROTO = ("serialized_proto", "immutable_proto")


def _bad_out_type(call, out_type):
    if out_type == "proto":
        _unsupported(f"{call}(out_type='proto')", "sentencepiece 0.2.1 returns the serialized bytes for it and "
                     "0.2.3 a protobuf message of its sentencepiece_pb2, which needs the protobuf package; use "
                     "'serialized_proto' (then SentencePieceText.FromString) or 'immutable_proto'")
    _unsupported(f"{call}(out_type={out_type!r})", "the outputs are int, str, 'serialized_proto' and "
                 "'immutable_proto'" + (" (and bytes for decode)" if call == "decode" else ""))


class SentencePieceProcessor:
    """sentencepiece's processor; the constructor takes ``model_file`` / ``model_proto`` and the
    encode defaults (``out_type``, ``add_bos``, ``add_eos``, ``reverse``, ``emit_unk_piece``,
    ``enable_sampling``, ``nbest_size``, ``alpha``, ``num_threads``)."""

    def __init__(self, model_file=None, model_proto=None, out_type=int, add_bos=False, add_eos=False,
                 reverse=False, emit_unk_piece=False, enable_sampling=False, nbest_size=-1, alpha=0.1,
                 num_threads=-1):
        self._model = None
        self._defaults = dict(out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse,
                              emit_unk_piece=emit_unk_piece, enable_sampling=enable_sampling,
                              nbest_size=nbest_size, alpha=alpha, num_threads=num_threads)
        if model_file is not None or model_proto is not None:
            self.load(model_file=model_file, model_proto=model_proto)

    Init = __init__

    # ------------------------------------------------------------------ loading
    def load(self, model_file=None, model_proto=None):
        """Load a ``.model`` file or its serialized bytes."""
        from ..models.sentencepiece import SentencePieceModel
        if model_proto is not None:
            self._model = SentencePieceModel.from_bytes(bytes(model_proto))
        elif model_file is not None:
            self._model = SentencePieceModel.load(model_file)
        else:
            raise ValueError("load needs model_file or model_proto")
        self._tok = Tokenizer(self._model)
        return True

    Load = load

    def LoadFromFile(self, arg):  # noqa: N802 - sentencepiece's name
        return self.load(model_file=arg)

    def LoadFromSerializedProto(self, serialized):  # noqa: N802
        return self.load(model_proto=serialized)

    def serialized_model_proto(self):
        return self._m.serialized_model_proto()

    @property
    def _m(self):
        if self._model is None:
            raise RuntimeError("no model is loaded: call load(model_file=...) first")
        return self._model

    def set_encode_extra_options(self, extra_option):
        """sentencepiece's ``"bos:eos:reverse:unk"`` string: the options it names become defaults."""
        names = {"bos": "add_bos", "eos": "add_eos", "reverse": "reverse", "unk": "emit_unk_piece"}
        for opt in filter(None, extra_option.split(":")):
            if opt not in names:
                raise ValueError(f"unknown extra option {opt!r} (bos, eos, reverse, unk)")
            self._defaults[names[opt]] = True

    SetEncodeExtraOptions = set_encode_extra_options

    # ------------------------------------------------------------------ encoding
    def encode(self, input, out_type=None, add_bos=None, add_eos=None, reverse=None, emit_unk_piece=None,
               enable_sampling=None, nbest_size=None, alpha=None, num_threads=None):
        """Ids (``out_type=int``) or pieces (``out_type=str``) of a text, or of each text of a list."""
        o = {k: (v if v is not None else self._defaults[k]) for k, v in dict(
            out_type=out_type, add_bos=add_bos, add_eos=add_eos, reverse=reverse, emit_unk_piece=emit_unk_piece,
            enable_sampling=enable_sampling, nbest_size=nbest_size, alpha=alpha, num_threads=num_threads).items()}
        if o["out_type"] in _PROTO:
            return self._encode_proto(input, o)
        if o["out_type"] not in (int, str):
            _bad_out_type("encode", o["out_type"])
        if isinstance(input, (list, tuple)):
            if o["out_type"] is int and not o["enable_sampling"] and not o["reverse"]:
                threads = None if o["num_threads"] is None or o["num_threads"] < 0 else int(o["num_threads"])
                ids, offsets = self._tok.encode_batch_ragged(list(input), add_bos=o["add_bos"], add_eos=o["add_eos"],
                                                             num_threads=threads)
                flat, bounds = ids.tolist(), offsets.tolist()
                return [flat[bounds[i]:bounds[i + 1]] for i in range(len(input))]
            return [self._encode_one(t, o) for t in input]
        return self._encode_one(input, o)

    def _encode_one(self, text, o):
        m = self._m
        m._F(o["add_bos"], o["add_eos"])   # ValueError when the model has no such control piece
        if o["enable_sampling"] and o["out_type"] is str:  # an unknown piece is its text: the proto's pieces
            sampled = _P.encode_pieces(m, text, True, o["alpha"], o["nbest_size"])[1]
            ids, pieces = [p[1] for p in sampled], [p[0].decode("utf-8", "replace") for p in sampled]
        elif o["enable_sampling"]:
            ids = m.sample_encode(text, alpha=o["alpha"], nbest_size=o["nbest_size"]).tolist()
        else:
            ids = self._tok.encode(text).tolist()
        if o["out_type"] is str:
            if not o["enable_sampling"]:
                pieces = m.encode_as_pieces(text)
            if o["emit_unk_piece"]:
                unk = m.id_to_piece(m.unk_id)
                pieces = [unk if i == m.unk_id else p for p, i in zip(pieces, ids)]
            out = pieces
            bos, eos = m.id_to_piece(m.bos_id) if m.bos_id >= 0 else None, m.id_to_piece(m.eos_id) if m.eos_id >= 0 else None
        else:
            out, bos, eos = ids, m.bos_id, m.eos_id
        if o["reverse"]:   # the pieces are reversed, then bos / eos added (sentencepiece's order)
            out = out[::-1]
        if o["add_bos"]:
            out = [bos] + out
        if o["add_eos"]:
            out = out + [eos]
        return out

    def _encode_proto(self, input, o):
        _P.proto_options_check(o["add_bos"], o["add_eos"], o["reverse"], o["emit_unk_piece"])
        if isinstance(input, (list, tuple)):
            return [self._encode_proto(t, o) for t in input]
        data, pieces = _P.encode_pieces(self._m, input, o["enable_sampling"], o["alpha"], o["nbest_size"])
        if o["out_type"] == "serialized_proto":
            return _P.serialize_text(data, pieces)
        return _P.ImmutableSentencePieceText(data, pieces)

    def encode_as_ids(self, input, **kwargs):
        return self.encode(input, out_type=int, **kwargs)

    def encode_as_pieces(self, input, **kwargs):
        return self.encode(input, out_type=str, **kwargs)

    EncodeAsIds, EncodeAsPieces, Encode = encode_as_ids, encode_as_pieces, encode

    def nbest_encode(self, input, out_type=None, add_bos=None, add_eos=None, reverse=None,
                     emit_unk_piece=None, nbest_size=None):
        """The ``nbest_size`` best segmentations of a text (or of each text of a list)."""
        if isinstance(input, (list, tuple)):
            return [self.nbest_encode(t, out_type, add_bos, add_eos, reverse, emit_unk_piece, nbest_size) for t in input]
        m, d = self._m, self._defaults
        out_type = d["out_type"] if out_type is None else out_type
        n = d["nbest_size"] if nbest_size is None else nbest_size
        add_bos, add_eos, reverse, emit_unk = (d[k] if v is None else v for k, v in (
            ("add_bos", add_bos), ("add_eos", add_eos), ("reverse", reverse), ("emit_unk_piece", emit_unk_piece)))
        if out_type in _PROTO:
            _P.proto_options_check(add_bos, add_eos, reverse, emit_unk)
        elif out_type not in (int, str):
            _bad_out_type("nbest_encode", out_type)
        else:
            m._F(add_bos, add_eos)  # ValueError when the model has no such control piece
        # the segmentations as sentencepiece's NBestEncode fills its NBestSentencePieceText
        data, results = _P.nbest_pieces(m, input, max(int(n), 1))
        out = self._nbest_output(data, results, out_type, add_bos, add_eos, reverse, emit_unk)
        return out if out_type in _PROTO else [seq for seq, _ in out]

    def _nbest_output(self, data, results, out_type, add_bos, add_eos, reverse, emit_unk):
        """[(pieces, score)] of an n-best or sampled result as ``out_type``: the proto objects,
        or a list of (ids or pieces with BOS / EOS as asked, score)."""
        m = self._m
        if out_type == "serialized_proto":
            return _P.serialize_nbest([_P.serialize_text(data, p, score) for p, score in results])
        if out_type == "immutable_proto":
            return _P.ImmutableNBestSentencePieceText([_P.ImmutableSentencePieceText(data, p, score)
                                                      for p, score in results])
        out = []
        for pieces, score in results:
            if out_type is int:
                seq, bos, eos = [p[1] for p in pieces], m.bos_id, m.eos_id
            else:
                unk = m.id_to_piece(m.unk_id)
                seq = [unk if emit_unk and p[1] == m.unk_id else p[0].decode("utf-8", "replace") for p in pieces]
                bos, eos = (m.id_to_piece(i) if i >= 0 else None for i in (m.bos_id, m.eos_id))
            if reverse:
                seq = seq[::-1]
            out.append((([bos] if add_bos else []) + seq + ([eos] if add_eos else []), score))
        return out

    def nbest_encode_as_ids(self, input, nbest_size=None, **kwargs):
        return self.nbest_encode(input, out_type=int, nbest_size=nbest_size, **kwargs)

    def nbest_encode_as_pieces(self, input, nbest_size=None, **kwargs):
        return self.nbest_encode(input, out_type=str, nbest_size=nbest_size, **kwargs)

    NBestEncodeAsIds, NBestEncodeAsPieces, NBestEncode = nbest_encode_as_ids, nbest_encode_as_pieces, nbest_encode

    def encode_as_serialized_proto(self, input, **kwargs):
        return self.encode(input, out_type="serialized_proto", **kwargs)

    def encode_as_immutable_proto(self, input, **kwargs):
        return self.encode(input, out_type="immutable_proto", **kwargs)

    def sample_encode_as_serialized_proto(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.encode(input, out_type="serialized_proto", enable_sampling=True, nbest_size=nbest_size,
                           alpha=alpha, **kwargs)

    def sample_encode_as_immutable_proto(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.encode(input, out_type="immutable_proto", enable_sampling=True, nbest_size=nbest_size,
                           alpha=alpha, **kwargs)

    def nbest_encode_as_serialized_proto(self, input, nbest_size=None, **kwargs):
        return self.nbest_encode(input, out_type="serialized_proto", nbest_size=nbest_size, **kwargs)

    def nbest_encode_as_immutable_proto(self, input, nbest_size=None, **kwargs):
        return self.nbest_encode(input, out_type="immutable_proto", nbest_size=nbest_size, **kwargs)

    (EncodeAsSerializedProto, EncodeAsImmutableProto, SampleEncodeAsSerializedProto, SampleEncodeAsImmutableProto,
     NBestEncodeAsSerializedProto, NBestEncodeAsImmutableProto) = (
        encode_as_serialized_proto, encode_as_immutable_proto, sample_encode_as_serialized_proto,
        sample_encode_as_immutable_proto, nbest_encode_as_serialized_proto, nbest_encode_as_immutable_proto)

    def override_normalizer_spec(self, **kwargs):
        """Change the loaded model's normalizer flags (``add_dummy_prefix``,
        ``remove_extra_whitespaces``, ``escape_whitespaces``): the model is reloaded with them."""
        from ._spm_normalizer import override_spec
        self.load(model_proto=override_spec(self.serialized_model_proto(), kwargs))

    OverrideNormalizerSpec = override_normalizer_spec

    def sample_encode_as_ids(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.encode(input, out_type=int, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    def sample_encode_as_pieces(self, input, nbest_size=None, alpha=None, **kwargs):
        return self.encode(input, out_type=str, enable_sampling=True, nbest_size=nbest_size, alpha=alpha, **kwargs)

    SampleEncodeAsIds, SampleEncodeAsPieces = sample_encode_as_ids, sample_encode_as_pieces

    def sample_encode_and_score(self, input, out_type=None, add_bos=None, add_eos=None, reverse=None,
                                emit_unk_piece=None, num_samples=None, alpha=None, wor=None, include_best=None):
        """``num_samples`` segmentations of a text (or of each text of a list) drawn from
        p ~ exp(alpha * score) (Unigram), each with a score: without replacement (``wor``), the
        log-probability that the sample is drawn; with replacement, its log-probability.
        ``include_best`` (needs ``wor``) adds the best segmentation first, with score 0.
        ``alpha`` defaults to 1. The draws come from nbtok's generator
        (``set_random_generator_seed``), so they differ from sentencepiece's draw for draw."""
        if isinstance(input, list):
            return [self.sample_encode_and_score(t, out_type, add_bos, add_eos, reverse, emit_unk_piece, num_samples,
                                                 alpha, wor, include_best) for t in input]
        d = self._defaults
        out_type = d["out_type"] if out_type is None else out_type
        add_bos, add_eos, reverse, emit_unk = (d[k] if v is None else v for k, v in (
            ("add_bos", add_bos), ("add_eos", add_eos), ("reverse", reverse), ("emit_unk_piece", emit_unk_piece)))
        num_samples = 1 if num_samples is None else num_samples
        alpha = 1.0 if alpha is None else alpha
        wor, include_best = bool(wor), bool(include_best)
        if num_samples <= 0:
            raise RuntimeError("num_examples must be positive")
        if include_best and not wor:
            raise RuntimeError('When include_best is True, We must specify "wor = True".')
        if out_type in _PROTO:
            _P.proto_options_check(add_bos, add_eos, reverse, emit_unk)
        elif out_type not in (int, str):
            _bad_out_type("sample_encode_and_score", out_type)
        else:
            self._m._F(add_bos, add_eos)  # ValueError when the model has no such control piece
        data, results = _P.sample_and_score_pieces(self._m, input, num_samples, alpha, wor, include_best)
        return self._nbest_output(data, results, out_type, add_bos, add_eos, reverse, emit_unk)

    def sample_encode_and_score_as_pieces(self, input, num_samples=None, alpha=None, **kwargs):
        return self.sample_encode_and_score(input, out_type=str, num_samples=num_samples, alpha=alpha, **kwargs)

    def sample_encode_and_score_as_ids(self, input, num_samples=None, alpha=None, **kwargs):
        return self.sample_encode_and_score(input, out_type=int, num_samples=num_samples, alpha=alpha, **kwargs)

    def sample_encode_and_score_as_serialized_proto(self, input, num_samples=None, alpha=None, **kwargs):
        return self.sample_encode_and_score(input, out_type="serialized_proto", num_samples=num_samples,
                                            alpha=alpha, **kwargs)

    def sample_encode_and_score_as_immutable_proto(self, input, num_samples=None, alpha=None, **kwargs):
        return self.sample_encode_and_score(input, out_type="immutable_proto", num_samples=num_samples,
                                            alpha=alpha, **kwargs)

    (SampleEncodeAndScore, SampleEncodeAndScoreAsPieces, SampleEncodeAndScoreAsIds,
     SampleEncodeAndScoreAsSerializedProto, SampleEncodeAndScoreAsImmutableProto) = (
        sample_encode_and_score, sample_encode_and_score_as_pieces, sample_encode_and_score_as_ids,
        sample_encode_and_score_as_serialized_proto, sample_encode_and_score_as_immutable_proto)

    def calculate_entropy(self, input, alpha, num_threads=None):
        """Entropy of the segmentation distribution of a text (or a list of texts) at ``alpha``."""
        if isinstance(input, (list, tuple)):
            return [self._tok.calculate_entropy(t, alpha) for t in input]
        return self._tok.calculate_entropy(input, alpha)

    CalculateEntropy = calculate_entropy

    def normalize(self, input, with_offsets=None):
        """The text as the model normalizes it (str for str, bytes for bytes, a list for a list);
        with ``with_offsets``: (text, offsets into the input)."""
        from ._spm_normalizer import normalize
        return normalize(self._m.N, input, with_offsets)

    Normalize = normalize

    def set_vocabulary(self, *args, **kwargs):
        _unsupported("set_vocabulary", "a restricted vocabulary is not supported")

    SetVocabulary = reset_vocabulary = ResetVocabulary = set_vocabulary

    # ------------------------------------------------------------------ decoding
    def decode(self, input, out_type=str, num_threads=None):
        """The text of ids or pieces, or of each list of a batch (``out_type=bytes``: the bytes,
        which may end inside a character)."""
        if out_type is bytes:
            if isinstance(input, (int, np.integer)):
                input = [input]
            items = list(input)
            if items and isinstance(items[0], (list, tuple, np.ndarray)):
                return [self.decode(x, bytes) for x in items]
            if items and isinstance(items[0], str):
                return self._m.decode_pieces(items).encode("utf-8")
            return self._tok.decode_bytes(items)
        if out_type in _PROTO:
            return self._decode_proto(input, out_type)
        if out_type is not str:
            _bad_out_type("decode", out_type)
        if isinstance(input, (int, np.integer)):
            input = [input]
        if isinstance(input, str):
            return self._m.decode_pieces([input])
        items = list(input)
        if items and isinstance(items[0], (list, tuple, np.ndarray)):
            return [self.decode(x) for x in items]
        if items and isinstance(items[0], str):
            return self._m.decode_pieces(items)
        return self._tok.decode(items)

    def _decode_proto(self, input, out_type):
        if isinstance(input, (int, np.integer, str, bytes)):
            input = [input]
        items = list(input)
        if items and isinstance(items[0], (list, tuple, np.ndarray)):
            return [self._decode_proto(x, out_type) for x in items]
        text, pieces = _P.decode_pieces(self._m, items)
        if out_type == "serialized_proto":
            return _P.serialize_text(text, pieces)
        return _P.ImmutableSentencePieceText(text, pieces)

    def decode_ids(self, input, out_type=str, **kwargs):
        return self.decode(input, out_type, **kwargs)

    def decode_pieces(self, input, out_type=str, **kwargs):
        return self.decode(input, out_type, **kwargs)

    DecodeIds, DecodePieces, Decode = decode_ids, decode_pieces, decode

    def decode_pieces_as_serialized_proto(self, input, out_type="serialized_proto", **kwargs):
        return self.decode(input, out_type, **kwargs)

    def decode_ids_as_serialized_proto(self, input, out_type="serialized_proto", **kwargs):
        return self.decode(input, out_type, **kwargs)

    def decode_pieces_as_immutable_proto(self, input, out_type="immutable_proto", **kwargs):
        return self.decode(input, out_type, **kwargs)

    def decode_ids_as_immutable_proto(self, input, out_type="immutable_proto", **kwargs):
        return self.decode(input, out_type, **kwargs)

    (DecodePiecesAsSerializedProto, DecodeIdsAsSerializedProto, DecodePiecesAsImmutableProto,
     DecodeIdsAsImmutableProto) = (decode_pieces_as_serialized_proto, decode_ids_as_serialized_proto,
                                   decode_pieces_as_immutable_proto, decode_ids_as_immutable_proto)

    # ------------------------------------------------------------------ vocabulary
    def get_piece_size(self):
        return self._m.V

    piece_size = vocab_size = GetPieceSize = get_piece_size

    def __len__(self):
        return self._m.V

    def _each(self, x, fn):
        return [fn(v) for v in x] if isinstance(x, (list, tuple, np.ndarray)) else fn(x)

    def id_to_piece(self, id):  # noqa: A002 - sentencepiece's argument name
        return self._each(id, self._m.id_to_piece)

    def piece_to_id(self, piece):
        return self._each(piece, self._m.piece_to_id)

    def get_score(self, id):  # noqa: A002
        def score(i):
            if not 0 <= int(i) < self._m.V:
                raise IndexError(f"piece id {i} is out of range")
            return self._m.get_score(int(i))
        return self._each(id, score)

    IdToPiece, PieceToId, GetScore = id_to_piece, piece_to_id, get_score

    def __getitem__(self, piece):
        return self.piece_to_id(piece)

    def _kind(self, id, kind):  # noqa: A002
        kinds = self._m.vocab.kinds
        return self._each(id, lambda i: bool(kinds[int(i)] == kind) if 0 <= int(i) < kinds.size else False)

    def is_unknown(self, id):  # noqa: A002
        return self._kind(id, UNKNOWN)

    def is_control(self, id):  # noqa: A002
        return self._kind(id, CONTROL)

    def is_unused(self, id):  # noqa: A002
        return self._kind(id, UNUSED)

    def is_byte(self, id):  # noqa: A002
        return self._kind(id, BYTE)

    IsUnknown, IsControl, IsUnused, IsByte = is_unknown, is_control, is_unused, is_byte

    def unk_id(self):
        return self._m.unk_id

    def bos_id(self):
        return self._m.bos_id

    def eos_id(self):
        return self._m.eos_id

    def pad_id(self):
        m = self._m
        return m._reserved_id(m.proto.trainer["pad_piece"])

    UnkId, BosId, EosId, PadId = unk_id, bos_id, eos_id, pad_id

    def __getstate__(self):
        return {"proto": self.serialized_model_proto(), "defaults": self._defaults}

    def __setstate__(self, state):
        self.__init__(model_proto=state["proto"], **state["defaults"])


def set_random_generator_seed(seed):
    """Seed the generator subword sampling draws from (nbtok's, not sentencepiece's mt19937);
    ``seed`` in ``[0, 2**32)``."""
    from ..models.sentencepiece_sampling import seed_sampling
    seed_sampling(seed)


def set_min_log_level(level):
    """sentencepiece's logging threshold; nbtok's kernels do not log, so there is nothing to set."""
    if not isinstance(level, int):
        raise TypeError("level must be an int")


SetRandomGeneratorSeed, SetMinLogLevel = set_random_generator_seed, set_min_log_level


class SentencePieceTrainer:
    """``SentencePieceTrainer.train(input=..., model_prefix=..., vocab_size=..., model_type=...)``
    on ``nbtok.train_sentencepiece``: writes ``<model_prefix>.model`` and ``.vocab``."""

    @staticmethod
    def train(arg=None, **kwargs):
        import nbtok
        if arg is not None:
            if kwargs:
                raise ValueError("give the options as one string or as keyword arguments, not both")
            for item in arg.split():
                key, _, value = item.lstrip("-").partition("=")
                kwargs[key] = value
        kwargs.pop("minloglevel", None)  # sentencepiece's logging options: nbtok's trainer logs nothing
        kwargs.pop("logstream", None)
        prefix = kwargs.pop("model_prefix", None)
        if prefix is None and "model_writer" not in kwargs:
            raise ValueError("model_prefix is required")
        source = kwargs.pop("input", None) or kwargs.pop("sentence_iterator", None)
        if isinstance(source, str):
            source = source.split(",") if "," in source else source
        writer = kwargs.pop("model_writer", None)
        vocab_size = int(kwargs.pop("vocab_size", 8000))
        model_type = str(kwargs.pop("model_type", "unigram")).lower()
        sp = nbtok.train_sentencepiece(source, vocab_size, model_type=model_type, **kwargs)
        proto = sp.model.serialized_model_proto()
        if writer is not None:
            writer.write(proto)
            return
        m = sp.model
        vocab = "".join(f"{m.id_to_piece(i)}\t{m.get_score(i):g}\n" for i in range(m.V))
        write_many_atomic([(f"{prefix}.model", proto), (f"{prefix}.vocab", vocab)])

    Train = train


from ._spm_normalizer import SentencePieceNormalizer  # noqa: E402
