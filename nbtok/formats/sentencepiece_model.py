"""The sentencepiece ``ModelProto`` protobuf wire format, read and written without protobuf.

Only the fields that change encoding or decoding are interpreted; every other field of
``trainer_spec`` / ``normalizer_spec`` / ``denormalizer_spec`` is kept as raw bytes so that
``write_model_proto`` round-trips them. Field numbers follow ``sentencepiece_model.proto``.

Parsing the (up to several hundred thousand) ``pieces`` entries is done by two small
kernels; the few scalar fields of the spec messages are read in Python. Every length and
offset is checked against the buffer: a truncated or corrupt file raises ``ValueError``.
"""
import struct

import numpy as np

from .._jit import kernel

# wire types
VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5

# ModelProto.SentencePiece.Type
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
UNIGRAM, BPE, WORD, CHAR = 1, 2, 3, 4

TRAINER_FIELDS = {  # number: (name, kind, default)
    3: ("model_type", "int", UNIGRAM),
    4: ("vocab_size", "int", 8000),
    24: ("treat_whitespace_as_suffix", "bool", False),
    25: ("split_digits", "bool", False),
    35: ("byte_fallback", "bool", False),
    40: ("unk_id", "int", 0),
    41: ("bos_id", "int", 1),
    42: ("eos_id", "int", 2),
    43: ("pad_id", "int", -1),
    44: ("unk_surface", "str", " \u2047 "),
    45: ("unk_piece", "str", "<unk>"),
    46: ("bos_piece", "str", "<s>"),
    47: ("eos_piece", "str", "</s>"),
    48: ("pad_piece", "str", "<pad>"),
}
NORMALIZER_FIELDS = {
    1: ("name", "str", ""),
    2: ("precompiled_charsmap", "bytes", b""),
    3: ("add_dummy_prefix", "bool", True),
    4: ("remove_extra_whitespaces", "bool", True),
    5: ("escape_whitespaces", "bool", True),
}


# ------------------------------------------------------------------ kernels
@kernel
def _read_varint(buf, pos, end):
    """(value as int64, new pos); new pos = -1 if the varint runs past ``end`` or is too long."""
    result = np.uint64(0)
    shift = np.uint64(0)
    while pos < end:
        b = buf[pos]
        pos += 1
        result |= np.uint64(b & 0x7F) << shift
        if b < 0x80:
            return np.int64(result), pos
        shift += np.uint64(7)
        if shift >= np.uint64(70):
            return np.int64(0), -1
    return np.int64(0), -1


@kernel
def _skip_field(buf, pos, end, wtype):
    """Position after a field's payload, or -1 if it does not fit."""
    if wtype == 0:
        _, pos = _read_varint(buf, pos, end)
        return pos
    if wtype == 1:
        return pos + 8 if pos + 8 <= end else -1
    if wtype == 5:
        return pos + 4 if pos + 4 <= end else -1
    if wtype == 2:
        ln, pos = _read_varint(buf, pos, end)
        if pos < 0 or ln < 0 or ln > end - pos:
            return -1
        return pos + ln
    return -1  # groups (3, 4) and invalid wire types


@kernel
def scan_fields(buf, start, end, count_only, fields, wtypes, a, b):
    """Walk the fields of one message in ``buf[start:end]``.

    Fills ``fields``/``wtypes`` and ``a``/``b`` (varint: a = value; length-delimited: the
    payload is buf[a:b]; fixed32/64: a = offset) unless ``count_only``. Returns the number of
    fields, or -1 on malformed input.
    """
    pos = start
    n = 0
    while pos < end:
        tag, pos = _read_varint(buf, pos, end)
        if pos < 0 or tag <= 0:
            return -1
        field = tag >> 3
        wtype = tag & 7
        if field == 0:
            return -1
        va = np.int64(0)
        vb = np.int64(0)
        if wtype == 0:
            va, pos = _read_varint(buf, pos, end)
        elif wtype == 2:
            ln, pos = _read_varint(buf, pos, end)
            if pos < 0 or ln < 0 or ln > end - pos:
                return -1
            va = pos
            vb = pos + ln
            pos = pos + ln
        else:
            va = pos
            pos = _skip_field(buf, pos, end, wtype)
        if pos < 0:
            return -1
        if not count_only:
            fields[n] = field
            wtypes[n] = wtype
            a[n] = va
            b[n] = vb
        n += 1
    return n


@kernel
def parse_pieces(buf, starts, ends):
    """Decode ``SentencePiece`` sub-messages: (piece_start, piece_end, score_bits, type, bad index).

    ``bad`` is -1 when every message parsed, else the index of the first malformed one.
    A missing score is 0.0 and a missing type is NORMAL, as in the .proto defaults.
    """
    n = starts.shape[0]
    ps = np.zeros(n, np.int64)
    pe = np.zeros(n, np.int64)
    bits = np.zeros(n, np.uint32)
    types = np.full(n, 1, np.int64)
    for i in range(n):
        pos = starts[i]
        end = ends[i]
        while pos < end:
            tag, pos = _read_varint(buf, pos, end)
            if pos < 0:
                return ps, pe, bits, types, i
            field = tag >> 3
            wtype = tag & 7
            if field == 1 and wtype == 2:
                ln, pos = _read_varint(buf, pos, end)
                if pos < 0 or ln < 0 or ln > end - pos:
                    return ps, pe, bits, types, i
                ps[i] = pos
                pe[i] = pos + ln
                pos += ln
            elif field == 2 and wtype == 5:
                if pos + 4 > end:
                    return ps, pe, bits, types, i
                bits[i] = (np.uint32(buf[pos]) | (np.uint32(buf[pos + 1]) << np.uint32(8))
                           | (np.uint32(buf[pos + 2]) << np.uint32(16)) | (np.uint32(buf[pos + 3]) << np.uint32(24)))
                pos += 4
            elif field == 3 and wtype == 0:
                v, pos = _read_varint(buf, pos, end)
                if pos < 0:
                    return ps, pe, bits, types, i
                types[i] = v
            else:
                pos = _skip_field(buf, pos, end, wtype)
                if pos < 0:
                    return ps, pe, bits, types, i
    return ps, pe, bits, types, -1


@kernel
def _gather_ranges(buf, starts, ends):
    """Concatenate ``buf[starts[i]:ends[i]]``: (bytes, offsets)."""
    n = starts.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    for i in range(n):
        offsets[i + 1] = offsets[i] + ends[i] - starts[i]
    out = np.empty(offsets[n], np.uint8)
    for i in range(n):
        o = offsets[i]
        for k in range(starts[i], ends[i]):
            out[o] = buf[k]
            o += 1
    return out, offsets


# ------------------------------------------------------------------ reading
def _fields(buf, start, end):
    n = scan_fields(buf, start, end, True, np.zeros(1, np.int64), np.zeros(1, np.int64),
                    np.zeros(1, np.int64), np.zeros(1, np.int64))
    if n < 0:
        raise ValueError("corrupt sentencepiece model: malformed protobuf message")
    out = [np.zeros(n, np.int64) for _ in range(4)]
    scan_fields(buf, start, end, False, *out)
    return out


def _to_int32(v):
    v = int(v) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _read_spec(buf, start, end, table):
    """Interpret the known scalar fields of a spec message; returns (values, raw bytes)."""
    values = {name: default for name, _, default in table.values()}
    fields, wtypes, a, b = _fields(buf, start, end)
    for f, w, va, vb in zip(fields.tolist(), wtypes.tolist(), a.tolist(), b.tolist()):
        if f not in table:
            continue
        name, kind, _ = table[f]
        if kind in ("int", "bool"):
            if w != VARINT:
                raise ValueError(f"corrupt sentencepiece model: field {name} has wire type {w}")
            values[name] = bool(va) if kind == "bool" else _to_int32(va)
        else:
            if w != LEN:
                raise ValueError(f"corrupt sentencepiece model: field {name} has wire type {w}")
            raw = bytes(buf[va:vb])
            if kind == "str":
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise ValueError(f"corrupt sentencepiece model: field {name} is not UTF-8") from None
            values[name] = raw
    return values, bytes(buf[start:end])


class ModelProtoData:
    """What nbtok needs from a ``ModelProto``: pieces as flat arrays plus the spec values.

    piece_bytes uint8[], piece_offsets int64[V+1], scores float32[V], types int8[V];
    ``trainer``, ``normalizer``, ``denormalizer``: dicts of the interpreted fields
    (``denormalizer`` is None when absent); ``raw_*``: the original sub-message bytes.
    """

    def __init__(self, piece_bytes, piece_offsets, scores, types, trainer, normalizer,
                 denormalizer, raw_trainer=b"", raw_normalizer=b"", raw_denormalizer=None,
                 raw_other=b""):
        self.piece_bytes = piece_bytes
        self.piece_offsets = piece_offsets
        self.scores = scores
        self.types = types
        self.trainer = trainer
        self.normalizer = normalizer
        self.denormalizer = denormalizer
        self.raw_trainer = raw_trainer
        self.raw_normalizer = raw_normalizer
        self.raw_denormalizer = raw_denormalizer
        self.raw_other = raw_other


def read_model_proto(data):
    """Parse a serialized ``ModelProto`` (bytes) into ``ModelProtoData``; ValueError if corrupt."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected bytes, not {type(data).__name__}")
    buf = np.frombuffer(bytes(data), np.uint8)
    if buf.size == 0:
        raise ValueError("corrupt sentencepiece model: the file is empty")
    fields, wtypes, a, b = _fields(buf, 0, buf.size)
    sel = (fields == 1)
    if np.any(wtypes[sel] != LEN):
        raise ValueError("corrupt sentencepiece model: a piece entry is not a message")
    ps, pe, bits, types, bad = parse_pieces(buf, a[sel], b[sel])
    if bad >= 0:
        raise ValueError(f"corrupt sentencepiece model: piece {bad} is malformed")
    if np.any((types < NORMAL) | (types > BYTE)):
        i = int(np.argmax((types < NORMAL) | (types > BYTE)))
        raise ValueError(f"corrupt sentencepiece model: piece {i} has unknown type {int(types[i])}")
    piece_bytes, piece_offsets = _gather_ranges(buf, ps, pe)
    scores = bits.view(np.float32)
    trainer, normalizer, denorm = None, None, None
    raw_t, raw_n, raw_d = b"", b"", None
    other = []
    rest = np.flatnonzero(~sel)  # the fields other than pieces (a handful; pieces can be 250k)
    for f, w, va, vb in zip(fields[rest].tolist(), wtypes[rest].tolist(), a[rest].tolist(), b[rest].tolist()):
        if f in (2, 3, 5) and w != LEN:
            raise ValueError(f"corrupt sentencepiece model: field {f} is not a message")
        if f == 2:
            trainer, raw_t = _read_spec(buf, va, vb, TRAINER_FIELDS)
        elif f == 3:
            normalizer, raw_n = _read_spec(buf, va, vb, NORMALIZER_FIELDS)
        elif f == 5:
            denorm, raw_d = _read_spec(buf, va, vb, NORMALIZER_FIELDS)
        else:
            other.append((f, w, va, vb))
    if trainer is None:
        trainer, raw_t = _read_spec(buf, 0, 0, TRAINER_FIELDS)
    if normalizer is None:
        normalizer, raw_n = _read_spec(buf, 0, 0, NORMALIZER_FIELDS)
    raw_other = b"".join(_encode_field(buf, *o) for o in other)
    return ModelProtoData(piece_bytes, piece_offsets, scores, types.astype(np.int8), trainer,
                          normalizer, denorm, raw_t, raw_n, raw_d, raw_other)


def read_model_file(path):
    with open(path, "rb") as f:
        return read_model_proto(f.read())


# ------------------------------------------------------------------ writing
def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wtype):
    return _varint((field << 3) | wtype)


def _len_field(field, payload):
    return _key(field, LEN) + _varint(len(payload)) + payload


def _encode_field(buf, f, w, va, vb):
    if w == VARINT:
        return _key(f, w) + _varint(va)
    if w == LEN:
        return _len_field(f, bytes(buf[va:vb]))
    size = 8 if w == FIXED64 else 4
    return _key(f, w) + bytes(buf[va:va + size])


def encode_spec(raw, table, values):
    """Re-encode a spec message: ``raw`` with the fields in ``values`` replaced."""
    buf = np.frombuffer(raw, np.uint8)
    fields, wtypes, a, b = _fields(buf, 0, buf.size)
    by_name = {name: (num, kind) for num, (name, kind, _) in table.items()}
    replace = {by_name[k][0] for k in values if k in by_name}
    out = [_encode_field(buf, f, w, va, vb) for f, w, va, vb in
           zip(fields.tolist(), wtypes.tolist(), a.tolist(), b.tolist()) if f not in replace]
    for name, value in values.items():
        num, kind = by_name[name]
        if kind in ("int", "bool"):
            out.append(_key(num, VARINT) + _varint(int(value)))
        else:
            payload = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            out.append(_len_field(num, payload))
    return b"".join(out)


def write_model_proto(data):
    """Serialize ``ModelProtoData`` back to ``ModelProto`` bytes that sentencepiece loads."""
    pb = data.piece_bytes.tobytes()
    offs = data.piece_offsets.tolist()
    scores = np.ascontiguousarray(data.scores, np.float32).tobytes()
    types = data.types.tolist()
    parts = []
    score_key = _key(2, FIXED32)
    for i in range(len(types)):
        piece = pb[offs[i]:offs[i + 1]]
        body = _len_field(1, piece) + score_key + scores[4 * i:4 * i + 4]
        if types[i] != NORMAL:
            body += _key(3, VARINT) + _varint(types[i])
        parts.append(_len_field(1, body))
    parts.append(_len_field(2, data.raw_trainer))
    parts.append(_len_field(3, data.raw_normalizer))
    if data.raw_other:
        parts.append(data.raw_other)
    if data.raw_denormalizer is not None:
        parts.append(_len_field(5, data.raw_denormalizer))
    return b"".join(parts)


def pack_float(x):
    return struct.pack("<f", x)


def tokenizer_from_proto(data):
    """A ``Tokenizer`` for a serialized sentencepiece ``ModelProto`` (the bytes of a ``.model``
    file). Trainers and loaders of other formats (GGUF) write a ModelProto and build through here."""
    from ..models.sentencepiece import SentencePieceModel
    from ..tokenizer import Tokenizer
    return Tokenizer(SentencePieceModel.from_bytes(bytes(data)))
