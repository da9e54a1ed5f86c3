"""The GGUF container (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): nbtok's own
bounds-checked reader of a GGUF file's header and metadata (``nbtok.formats.gguf`` reads the
vocabulary from it).

Layout: magic ``GGUF``, a uint32 version (1, 2 or 3), the tensor count and the key/value count
(uint64; uint32 in version 1), then the key/value pairs: a string key, a uint32 value type, the
value. Strings are a length (uint64; uint32 in version 1) and UTF-8 bytes; an array is an element
type, a count and the elements. Only the metadata is read, never the tensors.

Byte order: files are little-endian, except the big-endian ones llama.cpp's ``gguf-py`` writes
for big-endian machines (s390x): the magic is the same four bytes, every number after it (the
version, counts, lengths, types, scalars and array elements) is big-endian. The byte order is
told by the version field: a big-endian 1, 2 or 3 reads little-endian as that number shifted left
by 24 bits. Numbers are returned in the machine's order either way (scalars as Python numbers,
arrays as native-order NumPy arrays).

Every length and count is checked against the bytes left in the file before anything is
allocated, so a truncated or corrupt file is a ``ValueError``.
"""
import mmap
import struct
from pathlib import Path

import numpy as np

MAGIC = b"GGUF"

# value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
# NumPy type codes and struct codes of the scalar types, without the byte-order prefix
_SCALARS = {UINT8: "u1", INT8: "i1", UINT16: "u2", INT16: "i2", UINT32: "u4", INT32: "i4",
            FLOAT32: "f4", BOOL: "u1", UINT64: "u8", INT64: "i8", FLOAT64: "f8"}
_STRUCT = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i",
           FLOAT32: "f", BOOL: "B", UINT64: "Q", INT64: "q", FLOAT64: "d"}
_MAX_DEPTH = 4  # arrays of arrays: the format allows them; nothing real nests deeper than 2
_VERSIONS = (1, 2, 3)

TYPE_NAMES = {UINT8: "uint8", INT8: "int8", UINT16: "uint16", INT16: "int16", UINT32: "uint32", INT32: "int32",
              FLOAT32: "float32", BOOL: "bool", STRING: "string", ARRAY: "array", UINT64: "uint64",
              INT64: "int64", FLOAT64: "float64"}


class _Reader:
    """Bounds-checked reads over the file's bytes in one byte order (``order`` "<" or ">")."""

    def __init__(self, data, where, wide, order="<"):
        self.data = data
        self.pos = 0
        self.where = where
        self.wide = wide  # lengths and counts are uint64 (versions 2, 3) or uint32 (version 1)
        self.order = order

    def fail(self, what):
        raise ValueError(f"{self.where}: corrupt GGUF file: {what} (at byte {self.pos} of {len(self.data)})")

    def need(self, n, what):
        if n < 0 or n > len(self.data) - self.pos:
            self.fail(f"{what} needs {n} bytes, {len(self.data) - self.pos} are left")

    def unpack(self, code, what):
        fmt = self.order + code
        size = struct.calcsize(fmt)
        self.need(size, what)
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += size
        return value

    def count(self, what):
        return self.unpack("Q" if self.wide else "I", what)

    def string(self, what):
        n = self.count(f"the length of {what}")
        self.need(n, what)
        raw = self.data[self.pos:self.pos + n]
        self.pos += n
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"{what} is not UTF-8")

    def value(self, vtype, what, depth=0):
        if vtype in _SCALARS:
            v = self.unpack(_STRUCT[vtype], what)
            if vtype == BOOL:
                if v > 1:
                    self.fail(f"{what} is a bool holding {v}")
                return bool(v)
            return v
        if vtype == STRING:
            return self.string(what)
        if vtype == ARRAY:
            return self.array(what, depth)
        self.fail(f"{what} has unknown value type {vtype}")

    def array(self, what, depth):
        if depth >= _MAX_DEPTH:
            self.fail(f"{what}: arrays nested deeper than {_MAX_DEPTH}")
        etype = self.unpack("I", f"the element type of {what}")
        n = self.count(f"the length of {what}")
        if etype in _SCALARS:
            dtype = np.dtype(self.order + _SCALARS[etype])
            self.need(n * dtype.itemsize, f"{what} ({n} elements)")
            arr = np.frombuffer(self.data, dtype, n, self.pos).astype(dtype.newbyteorder("="))  # a native copy
            self.pos += n * dtype.itemsize
            if etype == BOOL:
                if arr.size and arr.max() > 1:
                    self.fail(f"{what} holds a bool that is not 0 or 1")
                arr = arr.astype(bool)
            return arr
        if etype == STRING:
            self.need(n * (8 if self.wide else 4), f"{what} ({n} strings)")  # every string has a length
            return [self.string(f"{what}[{i}]") for i in range(n)]
        if etype == ARRAY:
            self.need(n * (12 if self.wide else 8), f"{what} ({n} arrays)")
            return [self.array(f"{what}[{i}]", depth + 1) for i in range(n)]
        self.fail(f"{what} has unknown element type {etype}")


class GGUFFile:
    """A GGUF file's header and metadata: ``version``, ``tensor_count``, ``metadata``
    (``{key: value}``; arrays of numbers as NumPy arrays, of strings as lists), ``types``
    (``{key: value type}``, arrays as ``(ARRAY, element type)``) and ``byte_order`` ("<" for a
    little-endian file, ">" for a big-endian one)."""

    def __init__(self, version, tensor_count, metadata, types, byte_order="<"):
        self.version = version
        self.tensor_count = tensor_count
        self.metadata = metadata
        self.types = types
        self.byte_order = byte_order

    def __repr__(self):
        endian = "" if self.byte_order == "<" else " big-endian"
        return f"<GGUFFile{endian} version={self.version} tensors={self.tensor_count} keys={len(self.metadata)}>"


def byte_order(data, where="<bytes>"):
    """``("<" or ">", version)`` of a GGUF file's first 8 bytes; ``ValueError`` if they are not
    the magic and a known version in either byte order."""
    if bytes(data[:4]) != MAGIC:
        raise ValueError(f"{where}: not a GGUF file (it does not start with b'GGUF')")
    r = _Reader(data, where, True)
    r.pos = 4
    version = r.unpack("I", "the version")
    if version in _VERSIONS:
        return "<", version
    swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
    if swapped in _VERSIONS:
        return ">", swapped
    r.pos = 4
    r.fail(f"unknown version {version}")


def parse_gguf(data, where="<bytes>"):
    """The ``GGUFFile`` of a GGUF file's bytes (or a memory map of the file), little- or
    big-endian; ``ValueError`` if it is not one or is corrupt."""
    if not isinstance(data, (bytes, bytearray, memoryview, mmap.mmap)):
        raise TypeError(f"expected bytes, not {type(data).__name__}")
    order, version = byte_order(data, where)
    r = _Reader(data, where, version >= 2, order)
    r.pos = 8
    tensor_count = r.count("the tensor count")
    n_kv = r.count("the key/value count")
    r.need(n_kv * (8 + 4 if r.wide else 4 + 4), f"{n_kv} key/value pairs")
    metadata, types = {}, {}
    for i in range(n_kv):
        key = r.string(f"key {i}")
        vtype = r.unpack("I", f"the type of {key!r}")
        if key in metadata:
            r.fail(f"key {key!r} appears twice")
        if vtype == ARRAY:
            start = r.pos
            etype = r.unpack("I", f"the element type of {key!r}")
            r.pos = start
            types[key] = (ARRAY, etype)
        else:
            types[key] = vtype
        metadata[key] = r.value(vtype, repr(key))
    return GGUFFile(version, tensor_count, metadata, types, order)


def read_gguf(path):
    """``parse_gguf`` of the file at ``path``, read through a memory map: of a model file of many
    gigabytes only the metadata at its start is touched."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        with open(path, "rb") as f:
            if path.stat().st_size == 0:
                return parse_gguf(b"", str(path))
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return parse_gguf(data, str(path))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e}") from None
