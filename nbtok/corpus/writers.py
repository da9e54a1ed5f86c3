"""Shard writers: Megatron-LM indexed dataset (``.bin`` + ``.idx``), NumPy (``.ids.npy`` +
``.offsets.npy``) and datatrove (``.ds`` + ``.ds.index``).

Every writer takes the whole shard as flat ``ids`` + ``offsets`` (document d is
``ids[offsets[d]:offsets[d+1]]``), writes both files of a shard under temporary names and
then renames them into place (``formats._atomic``), so a reader never sees a half-written file.

Megatron ``.idx`` (``megatron/core/datasets/indexed_dataset.py``): the 9-byte magic
``MMIDIDX\\x00\\x00``, uint64 version 1, uint8 dtype code, uint64 sequence count, uint64
document-index count, then int32 sequence lengths, int64 sequence byte pointers and int64
document indices (``0, 1, ..., n``: one sequence per document). ``.bin`` is the ids end to end.
datatrove ``.ds``: the ids end to end (uint16, or uint32 past 65535); ``.ds.index``: uint64
cumulative token counts at each document end.
"""

import numpy as np

from ..formats._atomic import atomic_files

FORMATS = ("megatron", "numpy", "datatrove")
MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
MEGATRON_DTYPE_CODES = {np.uint8: 1, np.int8: 2, np.int16: 3, np.int32: 4, np.int64: 5,
                        np.float64: 6, np.float32: 7, np.uint16: 8}


def token_dtype(fmt, vocab_size):
    """The id dtype each format uses: Megatron's rule (uint16 below 65500, else int32),
    uint16/uint32 for datatrove, uint16/int32 for NumPy."""
    small = vocab_size < 65500 if fmt == "megatron" else vocab_size <= 65536
    if small:
        return np.uint16
    return np.uint32 if fmt == "datatrove" else np.int32


def shard_files(fmt, prefix):
    """The final file names of one shard."""
    if fmt == "megatron":
        return [prefix + ".bin", prefix + ".idx"]
    if fmt == "numpy":
        return [prefix + ".ids.npy", prefix + ".offsets.npy"]
    if fmt == "datatrove":
        return [prefix + ".ds", prefix + ".ds.index"]
    raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")


def _write_pair(names, data, index):
    """Write a shard's data file and its index (each ``bytes`` or an array), both to
    temporaries before either is renamed (``formats._atomic``)."""
    with atomic_files(*names) as files:
        for f, part in zip(files, (data, index)):
            f.write(part if isinstance(part, bytes) else memoryview(np.ascontiguousarray(part)).cast("B"))


def _npy_bytes(a):
    import io
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def megatron_index(lengths, dtype):
    """The bytes of a Megatron ``.idx`` for documents of ``lengths`` tokens each."""
    n = lengths.shape[0]
    itemsize = np.dtype(dtype).itemsize
    pointers = np.zeros(n, np.int64)
    if n:
        np.cumsum(lengths[:-1].astype(np.int64) * itemsize, out=pointers[1:])
    head = (MEGATRON_MAGIC + np.array([1], "<u8").tobytes() + np.array([MEGATRON_DTYPE_CODES[dtype]], "u1").tobytes()
            + np.array([n, n + 1], "<u8").tobytes())
    return (head + lengths.astype("<i4").tobytes() + pointers.astype("<i8").tobytes()
            + np.arange(n + 1, dtype="<i8").tobytes())


def write_shard(fmt, prefix, ids, offsets, vocab_size):
    """Write one shard; returns its file names (data file first)."""
    dtype = token_dtype(fmt, vocab_size)
    if ids.size and int(ids.max()) > np.iinfo(dtype).max:
        raise ValueError(f"an id {int(ids.max())} does not fit {np.dtype(dtype).name}")
    data = ids.astype(np.dtype(dtype).newbyteorder("<"), copy=False)
    names = shard_files(fmt, prefix)
    lengths = np.diff(offsets)
    if fmt == "megatron":
        _write_pair(names, data, megatron_index(lengths, dtype))
    elif fmt == "numpy":
        _write_pair(names, _npy_bytes(data), _npy_bytes(offsets.astype(np.int64)))
    else:
        _write_pair(names, data, np.asarray(offsets[1:], "<u8"))
    return names
