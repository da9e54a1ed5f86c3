"""nbtok's own format: one ``.npz`` holding the model's arrays and a JSON header.

A model's ``state()`` is a nested dict whose leaves are NumPy arrays or JSON-able values
(``bytes`` and tuples are allowed too). Arrays are stored as ``.npy`` members named by their
path (``vocab/piece_bytes``); everything else goes into the JSON member ``__header__``.
Loading never unpickles: the model class comes from a fixed registry, and the model's own
constructor validates every array before a kernel sees it.
"""
import base64
import importlib
import json
import zipfile

import numpy as np

from ._atomic import atomic_files

FORMAT = "nbtok-native"
VERSION = 1
MODEL_CLASSES = {
    "ByteLevelBPE": "nbtok.models.bytelevel",
    "SentencePieceModel": "nbtok.models.sentencepiece",
    "HuggingFaceModel": "nbtok.models.huggingface",
}


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


def _join(value, arrays):
    if isinstance(value, dict):
        if "__array__" in value:
            return arrays[value["__array__"]]
        if "__list__" in value:
            return [_join(v, arrays) for v in value["__list__"]]
        if "__bytes__" in value:
            return base64.b64decode(value["__bytes__"])
        if "__items__" in value:
            return {_join(k, arrays): _join(v, arrays) for k, v in value["__items__"]}
        return {k: _join(v, arrays) for k, v in value.items()}
    return value


def save_native(model, path):
    arrays = {}
    cls = type(model).__name__
    if cls not in MODEL_CLASSES:
        raise TypeError(f"{cls} cannot be saved in the native format")
    header = {"format": FORMAT, "version": VERSION, "model_class": cls,
              "state": _split(model.state(), "state", arrays)}
    with atomic_files(path) as (f,):
        np.savez_compressed(f, __header__=np.frombuffer(json.dumps(header).encode(), np.uint8), **arrays)


def load_native(path):
    try:
        with np.load(path, allow_pickle=False) as npz:
            header = json.loads(npz["__header__"].tobytes().decode())
            arrays = {k: npz[k] for k in npz.files if k != "__header__"}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: not an nbtok model file ({e})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}: not an nbtok model file")
    if header.get("version") != VERSION:
        raise ValueError(f"{path}: unsupported nbtok format version {header.get('version')}")
    cls_name = header.get("model_class")
    if cls_name not in MODEL_CLASSES:
        raise ValueError(f"{path}: unknown model class {cls_name!r}")
    cls = getattr(importlib.import_module(MODEL_CLASSES[cls_name]), cls_name)
    try:
        return cls.from_state(_join(header["state"], arrays))
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"{path}: malformed model state ({e!r})") from None
