"""Numeric-pipeline interface (issue 5): padded batches, offsets, streaming decode, threads,
pickling and the command line."""
import json
import pickle
import subprocess
import sys
import threading
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtok

from conftest import FIXTURES

TEXTS = (FIXTURES / "text" / "udhr_eng.txt").read_text("utf-8").splitlines()[:60] + \
        (FIXTURES / "text" / "udhr_rus.txt").read_text("utf-8").splitlines()[:40] + \
        ["", "🙃 emoji and ünïcödé", "x" * 300]


@pytest.fixture(scope="module")
def gpt2():
    return nbtok.get_encoding("gpt2")


@lru_cache(maxsize=None)
def hf_gpt2(tmp_dir):
    """HF tokenizers' GPT-2 built from vocab.json + merges.txt that nbtok writes."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers
    gpt2 = nbtok.get_encoding("gpt2")
    gpt2.save_gpt2(f"{tmp_dir}/vocab.json", f"{tmp_dir}/merges.txt")
    tok = tokenizers.Tokenizer(models.BPE.from_file(f"{tmp_dir}/vocab.json", f"{tmp_dir}/merges.txt"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


@pytest.fixture(scope="module")
def hf(tmp_path_factory):
    return hf_gpt2(str(tmp_path_factory.mktemp("hf")))


@pytest.mark.parametrize("padding, max_length, truncation, side", [
    ("longest", None, False, "right"),
    ("longest", None, False, "left"),
    ("max_length", 64, True, "right"),
    ("max_length", 64, True, "left"),
    ("longest", 16, True, "right"),
])
def test_padded_batches_equal_hf(gpt2, hf, padding, max_length, truncation, side):
    hf.enable_padding(pad_id=50256, pad_token="<|endoftext|>", direction=side,
                      length=max_length if padding == "max_length" else None)
    if truncation:
        hf.enable_truncation(max_length)
    else:
        hf.no_truncation()
    expected = hf.encode_batch(TEXTS, add_special_tokens=False)
    batch = gpt2.encode_batch(TEXTS, padding=padding, max_length=max_length, truncation=truncation,
                              padding_side=side, pad_id=50256, return_offsets=True)
    assert batch.ids.dtype == np.int32 and batch.ids.shape == (len(TEXTS), len(expected[0].ids))
    assert np.array_equal(batch.ids, np.array([e.ids for e in expected]))
    assert np.array_equal(batch.attention_mask, np.array([e.attention_mask for e in expected]))
    assert np.array_equal(batch.offsets, np.array([e.offsets for e in expected]))
    assert batch.lengths.tolist() == [sum(e.attention_mask) for e in expected]
    hf.no_padding()
    hf.no_truncation()


def test_offsets_equal_hf_on_every_fixture_line(gpt2, hf):
    hf.no_padding()
    lines = [l for p in sorted((FIXTURES / "text").glob("*.txt")) for l in p.read_text("utf-8").splitlines()]
    batch = gpt2.encode_batch(lines, return_offsets=True, disallowed_special=())
    expected = hf.encode_batch(lines, add_special_tokens=False)
    flat = np.array([o for e in expected for o in e.offsets], np.int64).reshape(-1, 2)
    assert np.array_equal(batch.offsets, flat)
    assert np.array_equal(batch.ids, np.array([i for e in expected for i in e.ids], np.int32))
    assert [batch[i].tolist() for i in range(3)] == [e.ids for e in expected[:3]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(st.characters(blacklist_categories=()), max_size=12),
                          st.text(st.sampled_from("abc \u00e9\u65e5\U0001F642"), max_size=40)), max_size=8))
def test_pack_utf8_is_each_text_encoded(texts):
    # the ASCII join-once path and the per-text path (lone surrogates as tiktoken) alike give
    # the bytes and offsets of each text's own encoding
    from nbtok.text import pack_utf8, utf8
    buf, offsets, joined = pack_utf8(texts)
    encoded = [utf8(t) for t in texts]
    assert buf.tobytes() == joined == b"".join(encoded)
    assert np.diff(offsets).tolist() == [len(e) for e in encoded] and offsets[0] == 0


def test_pack_utf8_ascii_runs_across_texts():
    # texts of every length, ASCII or with multi-byte characters, packed end to end
    from nbtok.text import pack_utf8
    texts = ["x" * k for k in range(20)] + ["\u00e9" + "y" * k + "\u65e5" for k in range(20)]
    texts += [t + "\U0001F642" for t in texts[:20]] + ["z" * k for k in range(20)]
    buf, offsets, joined = pack_utf8(texts)
    assert np.diff(offsets).tolist() == [len(t.encode()) for t in texts]
    assert joined == "".join(texts).encode()


def test_unpadded_ragged_view(gpt2):
    batch = gpt2.encode_batch(TEXTS, truncation=True, max_length=5)
    assert batch.attention_mask is None and batch.ids.ndim == 1
    assert batch.row_offsets.shape == (len(TEXTS) + 1,)
    assert all(len(row) <= 5 for row in batch)
    assert batch[0].tolist() == gpt2.encode(TEXTS[0])[:5].tolist()


def test_batch_argument_errors(gpt2):
    with pytest.raises(ValueError):
        gpt2.encode_batch(TEXTS, padding="max_length")
    with pytest.raises(ValueError):
        gpt2.encode_batch(TEXTS, padding="sideways")
    with pytest.raises(ValueError):
        gpt2.encode_batch(TEXTS, padding="longest", padding_side="up")
    with pytest.raises(ValueError):
        gpt2.encode_batch(TEXTS, truncation=True)
    with pytest.raises(TypeError):
        gpt2.encode_batch(["ok", 3])


def test_streaming_decode_adds_up(gpt2):
    for text in TEXTS + ["Héllò 🙃 wörld 日本語", "\ud800 lone"]:
        ids = gpt2.encode(text)
        stream = gpt2.decode_stream()
        pieces = [stream.step(i) for i in ids]
        assert "".join(pieces) + stream.flush() == gpt2.decode(ids)
        assert all("\ufffd" not in p for p in pieces) or "\ufffd" in gpt2.decode(ids)
    # a character split over tokens appears only when complete
    ids = gpt2.encode("🙃")
    stream = gpt2.decode_stream()
    assert [stream.step(i) for i in ids] == [""] * (len(ids) - 1) + ["🙃"]


def test_threads_share_one_tokenizer(gpt2):
    docs = [TEXTS[i % len(TEXTS)] * (1 + i % 3) for i in range(400)]
    serial = [gpt2.encode(d).tolist() for d in docs]
    serial_batch = [a.tolist() for a in gpt2.encode_batch(docs)]
    results, errors = {}, []

    def work(k):
        try:
            mine = docs[k::8]
            results[k] = ([gpt2.encode(d).tolist() for d in mine], [a.tolist() for a in gpt2.encode_batch(docs)])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(8):
        assert results[k][0] == serial[k::8]
        assert results[k][1] == serial_batch


def test_pickle_does_not_reread_files(tmp_path):
    path = tmp_path / "gpt2.tiktoken"
    nbtok.get_encoding("gpt2").save_tiktoken(path)
    tok = nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2", special_tokens={"<|endoftext|>": 50256})
    data = pickle.dumps(tok)
    path.unlink()
    again = pickle.loads(data)
    assert again.encode("Hello <|endoftext|>", allowed_special="all").tolist() == [15496, 220, 50256]


# ---------------------------------------------------------------- command line
def run_cli(*args, input=None):
    return subprocess.run([sys.executable, "-m", "nbtok", *args], capture_output=True, text=True, input=input)


def test_cli_encode_decode_info():
    out = run_cli("encode", "--encoding", "gpt2", "Hello world")
    assert out.returncode == 0 and out.stdout.split() == ["15496", "995"]
    out = run_cli("decode", "15496", "995")
    assert out.returncode == 0 and out.stdout == "Hello world"  # the exact text: no newline added
    out = run_cli("encode", input="from stdin")
    assert out.stdout.split() == [str(i) for i in nbtok.get_encoding("gpt2").encode("from stdin").tolist()]
    out = run_cli("info")
    assert "bytelevel_bpe" in out.stdout and "50257" in out.stdout


def test_cli_files_to_npy_and_convert(tmp_path):
    doc = tmp_path / "doc.txt"
    doc.write_text("one line\nsecond line here\n\nlast", encoding="utf-8")
    out = run_cli("encode", "--files", str(doc), "--lines", "--output", str(tmp_path / "enc"))
    assert out.returncode == 0, out.stderr
    ids, offsets = np.load(tmp_path / "enc.ids.npy"), np.load(tmp_path / "enc.offsets.npy")
    gpt2 = nbtok.get_encoding("gpt2")
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(4)] == \
           [gpt2.encode(l).tolist() for l in ["one line", "second line here", "", "last"]]
    out = run_cli("decode", "--input", str(tmp_path / "enc.ids.npy"))
    assert out.stdout == "one linesecond line herelast"
    out = run_cli("convert", "--to", "tiktoken", "--output", str(tmp_path / "g.tiktoken"))
    assert out.returncode == 0, out.stderr
    out = run_cli("encode", "--model", str(tmp_path / "g.tiktoken"), "Hello world")
    assert out.stdout.split() == ["15496", "995"]
    out = run_cli("convert", "--to", "native", "--output", str(tmp_path / "g.nbtok"))
    assert run_cli("info", "--model", str(tmp_path / "g.nbtok")).returncode == 0


def test_cli_train(tmp_path):
    corpus = FIXTURES / "text" / "udhr_eng.txt"
    out = run_cli("train", str(corpus), "--vocab-size", "300", "--special-tokens", "<|endoftext|>",
                  "--output", str(tmp_path / "t.nbtok"), "--quiet")
    assert out.returncode == 0, out.stderr
    tok = nbtok.Tokenizer.load(tmp_path / "t.nbtok")
    assert tok.vocab_size == 300
    text = corpus.read_text("utf-8")[:2000]
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("args, needle", [
    (("info", "--model", "/no/such/file"), "no such file"),
    (("decode", "12", "x"), "integer"),
    (("decode", "999999999"), "token id 999999999 is not in the vocabulary"),
    (("train", "/no/such/corpus.txt", "--vocab-size", "300", "--output", "/tmp/x"), "no such file"),
])
def test_cli_errors_are_one_line(args, needle):
    out = run_cli(*args)
    assert out.returncode == 1
    assert needle in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_cli_bad_model_file(tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_bytes(b"not base64 at all\n")
    out = run_cli("encode", "--model", str(bad), "x")
    assert out.returncode == 1 and "bad.tiktoken:1" in out.stderr and "Traceback" not in out.stderr


def test_gpt2_saves_as_tokenizer_json(tmp_path, gpt2):
    tokenizers = pytest.importorskip("tokenizers")
    gpt2.save_huggingface(tmp_path / "tokenizer.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in TEXTS:
        assert hf.encode(text, add_special_tokens=False).ids == gpt2.encode(text).tolist()
