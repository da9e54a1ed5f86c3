"""Clean errors on bad input (issue 23, item 6): a damaged native file raises ``ValueError``
(not ``zlib.error``, ``EOFError``, ``AttributeError``, ``TypeError``, ``OverflowError``), an array
of another dtype is refused instead of cast, and an out-of-range sampling seed is a
``ValueError`` (not a Numba ``TypingError``). Models come from committed data only.
"""
import json
import random

import numpy as np
import pytest

import nbtok
from nbtok.formats.huggingface import to_huggingface_json, tokenizer_from_config
from nbtok.formats.sentencepiece_model import tokenizer_from_proto
from nbtok.warmup import _spm_proto

MODELS = {
    "bytelevel": lambda: nbtok.get_encoding("gpt2"),
    "sentencepiece": lambda: tokenizer_from_proto(_spm_proto(1)),
    "huggingface": lambda: tokenizer_from_config(to_huggingface_json(tokenizer_from_proto(_spm_proto(1)).model)),
}


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """``{model: path}`` of each model saved in the native format."""
    d = tmp_path_factory.mktemp("native")
    paths = {}
    for name, make in MODELS.items():
        paths[name] = d / f"{name}.nbtok"
        make().save(paths[name])
    return paths


def _members(path):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(arrays.pop("__header__").tobytes()), arrays


def _write(path, header, arrays):
    with open(path, "wb") as f:
        np.savez_compressed(f, __header__=np.frombuffer(json.dumps(header).encode(), np.uint8), **arrays)


def _load_refuses(path):
    """The load raises ValueError (any other exception fails the test); False if it loads."""
    try:
        nbtok.Tokenizer.load(path)
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("name", list(MODELS))
def test_damaged_bytes_raise_value_error(name, native, tmp_path):
    """Seeded damage to the file's bytes: scattered bytes, overwritten runs, truncations.
    ``zlib.error``, ``EOFError``, ``RuntimeError`` ("encrypted"), ``NotImplementedError``
    ("compression method") and ``tokenize.TokenError`` (NumPy's header parser) used to escape."""
    data = native[name].read_bytes()
    rng = random.Random(23)
    path = tmp_path / "m.nbtok"
    refused = 0
    for case in range(150):
        b = bytearray(data)
        if case % 3 == 0:
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif case % 3 == 1:
            start = rng.randrange(len(b))
            b[start:start + rng.randint(1, 64)] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        else:
            b = b[:rng.randrange(len(b))]
        path.write_bytes(bytes(b))
        refused += _load_refuses(path)
    assert refused > 120


@pytest.mark.parametrize("where, value", [
    (("model_class",), ["ByteLevelBPE"]),      # TypeError: unhashable
    (("state", "pattern"), 7),                 # AttributeError in the pre-tokenizer
    (("state", "byte_ids"), 2 ** 64),          # OverflowError
    (("state", "whole_piece"), "yes"),
    (("state", "merges"), [[1, 2]]),
    (("state", "merge_keys"), {"__array__": "state/merge_values"}),  # an array at another's path
])
def test_damaged_header_raises_value_error(where, value, native, tmp_path):
    header, arrays = _members(native["bytelevel"])
    parent = header
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    _write(tmp_path / "m.nbtok", header, arrays)
    with pytest.raises(ValueError):
        nbtok.Tokenizer.load(tmp_path / "m.nbtok")


ARRAYS = ["state/vocab/piece_bytes", "state/vocab/piece_offsets", "state/vocab/scores", "state/vocab/kinds",
          "state/merge_keys", "state/merge_values", "state/byte_ids"]


@pytest.mark.parametrize("array", ARRAYS)
def test_array_of_another_dtype_is_refused_not_cast(array, native, tmp_path):
    """A native file whose ``merge_values`` is uint8 used to load (cast back to int64) and then
    decode wrongly; every array must have exactly the dtype the model writes."""
    nbtok.Tokenizer.load(native["bytelevel"])  # (the intact file loads)
    header, arrays = _members(native["bytelevel"])
    other = np.uint8 if arrays[array].dtype != np.uint8 else np.int32
    arrays[array] = arrays[array].astype(other)
    _write(tmp_path / "m.nbtok", header, arrays)
    with pytest.raises(ValueError, match="never cast"):
        nbtok.Tokenizer.load(tmp_path / "m.nbtok")


def test_array_of_another_shape_or_byte_order_is_refused(native, tmp_path):
    header, arrays = _members(native["bytelevel"])
    for change in (lambda a: a.reshape(1, -1), lambda a: a.astype(a.dtype.newbyteorder(">"))):
        edited = dict(arrays, **{"state/merge_values": change(arrays["state/merge_values"])})
        _write(tmp_path / "m.nbtok", header, edited)
        with pytest.raises(ValueError, match="never cast"):
            nbtok.Tokenizer.load(tmp_path / "m.nbtok")
    _write(tmp_path / "m.nbtok", header, dict(arrays, extra=np.zeros(3)))
    with pytest.raises(ValueError, match="unexpected array 'extra'"):
        nbtok.Tokenizer.load(tmp_path / "m.nbtok")


@pytest.mark.parametrize("seed, error", [(2 ** 64, ValueError), (2 ** 32, ValueError), (-1, ValueError),
                                         ("1", TypeError), (1.5, TypeError)])
def test_sampling_seed_out_of_range(seed, error):
    """Seeds are sentencepiece's and NumPy's ``[0, 2**32)``: 2**64 used to raise a Numba
    ``TypingError``, 2**32 and -1 were truncated, "1" and 1.5 converted."""
    sp = tokenizer_from_proto(_spm_proto(1))
    for ok in (0, 2 ** 32 - 1, np.uint32(7)):  # both ends of the range work, reproducibly
        assert sp.sample_encode("hello world", alpha=0.1, seed=ok).tolist() == \
            sp.sample_encode("hello world", alpha=0.1, seed=ok).tolist()
    with pytest.raises(error, match="seed"):
        sp.sample_encode("hello world", alpha=0.1, seed=seed)
    from nbtok.compat import sentencepiece as spm
    with pytest.raises(error, match="seed"):
        spm.set_random_generator_seed(seed)


def _hf_unigram():
    pieces = [["<unk>", 0.0], ["\u2581", -3.0], ["\ufffd", -4.0]] + [[c, -5.0] for c in "abcxyz"]
    return tokenizer_from_config({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": None, "decoder": None,
        "model": {"type": "Unigram", "unk_id": 0, "byte_fallback": False, "vocab": pieces}})


def test_surrogate_pair_in_tokenizer_json_text():
    """A str holding a surrogate pair (two code points) used to raise "internal error: code
    point count mismatch" on the tokenizer.json path: each surrogate is U+FFFD, so offsets stay
    offsets into the given str."""
    tok = _hf_unigram()
    text, replaced = "x\ud83d\ude00y", "x\ufffd\ufffdy"
    assert tok.encode(text).tolist() == tok.encode(replaced).tolist()
    assert [r.tolist() for r in tok.encode_batch([text, "abc"])] == \
        [r.tolist() for r in tok.encode_batch([replaced, "abc"])]
    ids, starts, ends = tok.encode_with_offsets(text)
    assert ends.max() <= len(text) and [text[s:e] for s, e in zip(starts, ends)][-1] == "y"


@pytest.mark.parametrize("count", [1 << 30, 1 << 33])
def test_array_declared_larger_than_its_member_is_refused(count, native, tmp_path):
    """A ``.npy`` member whose header declares 8 GB or 64 GB in a few bytes: NumPy allocated
    the declared size first (``MemoryError`` escaped, or 8 GB of address space went to a file of
    1 MB). Now the declared size is checked against what the member can hold."""
    import io
    import zipfile
    out = tmp_path / "m.nbtok"
    with zipfile.ZipFile(native["bytelevel"]) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "state/merge_values.npy":
                buf = io.BytesIO()
                np.lib.format.write_array_header_1_0(buf, {"descr": "<i8", "fortran_order": False, "shape": (count,)})
                data = buf.getvalue() + bytes(64)
            zout.writestr(info.filename, data)
    with pytest.raises(ValueError, match="declares int64"):
        nbtok.Tokenizer.load(out)
