"""sentencepiece's normalizer as a call of its own: ``SentencePieceProcessor.normalize`` (the
model's whole normalizer, user-defined symbols included) and ``SentencePieceNormalizer`` (a
``NormalizerSpec`` alone: from a model, a serialized spec or a built-in rule name), with
sentencepiece's offsets (bytes: per normalized byte its original byte; str: per normalized
character its original character, ``ConvertToUnicodeAlignment``). The text goes through nbtok's
normalizer kernel (``normalizers.sentencepiece_offsets.normalized_with_alignment``).

Examples:
    >>> from nbtok.compat.sentencepiece import SentencePieceNormalizer
    >>> n = SentencePieceNormalizer(rule_name="nfkc_cf", add_dummy_prefix=True, escape_whitespaces=True,
    ...                             remove_extra_whitespaces=True)
    >>> n.normalize("ＡＢＣ  x")
    '▁abc▁x'
"""
import numpy as np

from ..formats.sentencepiece_model import (NORMALIZER_FIELDS, _encode_field, _fields, _len_field, _read_spec,
                                           encode_spec)

_FLAGS = ("add_dummy_prefix", "escape_whitespaces", "remove_extra_whitespaces")
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")


def _char_starts(data):
    """sentencepiece's ``UTF8ToUnicodeOffsets``: per byte offset (and the end) its character index."""
    out = np.zeros(len(data) + 1, np.int64)
    pos = ulen = 0
    lens = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)
    while pos < len(data):
        n = min(len(data) - pos, lens[data[pos] >> 4])
        out[pos:pos + n] = ulen
        ulen += 1
        pos += n
    out[pos] = ulen
    return out


def normalize_one(N, text, with_offsets):
    """``text`` (str or bytes) normalized by the normalizer tuple ``N``; with offsets: (text, offsets)."""
    from ..normalizers.sentencepiece_offsets import normalized_with_alignment
    if isinstance(text, str):
        data, is_bytes = text.encode("utf-8", "replace"), False
    elif isinstance(text, (bytes, bytearray, memoryview)):
        data, is_bytes = bytes(text), True
    else:
        raise TypeError(f"a text must be str or bytes, not {type(text).__name__}")
    norm, n2o = normalized_with_alignment(np.frombuffer(data, np.uint8), N)
    out = norm.tobytes() if is_bytes else norm.tobytes().decode("utf-8", "replace")
    if not with_offsets:
        return out
    n2o = [] if _returns_early(N, data, norm) else n2o.tolist()
    if is_bytes:
        return out, n2o
    orig, normed = _char_starts(data), _char_starts(norm.tobytes())
    if len(orig) == 0 or len(normed) == 0:
        return out, n2o
    res = [0] * (int(normed[-1]) + 1)
    for i, o in enumerate(n2o):
        if i < len(normed) and o < len(orig):
            res[int(normed[i])] = int(orig[o])
    return out, res


def _returns_early(N, data, norm):
    """Whether sentencepiece's ``Normalizer::Normalize`` returns before writing any alignment:
    an empty text, or (with ``remove_extra_whitespaces``) a text whose every character
    normalizes to one space. Its offsets are then empty."""
    from ..normalizers.sentencepiece_offsets import normalized_with_alignment
    if not data:
        return True
    if norm.size or not N[5][1]:
        return False
    bare = N[:5] + (np.zeros_like(N[5]),) + N[6:]
    spaces, n2o = normalized_with_alignment(np.frombuffer(data, np.uint8), bare)
    origins = n2o[:-1]
    return bool(spaces.size) and bool((spaces == 32).all()) and bool((np.diff(origins) > 0).all())


def normalize(N, input, with_offsets=None):
    if isinstance(input, list):
        return [normalize_one(N, x, with_offsets) for x in input]
    return normalize_one(N, input, with_offsets)


def _sorted_spec(raw):
    """A spec message with its fields in field-number order, as sentencepiece serializes it."""
    buf = np.frombuffer(raw, np.uint8)
    fields, wtypes, a, b = _fields(buf, 0, buf.size)
    rows = sorted(zip(fields.tolist(), range(len(fields)), wtypes.tolist(), a.tolist(), b.tolist()))
    return b"".join(_encode_field(buf, f, w, va, vb) for f, _, w, va, vb in rows)


class SentencePieceNormalizer:
    """sentencepiece's ``SentencePieceNormalizer`` (0.2.1's constructor: the three flags default
    to False and replace the spec's; None keeps the spec's, as 0.2.3 does).

    ``rule_tsv`` raises NotImplementedError: nbtok does not compile normalization rules into a
    charsmap (it reads the compiled ones of models and its built-in rules)."""

    def __init__(self, model_file=None, model_proto=None, rule_tsv=None, rule_name=None, add_dummy_prefix=False,
                 escape_whitespaces=False, remove_extra_whitespaces=False, normalizer_spec=None):
        from ..formats.sentencepiece_model import read_model_proto
        if model_file is not None or model_proto is not None:
            if model_proto is None:
                with open(model_file, "rb") as f:
                    model_proto = f.read()
            raw = read_model_proto(bytes(model_proto)).raw_normalizer
        elif normalizer_spec is not None:
            raw = bytes(normalizer_spec)
        elif rule_tsv is not None:
            raise NotImplementedError("SentencePieceNormalizer(rule_tsv=...) is not implemented by nbtok: it does "
                                      "not compile normalization rules into a charsmap")
        elif rule_name is not None:
            if rule_name not in RULES:
                raise ValueError(f"No precompiled charsmap is found: {rule_name}")
            from ..train.sentencepiece.sentences import charsmap
            raw = _len_field(1, rule_name.encode("utf-8"))
            raw += _len_field(2, charsmap(rule_name) if rule_name != "identity" else b"")
        else:
            raise RuntimeError("no model is specified")
        values = {k: bool(v) for k, v in zip(_FLAGS, (add_dummy_prefix, escape_whitespaces, remove_extra_whitespaces))
                  if v is not None}
        self._load(encode_spec(raw, NORMALIZER_FIELDS, values) if values else raw)

    Init = __init__

    def _load(self, raw):
        from ..models.sentencepiece import normalizer_arrays
        self._raw = _sorted_spec(raw)
        spec, _ = _read_spec(np.frombuffer(self._raw, np.uint8), 0, len(self._raw), NORMALIZER_FIELDS)
        self._N = normalizer_arrays(spec)

    def normalize(self, input, with_offsets=None):
        """The normalized text (str for str, bytes for bytes; a list for a list); with
        ``with_offsets``: (text, offsets), an offset per normalized character (byte) and the end."""
        return normalize(self._N, input, with_offsets)

    Normalize = normalize

    def serialized_normalizer_spec(self):
        return self._raw

    def serialized_model_proto(self):
        return _len_field(3, self._raw)

    def __getstate__(self):
        return self.serialized_model_proto()

    def __setstate__(self, state):
        from ..formats.sentencepiece_model import read_model_proto
        self._load(read_model_proto(state).raw_normalizer)


def override_spec(model_proto, kwargs):
    """``model_proto`` (bytes) with normalizer spec fields replaced (sentencepiece's
    ``OverrideNormalizerSpec``: ``add_dummy_prefix``, ``remove_extra_whitespaces``,
    ``escape_whitespaces``; values as bools or their strings)."""
    from ..formats.sentencepiece_model import read_model_proto, write_model_proto
    values = {}
    for k, v in kwargs.items():
        if k not in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
            raise NotImplementedError(f"override_normalizer_spec({k}=...) is not implemented by nbtok "
                                      "(add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces)")
        s = str(v).strip().lower()
        if s not in ("true", "false", "1", "0"):
            raise ValueError(f"cannot parse {v!r} as bool")
        values[k] = s in ("true", "1")
    data = read_model_proto(bytes(model_proto))
    data.raw_normalizer = _sorted_spec(encode_spec(data.raw_normalizer, NORMALIZER_FIELDS, values))
    return write_model_proto(data)
