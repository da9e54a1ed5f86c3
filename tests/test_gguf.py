"""GGUF vocabularies (``nbtok/formats/gguf.py``).

* llama.cpp's own tokenizer tests: for every ``ggml-vocab-*.gguf`` in ``../shared/data/zoo`` with
  its ``.inp`` / ``.out`` pair, nbtok's ids equal every ``.out`` line. llama.cpp's
  ``test-tokenizer-0`` tokenizes each input with ``add_special=false`` (no BOS / EOS / CLS) and
  ``parse_special=false``; the ``.out`` lines were written by transformers' tokenizer with
  ``add_special_tokens=False``, which llama.cpp must match. Inputs are the ``.inp`` text split at
  ``"\\n__ggml_vocab_test__\\n"`` (nothing after the last separator is no case), taken as they are
  (a SentencePiece vocabulary adds its own dummy-prefix space). Skipped, with the reason,
  without ``../shared``.
* Tiny GGUF files written by ``write_gguf`` below (committed in ``tests/data/gguf``; run this
  file as a script to write them again) for each model type, with ids worked out by hand.
* Corrupt files: every truncation and impossible lengths are ``ValueError``; what nbtok cannot
  map is ``NotImplementedError`` naming it.
"""
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import nbtok
from nbtok.formats.gguf import GGUFVocab, parse_gguf, read_gguf

DATA = Path(__file__).parent / "data" / "gguf"


# ------------------------------------------------------------------ a tiny GGUF writer
_SCALAR = {"u8": (0, "B"), "i8": (1, "b"), "u16": (2, "H"), "i16": (3, "h"), "u32": (4, "I"),
           "i32": (5, "i"), "f32": (6, "f"), "bool": (7, "?"), "u64": (10, "Q"), "i64": (11, "q"),
           "f64": (12, "d")}


def _string(s, n):
    raw = s if isinstance(s, bytes) else s.encode("utf-8")
    return struct.pack(n, len(raw)) + raw


def _value(kind, value, n):
    """(type id, payload) for a value written as ``kind``: a scalar name, "str", or "arr:<kind>";
    ``n`` is the struct format of a length ("<Q", ">Q", "<I"), whose first character is the
    byte order of every number."""
    order = n[0]
    if kind in _SCALAR:
        t, fmt = _SCALAR[kind]
        return t, struct.pack(order + fmt, value)
    if kind == "str":
        return 8, _string(value, n)
    if kind.startswith("arr:"):
        inner = kind[4:]
        parts = [_value(inner, v, n) for v in value]
        etype = parts[0][0] if parts else (_SCALAR[inner][0] if inner in _SCALAR else 8 if inner == "str" else 9)
        return 9, struct.pack(order + "I", etype) + struct.pack(n, len(parts)) + b"".join(p for _, p in parts)
    raise ValueError(kind)


def write_gguf(kv, version=3, order="<"):
    """The bytes of a GGUF file without tensors: ``kv`` is ``{key: (kind, value)}``; ``order``
    ">" writes a big-endian file as gguf-py does for s390x (the same magic bytes, every number
    after them big-endian)."""
    n = order + ("Q" if version >= 2 else "I")
    out = [b"GGUF", struct.pack(order + "I", version), struct.pack(n, 0), struct.pack(n, len(kv))]
    for key, (kind, value) in kv.items():
        t, payload = _value(kind, value, n)
        out += [_string(key, n), struct.pack(order + "I", t), payload]
    return b"".join(out)


_NUMPY = {0: "u1", 1: "i1", 2: "u2", 3: "i2", 4: "u4", 5: "i4", 6: "f4", 7: "u1", 10: "u8", 11: "i8", 12: "f8"}


def write_parsed(gguf, order):
    """The metadata of a parsed ``GGUFFile`` written again in byte order ``order`` (tensor
    count and key/value pairs, as gguf-py's writer lays them out; no tensor infos)."""
    n = order + ("Q" if gguf.version >= 2 else "I")
    out = [b"GGUF", struct.pack(order + "I", gguf.version), struct.pack(n, gguf.tensor_count),
           struct.pack(n, len(gguf.metadata))]
    for key, value in gguf.metadata.items():
        t = gguf.types[key]
        out += [_string(key, n), struct.pack(order + "I", t if isinstance(t, int) else 9)]
        if isinstance(t, tuple):
            etype = t[1]
            assert etype != 9, "nested arrays: not in the zoo"
            out.append(struct.pack(order + "I", etype) + struct.pack(n, len(value)))
            if etype == 8:
                out += [_string(v, n) for v in value]
            else:
                out.append(np.asarray(value).astype(order + _NUMPY[etype]).tobytes())
        elif t == 8:
            out.append(_string(value, n))
        else:
            out.append(struct.pack(order + dict((v[0], v[1]) for v in _SCALAR.values())[t], value))
    return b"".join(out)


# ------------------------------------------------------------------ tiny vocabularies
def _gpt2_alphabet():
    from nbtok.formats.gpt2 import bytes_to_unicode
    table = bytes_to_unicode()
    return [table[b] for b in range(256)]


GPT2_MERGES = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "l d", "Ġwor ld", "1 2"]


def tiny_gpt2(add_bos=False, pre="gpt-2"):
    tokens = _gpt2_alphabet() + ["he", "ll", "hell", "hello", "Ġw", "or", "Ġwor", "ld", "Ġworld", "12",
                                 "<|endoftext|>", "<tool>"]
    types = [1] * 266 + [3, 4]  # <|endoftext|> control, <tool> user-defined
    return {"general.architecture": ("str", "gpt2"), "tokenizer.ggml.model": ("str", "gpt2"),
            "tokenizer.ggml.pre": ("str", pre), "tokenizer.ggml.tokens": ("arr:str", tokens),
            "tokenizer.ggml.token_type": ("arr:i32", types), "tokenizer.ggml.merges": ("arr:str", GPT2_MERGES),
            "tokenizer.ggml.bos_token_id": ("u32", 266), "tokenizer.ggml.eos_token_id": ("u32", 266),
            "tokenizer.ggml.add_bos_token": ("bool", add_bos)}


LLAMA_PIECES = [("▁", -10.0), ("h", -20.0), ("e", -20.0), ("l", -20.0), ("o", -20.0), ("ll", -1.0), ("▁h", -2.0),
                ("▁he", -3.0), ("▁hell", -4.0), ("▁hello", -5.0)]


def tiny_llama():
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + [p for p, _ in LLAMA_PIECES]
    scores = [0.0, 0.0, 0.0] + [0.0] * 256 + [s for _, s in LLAMA_PIECES]
    types = [2, 3, 3] + [6] * 256 + [1] * len(LLAMA_PIECES)
    return {"general.architecture": ("str", "llama"), "tokenizer.ggml.model": ("str", "llama"),
            "tokenizer.ggml.pre": ("str", "default"), "tokenizer.ggml.tokens": ("arr:str", tokens),
            "tokenizer.ggml.scores": ("arr:f32", scores), "tokenizer.ggml.token_type": ("arr:i32", types),
            "tokenizer.ggml.bos_token_id": ("u32", 1), "tokenizer.ggml.eos_token_id": ("u32", 2),
            "tokenizer.ggml.unknown_token_id": ("u32", 0), "tokenizer.ggml.add_bos_token": ("bool", True),
            "tokenizer.ggml.add_eos_token": ("bool", False)}


def tiny_bert():
    # as llama.cpp's converter writes them: "▁" before a word-initial token, no "##" on a continuation
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "▁hello", "▁world", "▁play", "ing", "▁!"]
    return {"general.architecture": ("str", "bert"), "tokenizer.ggml.model": ("str", "bert"),
            "tokenizer.ggml.pre": ("str", "bert-bge"), "tokenizer.ggml.tokens": ("arr:str", tokens),
            "tokenizer.ggml.token_type": ("arr:i32", [3, 3, 3, 3, 3, 1, 1, 1, 1, 1]),
            "tokenizer.ggml.unknown_token_id": ("u32", 1), "tokenizer.ggml.seperator_token_id": ("u32", 3),
            "tokenizer.ggml.padding_token_id": ("u32", 0), "tokenizer.ggml.cls_token_id": ("u32", 2),
            "tokenizer.ggml.mask_token_id": ("u32", 4)}


T5_PIECES = [("▁", -2.0), ("▁hello", -5.0), ("▁he", -3.0), ("llo", -3.0), ("h", -4.0), ("e", -4.0), ("l", -4.0),
             ("o", -4.0)]


def tiny_t5():
    tokens = ["<pad>", "</s>", "<unk>"] + [p for p, _ in T5_PIECES]
    return {"general.architecture": ("str", "t5"), "tokenizer.ggml.model": ("str", "t5"),
            "tokenizer.ggml.tokens": ("arr:str", tokens),
            "tokenizer.ggml.scores": ("arr:f32", [0.0, 0.0, 0.0] + [s for _, s in T5_PIECES]),
            "tokenizer.ggml.token_type": ("arr:i32", [3, 3, 2] + [1] * len(T5_PIECES)),
            "tokenizer.ggml.add_space_prefix": ("bool", True),
            "tokenizer.ggml.remove_extra_whitespaces": ("bool", True),
            "tokenizer.ggml.padding_token_id": ("u32", 0), "tokenizer.ggml.eos_token_id": ("u32", 1),
            "tokenizer.ggml.unknown_token_id": ("u32", 2)}


FIXTURES = {"tiny-gpt2.gguf": tiny_gpt2, "tiny-llama.gguf": tiny_llama, "tiny-bert.gguf": tiny_bert,
            "tiny-t5.gguf": tiny_t5}


def _load(tmp_path, kv, name="x.gguf", version=3):
    p = tmp_path / name
    p.write_bytes(write_gguf(kv, version))
    return nbtok.Tokenizer.from_gguf(p)


# ------------------------------------------------------------------ the committed fixtures
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_committed_fixture_is_the_writers(name):
    assert (DATA / name).read_bytes() == write_gguf(FIXTURES[name]()), f"run python {__file__} to rewrite it"


def test_gpt2_fixture():
    tok = nbtok.Tokenizer.from_file(DATA / "tiny-gpt2.gguf")  # recognised by content
    assert tok.encode("hello world").tolist() == [259, 264]
    assert tok.encode(" hello").tolist() == [32, 259]            # "Ġ" + "hello": no merge joins them
    assert tok.encode("é").tolist() == [0xC3, 0xA9]               # bytes of an unknown character
    assert tok.encode("hello<|endoftext|><tool>").tolist() == [259, 266, 267]  # control and user-defined tokens
    assert tok.decode([259, 264]) == "hello world"
    assert tok.special_tokens == {"<|endoftext|>": 266}
    assert [tok.id_to_piece(i) for i in (265, 266, 267)] == ["12", "<|endoftext|>", "<tool>"]  # no id left out
    assert tok.decode([266, 267], skip_special_tokens=False) == "<|endoftext|><tool>"


def test_gpt2_add_bos_and_pre(tmp_path):
    tok = _load(tmp_path, tiny_gpt2(add_bos=True))
    assert tok.encode("hello").tolist() == [266, 259]             # llama.cpp's add_special=true
    assert tok.encode("hello", add_special_tokens=False).tolist() == [259]
    # starcoder's pre-tokenizer splits digits one by one before GPT-2's regex; gpt-2's does not
    assert tok.encode("12", add_special_tokens=False).tolist() == [265]
    assert _load(tmp_path, tiny_gpt2(pre="starcoder")).encode("12").tolist() == [ord("1"), ord("2")]
    # without an add_bos_token key llama.cpp adds BOS after Llama 3's pre-tokenizer, not GPT-2's
    kv = tiny_gpt2()
    del kv["tokenizer.ggml.add_bos_token"]
    assert _load(tmp_path, kv).encode("hello").tolist() == [259]
    kv["tokenizer.ggml.pre"] = ("str", "llama-bpe")
    assert _load(tmp_path, kv).encode("hello").tolist() == [266, 259]


def test_every_pre_type_builds(tmp_path):
    """Every ``tokenizer.ggml.pre`` nbtok maps builds a tokenizer; each keeps a word with the
    space before it ("Ġworld"), the one thing all of them agree on."""
    from nbtok.formats.gguf import PRE_TOKENIZERS
    assert len(PRE_TOKENIZERS) > 60
    for pre in sorted(PRE_TOKENIZERS):
        tok = _load(tmp_path, tiny_gpt2(pre=pre), name=f"{pre}.gguf")
        assert tok.encode("hello world", add_special_tokens=False).tolist() == [HELLO_ID, WORLD_ID], pre


HELLO_ID, WORLD_ID = 259, 264


def test_llama_fixture():
    tok = nbtok.Tokenizer.from_gguf(DATA / "tiny-llama.gguf")
    assert tok.model_type == "bpe"
    base = 3 + 256
    hello, space = base + 9, base
    assert tok.encode("hello").tolist() == [hello]                # dummy prefix, merges by score
    assert tok.encode("hello x").tolist() == [hello, space, 3 + ord("x")]  # byte fallback
    assert tok.encode("hello", add_bos=True).tolist() == [1, hello]
    assert tok.encode("hell").tolist() == [base + 8]
    assert tok.decode([hello, space, 3 + ord("x")]) == "hello x"


def test_bert_fixture():
    tok = nbtok.Tokenizer.from_gguf(DATA / "tiny-bert.gguf")
    assert tok.encode("Hello playing world!").tolist() == [2, 5, 7, 8, 6, 9, 3]  # [CLS] ... [SEP], lower-cased
    assert tok.encode("Hello playing world!", add_special_tokens=False).tolist() == [5, 7, 8, 6, 9]
    assert tok.encode("xyz", add_special_tokens=False).tolist() == [1]
    assert tok.id_to_piece(8) == "##ing"


def test_t5_fixture():
    tok = nbtok.Tokenizer.from_gguf(DATA / "tiny-t5.gguf")
    assert tok.model_type == "unigram"
    assert tok.encode("hello").tolist() == [4]                    # "▁hello" (-5) beats "▁he" + "llo" (-6)
    assert tok.encode("  hello  ").tolist() == [4]                # extra whitespace removed
    assert tok.encode("hello x").tolist() == [4, 3, 2]            # "▁", unknown "x"
    assert tok.encode("hello", add_eos=True).tolist() == [4, 1]


def test_version_1_and_vocab_keys(tmp_path):
    v3 = read_gguf(DATA / "tiny-llama.gguf")
    v1 = parse_gguf(write_gguf(tiny_llama(), version=1))
    assert (v1.version, v3.version) == (1, 3)
    assert v1.metadata.keys() == v3.metadata.keys()
    assert v1.metadata["tokenizer.ggml.tokens"] == v3.metadata["tokenizer.ggml.tokens"]
    v = GGUFVocab(v3)
    assert (v.model, v.bos_id, v.eos_id, v.unk_id, v.add_bos, v.add_eos) == ("llama", 1, 2, 0, True, False)
    assert v.scores.dtype == np.float32 and v.scores[-1] == -5.0


def test_every_value_type():
    kv = {"a.u8": ("u8", 255), "a.i8": ("i8", -1), "a.u16": ("u16", 65535), "a.i16": ("i16", -2),
          "a.u32": ("u32", 2**32 - 1), "a.i32": ("i32", -3), "a.f32": ("f32", 0.5), "a.bool": ("bool", True),
          "a.str": ("str", "héllo"), "a.u64": ("u64", 2**64 - 1), "a.i64": ("i64", -4), "a.f64": ("f64", 0.25),
          "a.arr": ("arr:i16", [1, -2]), "a.nested": ("arr:arr:str", [["x", "y"], []]), "a.empty": ("arr:str", [])}
    md = parse_gguf(write_gguf(kv)).metadata
    assert [md[k] for k in list(kv)[:12]] == [255, -1, 65535, -2, 2**32 - 1, -3, 0.5, True, "héllo", 2**64 - 1, -4, 0.25]
    assert md["a.arr"].tolist() == [1, -2] and md["a.nested"] == [["x", "y"], []] and md["a.empty"] == []


# ------------------------------------------------------------------ corrupt and unsupported files
def test_every_truncation_is_a_value_error(tmp_path):
    data = write_gguf(tiny_gpt2())
    for n in range(len(data)):
        with pytest.raises(ValueError):
            parse_gguf(data[:n])
    p = tmp_path / "cut.gguf"
    p.write_bytes(data[:len(data) // 2])
    with pytest.raises(ValueError, match="corrupt GGUF"):
        nbtok.Tokenizer.from_file(p)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_random_corruption_is_a_clear_error_or_a_tokenizer(name):
    """Bytes of a fixture changed at random (seeded): the file is refused with ValueError /
    NotImplementedError, or it is still a vocabulary and its tokenizer encodes."""
    import random
    from nbtok.formats.gguf import tokenizer_from_vocab
    rng = random.Random(20)
    data = write_gguf(FIXTURES[name]())
    outcomes = set()
    for _ in range(200):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        try:
            tokenizer_from_vocab(GGUFVocab(parse_gguf(bytes(bad)))).encode("hello world x é")
            outcomes.add("loads")
        except (ValueError, NotImplementedError):
            outcomes.add("refused")
    assert "refused" in outcomes


def _patched(data, old, new):
    assert data.count(old) == 1
    return data.replace(old, new)


def test_impossible_lengths_are_value_errors():
    data = write_gguf(tiny_llama())
    huge = struct.pack("<Q", 2**63)  # (big-endian files: test_big_endian_truncation_and_corruption)
    n_tokens = struct.pack("<I", 8) + struct.pack("<Q", 3 + 256 + len(LLAMA_PIECES))  # string array, its count
    cases = {
        "kv count": data[:16] + huge + data[24:],
        "key length": data[:24] + struct.pack("<Q", 2**64 - 1) + data[32:],
        "token count": _patched(data, n_tokens, struct.pack("<I", 8) + huge),
        "string length": _patched(data, struct.pack("<Q", 5) + b"<unk>", huge + b"<unk>"),
        "score count": _patched(data, struct.pack("<I", 6) + struct.pack("<Q", 269),
                                struct.pack("<I", 6) + struct.pack("<Q", 2**61)),
    }
    for what, bad in cases.items():
        with pytest.raises(ValueError, match="corrupt GGUF"):
            parse_gguf(bad)
        assert what


@pytest.mark.parametrize("bad, message", [
    (b"GGUX" + bytes(20), "not a GGUF file"),
    (b"GGUF" + struct.pack("<I", 4) + bytes(16), "unknown version 4"),
    (write_gguf({"k": ("u8", 1)})[:-5] + struct.pack("<I", 13) + b"\x01", "unknown value type 13"),
    (write_gguf({"k": ("u8", 2)}).replace(struct.pack("<I", 0) + b"\x02", struct.pack("<I", 7) + b"\x02"), "bool"),
    (write_gguf({"k": ("u8", 1), "j": ("u8", 1)}).replace(b"\x01\x00\x00\x00\x00\x00\x00\x00j",
                                                          b"\x01\x00\x00\x00\x00\x00\x00\x00k"), "appears twice"),
    (write_gguf({"k\xff": ("u8", 1)}).replace("k\xff".encode(), b"k\xff\xff"), "not UTF-8"),
    (write_gguf({"k": ("arr:arr:arr:arr:arr:u8", [[[[[1]]]]])}), "nested"),
])
def test_corrupt_headers(bad, message):
    with pytest.raises(ValueError, match=message):
        parse_gguf(bad)


# ------------------------------------------------------------------ big-endian files
def test_big_endian_tiny_fixtures():
    """A big-endian file (gguf-py's s390x layout) reads to the same metadata and tokenizer as the
    little-endian one: every number swapped, strings as they are."""
    from nbtok.formats.gguf import tokenizer_from_vocab
    for name, make in sorted(FIXTURES.items()):
        le, be = write_gguf(make()), write_gguf(make(), order=">")
        assert be[:4] == le[:4] == b"GGUF" and be[4:8] == b"\x00\x00\x00\x03" and be != le
        a, b = parse_gguf(le), parse_gguf(be)
        assert (a.byte_order, b.byte_order) == ("<", ">") and b.types == a.types
        _same_metadata(a, b)
        ta, tb = (tokenizer_from_vocab(GGUFVocab(g)) for g in (a, b))
        for text in ("hello world", "Hello playing world!", "hello x é 12", "hello<|endoftext|><tool>"):
            assert tb.encode(text).tolist() == ta.encode(text).tolist(), (name, text)
    v1 = parse_gguf(write_gguf(tiny_llama(), version=1, order=">"))
    assert v1.version == 1 and v1.byte_order == ">"
    _same_metadata(parse_gguf(write_gguf(tiny_llama())), v1)


def _same_metadata(a, b):
    assert a.metadata.keys() == b.metadata.keys()
    for k, v in a.metadata.items():
        w = b.metadata[k]
        if isinstance(v, np.ndarray):
            assert w.dtype == v.dtype and w.dtype.isnative and np.array_equal(w, v), k
        else:
            assert type(w) is type(v) and w == v, k


def test_big_endian_every_value_type():
    kv = {"a.u16": ("u16", 0x1234), "a.i32": ("i32", -3), "a.u64": ("u64", 2**64 - 2), "a.f32": ("f32", 0.5),
          "a.f64": ("f64", -0.25), "a.bool": ("bool", True), "a.str": ("str", "héllo"),
          "a.arr": ("arr:i16", [1, -2, 0x0102]), "a.f": ("arr:f32", [1.5, -2.0]), "a.u": ("arr:u64", [2**40 + 1]),
          "a.nested": ("arr:arr:i32", [[1, 256], []]), "a.b": ("arr:bool", [True, False])}
    md = parse_gguf(write_gguf(kv, order=">")).metadata
    assert [md[k] for k in list(kv)[:7]] == [0x1234, -3, 2**64 - 2, 0.5, -0.25, True, "héllo"]
    assert md["a.arr"].tolist() == [1, -2, 0x0102] and md["a.f"].tolist() == [1.5, -2.0]
    assert md["a.u"].tolist() == [2**40 + 1] and md["a.b"].tolist() == [True, False]
    assert [x.tolist() for x in md["a.nested"]] == [[1, 256], []]
    # a big-endian body under a little-endian version is read little-endian: its counts are
    # then impossible (the key/value count 12 reads as 12 << 56)
    with pytest.raises(ValueError, match="corrupt GGUF.*key/value pairs"):
        parse_gguf(b"GGUF" + struct.pack("<I", 3) + write_gguf(kv, order=">")[8:])


def test_big_endian_truncation_and_corruption():
    data = write_gguf(tiny_gpt2(), order=">")
    for n in range(len(data)):
        with pytest.raises(ValueError):
            parse_gguf(data[:n])
    huge = struct.pack(">Q", 2**63)
    cases = {
        "kv count": data[:16] + huge + data[24:],
        "key length": data[:24] + struct.pack(">Q", 2**64 - 1) + data[32:],
        "string length": _patched(data, struct.pack(">Q", 13) + b"<|endoftext|>", huge + b"<|endoftext|>"),
        "token count": _patched(data, struct.pack(">I", 8) + struct.pack(">Q", 268), struct.pack(">I", 8) + huge),
        "type count": _patched(data, struct.pack(">I", 5) + struct.pack(">Q", 268),
                               struct.pack(">I", 5) + struct.pack(">Q", 2**61)),
        "value type": _patched(data, b"tokenizer.ggml.pre" + struct.pack(">I", 8),
                               b"tokenizer.ggml.pre" + struct.pack("<I", 8)),  # a little-endian type in it
    }
    for what, bad in cases.items():
        with pytest.raises(ValueError, match="corrupt GGUF"):
            parse_gguf(bad)
        assert what
    with pytest.raises(ValueError, match="unknown version"):
        parse_gguf(b"GGUF" + struct.pack(">I", 4) + bytes(16))


# ------------------------------------------------------------------ pre types as llama.cpp's regex lists
#: llama-vocab.cpp's regex_exprs of the pre types nbtok maps from them directly (copied from
#: llm_tokenizer_bpe's constructor as data, in llama.cpp's own spelling)
LLAMA_CPP_REGEXES = {
    "chameleon": ["<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
                  "[\\p{P}!-/:-@\\[-`{-~]",
                  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"],
    "superbpe": ["\\p{N}+", "(?=(\\d{3})+(?!\\d))"],
    "granite-embed-multi-97m": [
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|"
        "'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])"
        "([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
        "[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"],
}


def llama_cpp_split(patterns, text):
    """llama.cpp's ``unicode_regex_split`` with the ``regex`` module: each pattern splits every
    piece of the one before into its matches and the text between them; an empty match is only
    a split point. A pattern without a ``\\p{...}`` class runs in llama.cpp under std::wregex,
    whose ``\\d`` is ASCII (``iswdigit``), so ``\\d`` is ``[0-9]`` there."""
    import regex
    pieces = [text]
    for p in patterns:
        if "\\p{" not in p:
            p = p.replace("\\d", "[0-9]")
        r, out = regex.compile(p), []
        for piece in pieces:
            prev = 0
            for m in r.finditer(piece):
                if m.start() > prev:
                    out.append(piece[prev:m.start()])
                if m.end() > m.start():
                    out.append(m.group())
                prev = m.end()
            if prev < len(piece):
                out.append(piece[prev:])
        pieces = out
    return pieces


@pytest.mark.parametrize("pre", sorted(LLAMA_CPP_REGEXES))
def test_pre_type_split_equals_llama_cpp_regexes(pre):
    """nbtok's pre-tokenizer for the pre type (the Split passes gpt2_config builds, before the
    byte-level mapping) splits the shared corpora lines as llama.cpp's regex list does."""
    from conftest import corpus_files, shared_data_dir
    from nbtok.formats.gguf import gpt2_config
    from nbtok.pre_tokenizers.components import build_pre_tokenizer, pre_tokenize_str
    cfg = gpt2_config(GGUFVocab(parse_gguf(write_gguf(tiny_gpt2(pre=pre)))))["pre_tokenizer"]
    passes = cfg["pretokenizers"][:-1]
    assert cfg["pretokenizers"][-1] == {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                        "use_regex": False}
    split = build_pre_tokenizer({"type": "Sequence", "pretokenizers": passes})
    lines = ["1234567 x12 ١1234 123ab456", "<sentinel:12> IMGIMGABZ IMGIMGAZZ\t\n    x  y", "HeLLo wörld's DON'T Ünï",
             "", " ", "a\n\n b", "Çé, üñ! ¿qué? 1,000,000.50 $5 😀👍🏽", "e\u0301 नमस्ते দেশ ไทย"]
    root = shared_data_dir()
    if root is not None:
        for f in corpus_files(root):
            lines += [t for t in f.read_bytes().decode("utf-8", errors="replace").splitlines() if t.strip()][:20]
    bad = [(t, g, w) for t in lines
           if (g := [x for x, _ in pre_tokenize_str(split, t)]) != (w := llama_cpp_split(LLAMA_CPP_REGEXES[pre], t))]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ; first: {bad[0]!r}"
    if pre == "superbpe":  # the groups of three, and no split of non-ASCII digits by the \d pass
        assert [x for x, _ in pre_tokenize_str(split, "x 1234567 ١٢٣٤")] == ["x ", "1", "234", "567", " ", "١٢٣٤"]


@pytest.mark.parametrize("pre", ["kimi-k2", "afmoe", "gemma4", "granite-embed-multi-311m", "sarvam-moe",
                                 "whitespace", "no-such-pre"])
def test_pre_types_nbtok_cannot_reproduce(tmp_path, pre):
    with pytest.raises(NotImplementedError, match=f"'{pre}'"):
        _load(tmp_path, tiny_gpt2(pre=pre))


@pytest.mark.parametrize("change, error, message", [
    ({"tokenizer.ggml.model": ("str", "rwkv")}, NotImplementedError, "'rwkv'"),
    ({"tokenizer.ggml.pre": ("str", "kimi-k2")}, NotImplementedError, "'kimi-k2'.*custom handler"),
    ({"tokenizer.ggml.model": None}, ValueError, "no tokenizer.ggml.model"),
    ({"tokenizer.ggml.tokens": None}, ValueError, "tokenizer.ggml.tokens"),
    ({"tokenizer.ggml.tokens": ("arr:str", [])}, ValueError, "empty"),
    ({"tokenizer.ggml.merges": None}, ValueError, "without tokenizer.ggml.merges"),
    ({"tokenizer.ggml.merges": ("arr:str", ["h e", "ab"])}, ValueError, "merge 1"),
    ({"tokenizer.ggml.token_type": ("arr:f32", [1.0] * 268)}, ValueError, "token_type must be an array of int32"),
    ({"tokenizer.ggml.token_type": ("arr:i32", [1] * 10)}, ValueError, "10 entries for 268 tokens"),
    ({"tokenizer.ggml.add_bos_token": ("u8", 1)}, ValueError, "must be a bool"),
])
def test_bad_vocabularies(tmp_path, change, error, message):
    kv = tiny_gpt2()
    for k, v in change.items():
        if v is None:
            del kv[k]
        else:
            kv[k] = v
    with pytest.raises(error, match=message):
        _load(tmp_path, kv)


def test_repeated_token(tmp_path):
    kv = tiny_llama()
    tokens = list(kv["tokenizer.ggml.tokens"][1])
    tokens[-1] = tokens[-2]
    kv["tokenizer.ggml.tokens"] = ("arr:str", tokens)
    with pytest.raises(ValueError, match="appears twice"):
        _load(tmp_path, kv)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        nbtok.Tokenizer.from_gguf(tmp_path / "absent.gguf")


# ------------------------------------------------------------------ llama.cpp's own tests on the zoo
def _zoo_ggufs():
    from conftest import shared_data_dir
    root = shared_data_dir()
    zoo = root / "zoo" if root is not None else None
    if zoo is None or not zoo.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason="../shared/data/zoo is absent (set NBTOK_SHARED_DATA): llama.cpp's GGUF tests skipped"))]
    return [pytest.param(p, id=p.name) for p in sorted(zoo.glob("*/*.gguf"))
            if Path(f"{p}.inp").is_file() and Path(f"{p}.out").is_file()]


def read_cases(path):
    """(inputs, expected id lists) of a GGUF's ``.inp`` / ``.out`` pair, read as llama.cpp's
    ``test-tokenizer-0`` reads them."""
    sep = "\n__ggml_vocab_test__\n"
    raw = Path(f"{path}.inp").read_bytes().decode("utf-8")
    inputs, pos = [], 0
    while pos < len(raw):
        nxt = raw.find(sep, pos)
        if nxt < 0:
            inputs.append(raw[pos:])
            break
        inputs.append(raw[pos:nxt])
        pos = nxt + len(sep)
    lines = Path(f"{path}.out").read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert len(inputs) == len(lines), f"{path}: {len(inputs)} inputs, {len(lines)} expected lines"
    return inputs, [[int(t) for t in line.split()] for line in lines]


@pytest.mark.parametrize("path", _zoo_ggufs())
def test_llama_cpp_vocab_tests(path):
    tok = nbtok.Tokenizer.from_file(path)
    inputs, expected = read_cases(path)
    assert len(inputs) >= 40
    plain = {"add_special_tokens": False} if getattr(tok.model, "accepts_add_special_tokens", False) else {}
    bad = [(text, got, want) for text, want in zip(inputs, expected)
           if (got := tok.encode(text, **plain).tolist()) != want]
    assert not bad, f"{len(bad)} of {len(inputs)} cases differ; first: {bad[0]!r}"
    if "bert" not in path.name:  # byte-level BPE and SentencePiece decode every case back (WordPiece is lossy)
        assert [tok.decode(ids) for ids in expected] == inputs


# ------------------------------------------------------------------ llama.cpp's SPM rule
def llama_cpp_spm(v, text, _cache={}):
    """llama.cpp's ids for ``text`` (``llama_tokenize`` with add_special=false,
    parse_special=false) over a ``llama`` GGUFVocab ``v``, re-implemented here from
    ``src/llama-vocab.cpp`` as the oracle: ``tokenizer_st_partition`` over the user-defined
    tokens llama.cpp keeps (``gguf_llama.partition_tokens``: longest first, every occurrence),
    then per text fragment " " in front (``add_space_prefix`` and ``is_prev_special``, true at the
    start and after a token), spaces to "▁", and ``llm_tokenizer_spm_session``: UTF-8 characters
    merged pairwise, highest-score pair first (leftmost on ties), a pair merging only if its text
    is any token of the vocabulary; a final symbol that is no token becomes its bytes' <0xXX>."""
    import heapq
    from nbtok.formats.gguf_llama import partition, partition_tokens
    if _cache.get("v") is not v:
        _cache.update(v=v, ids={t.encode("utf-8"): i for i, t in enumerate(v.tokens)},
                      cut=partition_tokens(v, v.metadata), scores=v.scores.tolist())
    ids, scores = _cache["ids"], _cache["scores"]
    out, prev_special = [], True
    for frag in partition(text.encode("utf-8"), _cache["cut"]):
        if type(frag) is int:
            out.append(frag)
            prev_special = True
            continue
        s = ((b" " if v.add_space_prefix and prev_special else b"") + frag).replace(b" ", "▁".encode())
        prev_special = False
        starts, i = [], 0
        while i < len(s):
            starts.append(i)
            b = s[i]
            i += 1 if b < 0x80 else 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4
        sym = [[st, min(i, len(s)) - st if k + 1 == len(starts) else starts[k + 1] - st, k - 1,
                k + 1 if k + 1 < len(starts) else -1] for k, st in enumerate(starts)]  # start, n, prev, next
        heap = []

        def add(left, right):
            if left < 0 or right < 0:
                return
            t = s[sym[left][0]:sym[left][0] + sym[left][1] + sym[right][1]]
            if t in ids:
                heapq.heappush(heap, (-scores[ids[t]], left, right, len(t)))
        for k in range(1, len(sym)):
            add(k - 1, k)
        while heap:
            _, left, right, size = heapq.heappop(heap)
            if sym[left][1] == 0 or sym[right][1] == 0 or sym[left][1] + sym[right][1] != size:
                continue
            sym[left][1] += sym[right][1]
            sym[right][1] = 0
            sym[left][3] = sym[right][3]
            if sym[right][3] >= 0:
                sym[sym[right][3]][2] = left
            add(sym[left][2], left)
            add(left, sym[left][3])
        k = 0 if sym else -1
        while k != -1:
            t = s[sym[k][0]:sym[k][0] + sym[k][1]]
            out += [ids[t]] if t in ids else [ids[f"<0x{c:02X}>".encode()] for c in t]
            k = sym[k][3]
    return out


def _llama_with_tokens(extra, name=None, **keys):
    """tiny_llama with ``extra`` [(token, type)] appended (score 0, as converters write added tokens)."""
    kv = tiny_llama()
    kv["tokenizer.ggml.tokens"] = ("arr:str", kv["tokenizer.ggml.tokens"][1] + [t for t, _ in extra])
    kv["tokenizer.ggml.scores"] = ("arr:f32", kv["tokenizer.ggml.scores"][1] + [0.0] * len(extra))
    kv["tokenizer.ggml.token_type"] = ("arr:i32", kv["tokenizer.ggml.token_type"][1] + [k for _, k in extra])
    if name is not None:
        kv["general.name"] = ("str", name)
    for k, value in keys.items():
        kv[f"tokenizer.ggml.{k}"] = value
    return kv


def test_llama_space_prefix_after_user_defined_token(tmp_path):
    """llama.cpp's rule, worked out by hand on tiny_llama: a user-defined token is cut out of the
    raw text, and every text fragment (the first, and each one after a cut token) gets its own
    " " in front before spaces become "▁" (llama_tokenize's is_prev_special). sentencepiece
    would add one "▁" at the start of the whole text only, so "hello<tool>hello" would end in
    h e ll o there; llama.cpp gives "▁hello" twice."""
    kv = _llama_with_tokens([("<tool>", 4), ("lo<", 4), ("<|end|>", 4)])
    tok = _load(tmp_path, kv)
    v = GGUFVocab(parse_gguf(write_gguf(kv)))
    pid = {t: i for i, t in enumerate(v.tokens)}
    hello, sp, tool = pid["▁hello"], pid["▁"], pid["<tool>"]
    byte = {c: pid[f"<0x{ord(c):02X}>"] for c in "<|end>x"}
    cases = {
        "hello<tool>hello": [hello, tool, hello],
        "<tool>hello": [tool, hello],                     # the first fragment after a token: " hello"
        "<tool> hello": [tool, sp, hello],                # " " + " hello": "▁▁hello"
        "hello<tool>": [hello, tool],
        "<tool><tool>": [tool, tool],
        # longest token first over the whole text: "<tool>" (6 bytes) before "lo<" (3), so "lo<"
        # is not cut out of "hello<tool>" (a leftmost match would cut "hel" + "lo<" + "tool>")
        "hello<tool>x": [hello, tool, sp, byte["x"]],
        "hello<x": [pid["▁he"], pid["l"], pid["lo<"], sp, byte["x"]],  # " hel": "▁he" + "l" (no "▁hel")
        # "<|end|>" is an end-of-generation text: llama.cpp makes it a control token, and control
        # tokens are text with parse_special=false (bytes here: no piece spells it)
        "<|end|>": [sp] + [pid.get(c, byte[c]) for c in "<|end|>"],
    }
    for text, want in cases.items():
        assert llama_cpp_spm(v, text) == want, text      # the oracle agrees with the hand-worked ids
        assert tok.encode(text).tolist() == want, text
    assert tok.encode("hello<tool>hello", add_bos=True).tolist() == [1, hello, tool, hello]
    assert [a.tolist() for a in tok.encode_batch(list(cases))] == list(cases.values())
    assert tok.encode_as_pieces("hello<tool>hello") == ["▁hello", "<tool>", "▁hello"]
    import pickle
    assert pickle.loads(pickle.dumps(tok)).encode("<tool>hello").tolist() == [tool, hello]
    tok.save(tmp_path / "llama.nbtok")   # the native format keeps the tokens cut out
    back = nbtok.Tokenizer.load(tmp_path / "llama.nbtok")
    assert [back.encode(t).tolist() for t in cases] == list(cases.values())
    with pytest.raises(NotImplementedError, match="user-defined token"):
        tok.encode_with_offsets("hello<tool>")


def test_llama_phi3_rstrip_and_no_normalization(tmp_path):
    """A general.name with "phi3" gives cut tokens llama.cpp's rstrip (the whitespace after
    them is dropped, then the fragment gets its " "); a llama vocabulary is not normalized by
    llama.cpp's SPM tokenizer, so remove_extra_whitespaces=true keeps every space."""
    extra = [("<tool>", 4), ("<|endoftext|>", 3)]
    kv = _llama_with_tokens(extra, name="Phi3 tiny", remove_extra_whitespaces=("bool", True))
    v = GGUFVocab(parse_gguf(write_gguf(kv)))
    pid = {t: i for i, t in enumerate(v.tokens)}
    hello, sp, tool = pid["▁hello"], pid["▁"], pid["<tool>"]
    tok = _load(tmp_path, kv)
    for text, want in {"<tool>  \n hello": [tool, hello], "hello <tool> hello": [hello, sp, tool, hello],
                       "  hello": [sp, sp, hello], "hello  ": [hello, sp, sp]}.items():
        assert llama_cpp_spm(v, text) == want, text
        assert tok.encode(text).tolist() == want, text
    # without the name: no rstrip
    plain = _load(tmp_path, _llama_with_tokens(extra))
    assert plain.encode("<tool>  hello").tolist() == [tool, sp, sp, hello]
    # a Phi-3 vocabulary without "<s>", "</s>", "<unk>", "<|endoftext|>" is refused, as llama.cpp does
    with pytest.raises(ValueError, match="Phi-3"):
        _load(tmp_path, _llama_with_tokens([("<tool>", 4)], name="phi-3"))


def test_llama_fim_tokens_of_unknown_choice(tmp_path):
    kv = _llama_with_tokens([("<PRE>", 4), ("▁<PRE>", 4)])
    with pytest.raises(NotImplementedError, match="fill-in-the-middle"):
        _load(tmp_path, kv)
    kv["tokenizer.ggml.prefix_token_id"] = ("u32", 1)  # named by the file: both stay user-defined
    tok = _load(tmp_path, kv)
    pid = {t: i for i, t in enumerate(kv["tokenizer.ggml.tokens"][1])}
    assert tok.encode("hello<PRE>").tolist() == [pid["▁hello"], pid["<PRE>"]]


@pytest.mark.parametrize("name", ["llama2/ggml-vocab-llama-spm.gguf", "phi3/ggml-vocab-phi-3.gguf"])
def test_llama_cpp_rule_on_zoo_vocabularies(tmp_path, name):
    """The zoo's llama / phi-3 GGUFs with user-defined tokens appended (and Phi-3's own "</s>",
    user-defined in the file, which llama.cpp makes control): nbtok's ids equal the oracle's
    (llama.cpp's algorithm, ``llama_cpp_spm``) on llama.cpp's .inp cases with the tokens around
    and inside them."""
    from conftest import shared_data_dir
    root = shared_data_dir()
    if root is None or not (root / "zoo" / name).is_file():
        pytest.skip("../shared/data/zoo is absent (set NBTOK_SHARED_DATA)")
    g = read_gguf(root / "zoo" / name)
    md = g.metadata
    extra = ["<tool>", "<|im_start|>", "%%%"]
    md["tokenizer.ggml.tokens"] = md["tokenizer.ggml.tokens"] + extra
    md["tokenizer.ggml.scores"] = np.concatenate([md["tokenizer.ggml.scores"], np.zeros(3, np.float32)])
    md["tokenizer.ggml.token_type"] = np.concatenate([md["tokenizer.ggml.token_type"], np.full(3, 4, np.int32)])
    (tmp_path / "v.gguf").write_bytes(write_parsed(g, "<"))
    tok = nbtok.Tokenizer.from_gguf(tmp_path / "v.gguf")
    v = GGUFVocab(read_gguf(tmp_path / "v.gguf"))
    inputs, _ = read_cases(root / "zoo" / name)
    texts = []
    for i, t in enumerate(inputs):
        a, b = extra[i % 3], extra[(i + 1) % 3]
        texts += [f"{t}{a}{t}", f"{a}{t}", f"{t} {b}  {t}{a}", f"</s>{t}</s> {t}", t[: len(t) // 2] + a + t[len(t) // 2:]]
    bad = [(t, g, w) for t in texts if (g := tok.encode(t).tolist()) != (w := llama_cpp_spm(v, t))]
    assert not bad, f"{len(bad)} of {len(texts)} differ; first: {bad[0]!r}"
    assert [a.tolist() for a in tok.encode_batch(texts[:20])] == [llama_cpp_spm(v, t) for t in texts[:20]]


@pytest.mark.parametrize("path", _zoo_ggufs())
def test_special_tokens_of_zoo_ggufs(path):
    """Every id has its token; control and user-defined tokens are matched whole in the raw text
    (llama.cpp: always for user-defined ones, with ``parse_special`` for control ones), except in
    a SentencePiece vocabulary, where control pieces are not text (sentencepiece, llama.cpp's
    ``parse_special=false``)."""
    tok = nbtok.Tokenizer.from_file(path)
    v = GGUFVocab(read_gguf(path))
    assert tok.vocab_size == len(v.tokens)
    types = v.types.tolist()
    for i, (t, kind) in enumerate(zip(v.tokens, types)):
        if kind not in (3, 4):
            continue
        if v.model in ("llama", "t5"):
            assert tok.id_to_piece(i) == t and (kind == 4 or i == v.unk_id or tok.special_tokens.get(t) == i), (i, t)
            continue
        assert tok.id_to_piece(i) == t, i
        assert tok.encode(t, add_special_tokens=False).tolist() == [i], (i, t)
        assert kind == 4 or tok.special_tokens.get(t) == i, (i, t)


def gguf_from_tokenizer_json(path, pre):
    """The GGUF vocabulary llama.cpp's converter (``convert_hf_to_gguf.py``, ``get_vocab_base``)
    writes for a byte-level BPE tokenizer.json: tokens by id (an id no token has becomes a
    user-defined ``[PAD<id>]``), added tokens control when special, else user-defined; the
    merges as "left right"."""
    cfg = json.loads(Path(path).read_text(encoding="utf-8"))
    by_id = {i: t for t, i in cfg["model"]["vocab"].items()}
    kinds = {}
    for a in cfg["added_tokens"]:
        by_id[a["id"]] = a["content"]
        kinds[a["id"]] = 3 if a["special"] else 4
    n = max(by_id) + 1
    tokens = [by_id.get(i, f"[PAD{i}]") for i in range(n)]
    types = [kinds.get(i, 1 if i in by_id else 4) for i in range(n)]
    merges = [m if isinstance(m, str) else " ".join(m) for m in cfg["model"]["merges"]]
    return write_gguf({"tokenizer.ggml.model": ("str", "gpt2"), "tokenizer.ggml.pre": ("str", pre),
                       "tokenizer.ggml.tokens": ("arr:str", tokens), "tokenizer.ggml.token_type": ("arr:i32", types),
                       "tokenizer.ggml.merges": ("arr:str", merges)})


#: zoo tokenizer.json files and the pre type llama.cpp's converter gives their model
CONVERTED = [("gpt2/lenml/tokenizer.json", "gpt-2"), ("llama3/llama-3.1/tokenizer.json", "llama-bpe"),
             ("qwen2/qwen2.5/tokenizer.json", "qwen2"), ("deepseek-v3/tokenizer.json", "deepseek-v3"),
             ("smollm/tokenizer.json", "smollm")]


@pytest.mark.parametrize("name, pre", CONVERTED, ids=[c[1] for c in CONVERTED])
def test_converted_tokenizer_json_equals_tokenizers(tmp_path, name, pre):
    """More pre types than the zoo's GGUFs have: a tokenizer.json written as a GGUF (as llama.cpp
    converts it) gives HF tokenizers' ids of the original on the shared corpora (lines that NFC
    leaves alone: Qwen2's tokenizer.json normalizes to NFC, a GGUF has no normalizer)."""
    import unicodedata
    from conftest import corpus_files, shared_data_dir
    tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers (the oracle) is not installed")
    root = shared_data_dir()
    if root is None or not (root / "zoo" / name).is_file():
        pytest.skip("../shared/data/zoo is absent (set NBTOK_SHARED_DATA)")
    lines = []
    for p in corpus_files(root):
        text = p.read_bytes().decode("utf-8", errors="replace").splitlines()
        lines += [t for t in text if t.strip() and unicodedata.normalize("NFC", t) == t][:15]
    lines += ["", " ", "\n\n  x", "333333 44", "I'm DON'T", "<|endoftext|> <|im_start|>"]
    (tmp_path / "v.gguf").write_bytes(gguf_from_tokenizer_json(root / "zoo" / name, pre))
    tok = nbtok.Tokenizer.from_gguf(tmp_path / "v.gguf")
    ref = tokenizers.Tokenizer.from_file(str(root / "zoo" / name))
    want = [e.ids for e in ref.encode_batch(lines, add_special_tokens=False)]
    bad = [(t, g, w) for t, w in zip(lines, want) if (g := tok.encode(t, add_special_tokens=False).tolist()) != w]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ; first: {bad[0]!r}"
    assert len(lines) > 30


def gguf_from_sentencepiece(path, model):
    """The GGUF vocabulary llama.cpp's converter writes for a sentencepiece ``.model`` (``model``
    "llama" for BPE, "t5" for Unigram): pieces, scores, types, the normalizer's dummy prefix,
    whitespace removal and charsmap, the special ids."""
    from nbtok.formats.sentencepiece_model import read_model_file
    proto = read_model_file(path)
    data, offs = proto.piece_bytes.tobytes(), proto.piece_offsets.tolist()
    tokens = [data[offs[i]:offs[i + 1]].decode("utf-8") for i in range(len(offs) - 1)]
    t, norm = proto.trainer, proto.normalizer
    kv = {"tokenizer.ggml.model": ("str", model), "tokenizer.ggml.tokens": ("arr:str", tokens),
          "tokenizer.ggml.scores": ("arr:f32", proto.scores.tolist()),
          "tokenizer.ggml.token_type": ("arr:i32", proto.types.tolist()),
          "tokenizer.ggml.add_space_prefix": ("bool", norm["add_dummy_prefix"]),
          "tokenizer.ggml.remove_extra_whitespaces": ("bool", norm["remove_extra_whitespaces"])}
    if norm["precompiled_charsmap"]:
        kv["tokenizer.ggml.precompiled_charsmap"] = ("arr:u8", list(norm["precompiled_charsmap"]))
    for key, name in (("bos_token_id", "bos_id"), ("eos_token_id", "eos_id"), ("unknown_token_id", "unk_id"),
                      ("padding_token_id", "pad_id")):
        if t[name] >= 0:
            kv[f"tokenizer.ggml.{key}"] = ("u32", t[name])
    return write_gguf(kv)


#: zoo sentencepiece models: BPE with byte fallback and a dummy prefix (Llama 2), without one and
#: with user-defined pieces (Gemma), Unigram with a charsmap and whitespace removal (T5)
SPM_CONVERTED = [("llama2/tokenizer.model", "llama"), ("gemma/tokenizer.model", "llama"),
                 ("t5/sd3-t5xxl/spiece.model", "t5")]


@pytest.mark.parametrize("name, model", SPM_CONVERTED, ids=[c[0].split("/")[0] for c in SPM_CONVERTED])
def test_converted_sentencepiece_equals_sentencepiece(tmp_path, name, model):
    from conftest import corpus_files, shared_data_dir
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece (the oracle) is not installed")
    root = shared_data_dir()
    if root is None or not (root / "zoo" / name).is_file():
        pytest.skip("../shared/data/zoo is absent (set NBTOK_SHARED_DATA)")
    lines = []
    for p in corpus_files(root):
        lines += [t for t in p.read_bytes().decode("utf-8", errors="replace").splitlines() if t.strip()][:15]
    lines += ["", " ", "  two  spaces\tand\ttabs ", "<s> </s> <unk> <pad>", "🙃👍🏽 é e\u0301"]
    (tmp_path / "v.gguf").write_bytes(gguf_from_sentencepiece(root / "zoo" / name, model))
    tok = nbtok.Tokenizer.from_gguf(tmp_path / "v.gguf")
    ref = spm.SentencePieceProcessor(model_file=str(root / "zoo" / name))
    want = ref.encode(lines)
    if model == "llama":
        # a llama GGUF tokenizes as llama.cpp (the oracle llama_cpp_spm); its rule differs from
        # sentencepiece's only on lines holding a user-defined token or a text llama.cpp makes
        # a control token (Gemma's "</s>": sentencepiece matches it whole, llama.cpp merges it)
        from nbtok.formats.gguf_llama import EOG_TEXTS
        v = GGUFVocab(read_gguf(tmp_path / "v.gguf"))
        cpp = [llama_cpp_spm(v, t) for t in lines]
        marks = [t for t, k in zip(v.tokens, v.types.tolist()) if k == 4] + list(EOG_TEXTS)
        assert all(any(m in t for m in marks) for t, a, b in zip(lines, cpp, want) if a != b)
        assert sum(a == b for a, b in zip(cpp, want)) > 0.9 * len(lines)
        want = cpp
    bad = [(t, g, w) for t, w in zip(lines, want) if (g := tok.encode(t).tolist()) != w]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ; first: {bad[0]!r}"
    assert tok.encode("hi", add_bos=model == "llama", add_eos=model == "t5").tolist() == \
        ref.encode("hi", add_bos=model == "llama", add_eos=model == "t5")


@pytest.mark.parametrize("path", _zoo_ggufs())
def test_reader_equals_gguf_package(path):
    gguf = pytest.importorskip("gguf", reason="the gguf package (oracle) is not installed")
    ref = gguf.GGUFReader(str(path))
    md = read_gguf(path).metadata
    want = {k: f.contents() for k, f in ref.fields.items() if not k.startswith("GGUF.")}
    assert md.keys() == want.keys()
    for k, v in want.items():
        got = md[k].tolist() if isinstance(md[k], np.ndarray) else md[k]
        assert got == pytest.approx(v) if isinstance(v, float) else got == v, k


@pytest.mark.parametrize("path", _zoo_ggufs())
def test_big_endian_copy_of_zoo_gguf(path):
    """A zoo GGUF's metadata written again big-endian (``write_parsed``; written little-endian it
    is the file's own first bytes, so the writer is gguf's layout): the same metadata, and its
    tokenizer gives the little-endian file's ids (llama.cpp's .out lines) on every .inp case; cut
    anywhere in its metadata it is a ValueError."""
    import random
    from nbtok.formats.gguf import tokenizer_from_vocab
    raw = Path(path).read_bytes()
    le = read_gguf(path)
    assert raw.startswith(write_parsed(le, "<"))
    be = write_parsed(le, ">")
    g = parse_gguf(be)
    assert g.byte_order == ">" and g.version == le.version and g.types == le.types
    _same_metadata(le, g)
    tok = tokenizer_from_vocab(GGUFVocab(g))
    inputs, expected = read_cases(path)
    plain = {"add_special_tokens": False} if getattr(tok.model, "accepts_add_special_tokens", False) else {}
    assert [tok.encode(t, **plain).tolist() for t in inputs] == expected
    rng = random.Random(1)
    for n in [0, 5, 8, 23, len(be) - 1] + [rng.randrange(len(be)) for _ in range(40)]:
        with pytest.raises(ValueError, match="GGUF"):
            parse_gguf(be[:n])


if __name__ == "__main__":  # write the committed fixtures again
    DATA.mkdir(parents=True, exist_ok=True)
    for name, make in FIXTURES.items():
        (DATA / name).write_bytes(write_gguf(make()))
        print(DATA / name)
