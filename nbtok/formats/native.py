"""nbtok's own format: one ``.npz`` holding the model's arrays and a JSON header.

A model's ``state()`` is a nested dict whose leaves are NumPy arrays or JSON-able values
(``bytes`` and tuples are allowed too). Arrays are stored as ``.npy`` members named by their
path (``vocab/piece_bytes``); everything else goes into the JSON member ``__header__``.
Loading never unpickles: the model class comes from a fixed registry, the state must have the
shape that class writes (``STATE_SCHEMA``: every array of exactly its dtype and number of
dimensions, never cast; every other value of its type; an array only at its own path), and the
model's own constructor validates every array's content before a kernel sees it. Any damage
raises ``ValueError``.
"""
import base64
import binascii
import importlib
import json
import os
import tokenize
import zipfile
import zlib

import numpy as np

from ._atomic import atomic_files

FORMAT = "nbtok-native"
VERSION = 1
MODEL_CLASSES = {
    "ByteLevelBPE": "nbtok.models.bytelevel",
    "SentencePieceModel": "nbtok.models.sentencepiece",
    "LlamaCppSPM": "nbtok.formats.gguf_llama",
    "HuggingFaceModel": "nbtok.models.huggingface",
}

# The state each model class writes (``state()``): an array as ``(dtype, ndim)``, another value
# as its Python type, or the name of a check below (``_CHECKS``)
STATE_SCHEMA = {
    "ByteLevelBPE": {
        "vocab": {"piece_bytes": (np.uint8, 1), "piece_offsets": (np.int64, 1), "scores": (np.float32, 1),
                  "kinds": (np.int8, 1)},
        "merge_keys": (np.int64, 1), "merge_values": (np.int64, 1), "byte_ids": (np.int32, 1),
        "pattern": str, "special_tokens": "special_tokens", "whole_piece": bool, "merges": "merges",
    },
    "SentencePieceModel": {"model_proto": bytes},
    "LlamaCppSPM": {"model_proto": bytes, "partition_tokens": "partition_tokens"},
    "HuggingFaceModel": {"json": str},
}


def _is_special_tokens(v):
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(i, int) and not isinstance(i, bool)
                                       for k, i in v.items())


def _is_merges(v):
    return v is None or (isinstance(v, list) and all(
        isinstance(m, list) and len(m) == 2 and all(isinstance(x, bytes) for x in m) for m in v))


def _is_partition_tokens(v):
    return isinstance(v, list) and all(
        isinstance(t, list) and len(t) == 4 and isinstance(t[0], bytes) and t[0]
        and isinstance(t[1], int) and not isinstance(t[1], bool) and t[1] >= 0
        and isinstance(t[2], bool) and isinstance(t[3], bool) for t in v)


_CHECKS = {"special_tokens": ("a {str: int} dict", _is_special_tokens),
           "merges": ("null or a list of [bytes, bytes] pairs", _is_merges),
           "partition_tokens": ("a list of [bytes, id, lstrip, rstrip]", _is_partition_tokens)}


def _split(value, path, arrays):
    if isinstance(value, np.ndarray):
        arrays[path] = value
        return {"__array__": path}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return {"__items__": [[_split(k, f"{path}/k{i}", arrays), _split(v, f"{path}/v{i}", arrays)]
                                  for i, (k, v) in enumerate(value.items())]}
        return {k: _split(v, f"{path}/{k}", arrays) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return {"__list__": [_split(v, f"{path}/{i}", arrays) for i, v in enumerate(value)]}
    if isinstance(value, bytes):
        return {"__bytes__": base64.b64encode(value).decode("ascii")}
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    return value


def _join(value, arrays, path):
    """The state ``_split`` wrote at ``path``; ``ValueError`` for anything ``_split`` cannot have
    written (an array named for another path, a malformed marker)."""
    if not isinstance(value, dict):
        return value
    if "__array__" in value:
        if value["__array__"] != path or path not in arrays:
            raise ValueError(f"{path}: refers to array {value['__array__']!r}, not its own")
        return arrays[path]
    if "__list__" in value:
        items = value["__list__"]
        if not isinstance(items, list):
            raise ValueError(f"{path}: a list marker without a list")
        return [_join(v, arrays, f"{path}/{i}") for i, v in enumerate(items)]
    if "__bytes__" in value:
        try:
            return base64.b64decode(value["__bytes__"], validate=True)
        except (TypeError, binascii.Error):
            raise ValueError(f"{path}: bad base64 bytes") from None
    if "__items__" in value:
        items = value["__items__"]
        if not isinstance(items, list) or not all(isinstance(kv, list) and len(kv) == 2 for kv in items):
            raise ValueError(f"{path}: an items marker without [key, value] pairs")
        joined = [(_join(k, arrays, f"{path}/k{i}"), _join(v, arrays, f"{path}/v{i}")) for i, (k, v) in enumerate(items)]
        try:
            return dict(joined)
        except TypeError:
            raise ValueError(f"{path}: a key that cannot be a dict key") from None
    return {k: _join(v, arrays, f"{path}/{k}") for k, v in value.items()}


def _check_state(value, schema, path):
    """``ValueError`` unless ``value`` has the shape ``schema`` describes (``STATE_SCHEMA``)."""
    if isinstance(schema, dict):
        if not isinstance(value, dict) or set(value) != set(schema):
            keys = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ValueError(f"{path}: expected the keys {sorted(schema)}, got {keys}")
        for k, sub in schema.items():
            _check_state(value[k], sub, f"{path}/{k}")
    elif isinstance(schema, tuple):
        dtype, ndim = np.dtype(schema[0]), schema[1]
        if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != ndim:
            got = f"{value.dtype}[{value.ndim}d]" if isinstance(value, np.ndarray) else type(value).__name__
            raise ValueError(f"{path}: expected a {dtype}[{ndim}d] array, got {got} (arrays are never cast)")
    elif isinstance(schema, str):
        what, ok = _CHECKS[schema]
        if not ok(value):
            raise ValueError(f"{path}: expected {what}")
    elif not isinstance(value, schema) or (schema is not bool and isinstance(value, bool)):
        raise ValueError(f"{path}: expected {schema.__name__}, got {type(value).__name__}")


def save_native(model, path):
    arrays = {}
    cls = type(model).__name__
    if cls not in MODEL_CLASSES:
        raise TypeError(f"{cls} cannot be saved in the native format")
    header = {"format": FORMAT, "version": VERSION, "model_class": cls,
              "state": _split(model.state(), "state", arrays)}
    with atomic_files(path) as (f,):
        np.savez_compressed(f, __header__=np.frombuffer(json.dumps(header).encode(), np.uint8), **arrays)


# deflate's largest expansion (about 1032:1): no member inflates to more than this many times
# its compressed size, whatever sizes the zip directory claims
_DEFLATE_RATIO = 1032


def _checked_members(npz, path):
    """The members of ``npz`` (an ``np.load`` of ``path``), each checked before NumPy allocates
    it: the array its ``.npy`` header declares must fit in the bytes the member can hold (its
    size in the zip directory, bounded by what its compressed bytes can inflate to, bounded by
    the file's size). So no allocation is sized by a number that only the file asserts."""
    limit = os.path.getsize(path)
    arrays = {}
    for info in npz.zip.infolist():
        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        room = min(info.file_size, _DEFLATE_RATIO * min(info.compress_size, limit) + 1024)
        with npz.zip.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"member {name!r}: unsupported .npy version {version}")
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= int(d)
        if nbytes > room:
            raise ValueError(f"member {name!r} declares {dtype}{list(shape)} ({nbytes} bytes) in {room} bytes")
        arrays[name] = npz[name]
    return arrays


def load_native(path):
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = _checked_members(npz, path)
            header = json.loads(arrays.pop("__header__").tobytes().decode())
    except (OSError, ValueError, KeyError, EOFError, SyntaxError, tokenize.TokenError, RuntimeError,
            NotImplementedError, zipfile.BadZipFile, zlib.error, json.JSONDecodeError, UnicodeDecodeError) as e:
        # (a damaged zip or .npy header: RuntimeError "encrypted", NotImplementedError "compression
        # method", tokenize / SyntaxError from NumPy's header parser, zlib / EOF from inflate)
        raise ValueError(f"{path}: not an nbtok model file ({e})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}: not an nbtok model file")
    if header.get("version") != VERSION:
        raise ValueError(f"{path}: unsupported nbtok format version {header.get('version')!r}")
    cls_name = header.get("model_class")
    if not isinstance(cls_name, str) or cls_name not in MODEL_CLASSES:
        raise ValueError(f"{path}: unknown model class {cls_name!r}")
    try:
        state = _join(header.get("state"), arrays, "state")
        _check_state(state, STATE_SCHEMA[cls_name], "state")
    except ValueError as e:
        raise ValueError(f"{path}: malformed model state: {e}") from None
    unused = sorted(set(arrays) - set(_array_paths(STATE_SCHEMA[cls_name], "state")))
    if unused:
        raise ValueError(f"{path}: unexpected array {unused[0]!r}")
    cls = getattr(importlib.import_module(MODEL_CLASSES[cls_name]), cls_name)
    try:
        return cls.from_state(state)
    except (KeyError, TypeError, IndexError, AttributeError, OverflowError) as e:
        raise ValueError(f"{path}: malformed model state ({e!r})") from None


def _array_paths(schema, path):
    """The array paths ``schema`` has."""
    if isinstance(schema, dict):
        for k, sub in schema.items():
            yield from _array_paths(sub, f"{path}/{k}")
    elif isinstance(schema, tuple):
        yield path
