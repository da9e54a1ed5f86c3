"""The tokenizer zoo (``../shared/data/zoo``): real files of many model families, published by
others. For every ``tokenizer.json`` and sentencepiece ``.model`` in its manifest: nbtok loads
the file exactly when the reference library does (else a ``ValueError`` /
``NotImplementedError``), and then gives the reference's ids, decoded text and streamed text on
a sample of the shared corpora (every script the corpora have). ``scripts/zoo_parity.py`` runs
the same comparison over every corpus line and writes ``docs/zoo.md``.

Skipped, with the reason, where ``../shared/data`` is absent.
"""
import json

import pytest

import nbtok
from conftest import shared_data_dir

ROOT = shared_data_dir()
ZOO = ROOT / "zoo" if ROOT is not None else None
pytestmark = pytest.mark.skipif(ZOO is None or not (ZOO / "manifest.json").is_file(),
                                reason="../shared/data/zoo is absent (set NBTOK_SHARED_DATA): zoo parity skipped")
KINDS = ("tokenizer.json", "sentencepiece")
LINES_PER_FILE = 40     # per corpus file; CI's time budget (a local run: scripts/zoo_parity.py)


def _manifest():
    if ZOO is None or not (ZOO / "manifest.json").is_file():
        return []
    rows = json.loads((ZOO / "manifest.json").read_text(encoding="utf-8"))
    return [r["path"] for r in rows if r["kind"] in KINDS]


def _kind(path):
    return "sentencepiece" if not path.endswith(".json") else "tokenizer.json"


@pytest.fixture(scope="module")
def lines():
    from conftest import corpus_files
    out = []
    for p in corpus_files(ROOT):
        text = p.read_bytes().decode("utf-8", errors="replace").splitlines()
        out.extend([t for t in text if t.strip()][:LINES_PER_FILE])
    out += ["", " ", "  two  spaces\tand\ttabs ", "<s> </s> <unk> <|endoftext|> [CLS] <mask>", "🙃👍🏽 é e\u0301"]
    return out


def _reference(path):
    """(encode_batch -> list of id lists, decode(ids) -> str), or the exception it refuses with."""
    if _kind(path) == "tokenizer.json":
        import tokenizers
        try:
            ref = tokenizers.Tokenizer.from_file(str(ZOO / path))
        except Exception as e:  # noqa: BLE001 - any refusal counts
            return e
        return (lambda texts: [e.ids for e in ref.encode_batch(texts)],
                lambda ids: ref.decode(ids, skip_special_tokens=False))
    import sentencepiece as spm
    try:
        sp = spm.SentencePieceProcessor(model_file=str(ZOO / path))
    except Exception as e:  # noqa: BLE001
        return e
    return (lambda texts: sp.encode(texts), lambda ids: sp.decode(ids))


def _load(path):
    if _kind(path) == "tokenizer.json":
        return nbtok.Tokenizer.from_huggingface(str(ZOO / path))
    return nbtok.Tokenizer.from_sentencepiece(str(ZOO / path))


@pytest.mark.parametrize("path", _manifest())
def test_zoo_file_matches_its_reference(path, lines):
    pytest.importorskip("tokenizers" if _kind(path) == "tokenizer.json" else "sentencepiece")
    ref = _reference(path)
    if isinstance(ref, Exception):
        with pytest.raises((ValueError, NotImplementedError)):
            _load(path)
        return
    tok = _load(path)
    ref_encode, ref_decode = ref
    expected = ref_encode(lines)
    ids, offsets = tok.encode_batch_ragged(lines)
    bad = [k for k, e in enumerate(expected) if ids[offsets[k]:offsets[k + 1]].tolist() != e]
    assert not bad, f"{path}: {len(bad)} of {len(lines)} lines differ, first {lines[bad[0]][:60]!r}"
    bad_decode = [k for k, e in enumerate(expected) if tok.decode(e, skip_special_tokens=False) != ref_decode(e)]
    assert not bad_decode, f"{path}: decode differs on {len(bad_decode)} lines, first {lines[bad_decode[0]][:60]!r}"
    for text in lines[::25]:
        e = ref_encode([text])[0]
        stream = tok.decode_stream()
        assert "".join(stream.step(i) for i in e) + stream.flush() == tok.decode(e, skip_special_tokens=False), (path, text)


def _rows():
    if ZOO is None or not (ZOO / "manifest.json").is_file():
        return []
    return json.loads((ZOO / "manifest.json").read_text(encoding="utf-8"))


#: the manifest's kinds as ``nbtok.formats.detect`` names them
DETECTED = {"tokenizer.json": "tokenizer.json", "sentencepiece": "sentencepiece", "tiktoken": "tiktoken",
            "gpt2-vocab-json": "gpt2-vocab", "gpt2-merges": "gpt2-merges", "wordpiece-vocab": "wordpiece-vocab",
            "gguf-vocab": "gguf", "clip-bpe-merges-gz": "clip-merges", "hf-config": "hf-config"}


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["path"])
def test_from_file_recognises_every_zoo_file(row):
    from nbtok.formats.detect import detect
    path = ZOO / row["path"]
    kind = DETECTED.get(row["kind"])
    if kind is None:  # llama.cpp's test inputs and outputs, Marian's token table: not tokenizers
        with pytest.raises(ValueError):
            detect(path)
        return
    assert detect(path) == kind
    if kind == "gguf":  # loads; its ids against llama.cpp's own test cases: tests/test_gguf.py
        from nbtok.formats.gguf import read_gguf
        tok = nbtok.Tokenizer.from_file(path)
        assert tok.vocab_size == len(read_gguf(path).metadata["tokenizer.ggml.tokens"])
    elif kind == "hf-config":
        with pytest.raises(ValueError, match="from_pretrained"):
            nbtok.Tokenizer.from_file(path)
    elif row["loads"] != "yes":
        with pytest.raises((ValueError, NotImplementedError)):
            nbtok.Tokenizer.from_file(path)
    elif kind == "tiktoken" and "openai" not in row["path"]:
        with pytest.raises(ValueError, match="pattern"):
            nbtok.Tokenizer.from_file(path)
        assert _ids(nbtok.Tokenizer.from_file(path, pattern="llama3")) == \
            _ids(nbtok.Tokenizer.from_tiktoken(path, pattern="llama3"))
    elif row["path"].startswith("clip/") and kind != "tokenizer.json":
        assert _ids(nbtok.Tokenizer.from_file(path)) == _ids(nbtok.Tokenizer.from_huggingface(ZOO / "clip/tokenizer.json"))
    else:
        assert _ids(nbtok.Tokenizer.from_file(path)) == _ids(_explicit(kind, path))


TEXTS = ["Hello world, HELLO World!", "Grüße aus Köln", "日本語のテキスト", "  spaces  and\ttabs", "don't 1234"]


def _ids(tok):
    return [tok.encode(t).tolist() for t in TEXTS]


def _explicit(kind, path):
    from nbtok.formats.detect import _sibling
    if kind == "tokenizer.json":
        return nbtok.Tokenizer.from_huggingface(path)
    if kind == "sentencepiece":
        return nbtok.Tokenizer.from_sentencepiece(path)
    if kind == "tiktoken":
        return nbtok.Tokenizer.from_tiktoken(path)
    if kind == "wordpiece-vocab":
        return nbtok.Tokenizer.from_wordpiece(path)
    if kind == "gpt2-vocab":
        return nbtok.Tokenizer.from_gpt2(path, _sibling(path, "gpt2-merges"))
    return nbtok.Tokenizer.from_gpt2(_sibling(path, "gpt2-vocab"), path)


def test_clip_files_match_clip_tokenizer_json(lines):
    """CLIP's gzipped merges list and its vocab.json + merges.txt give transformers' CLIP pipeline."""
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(ZOO / "clip/tokenizer.json"))
    expected = [e.ids for e in ref.encode_batch(lines)]
    for name in ("clip/bpe_simple_vocab_16e6.txt.gz", "clip/clip-vit-large-patch14/vocab.json"):
        ids, offsets = nbtok.Tokenizer.from_file(ZOO / name).encode_batch_ragged(lines)
        bad = [k for k, e in enumerate(expected) if ids[offsets[k]:offsets[k + 1]].tolist() != e]
        assert not bad, f"{name}: {len(bad)} lines differ, first {lines[bad[0]][:60]!r}"


@pytest.mark.parametrize("row", [r for r in _rows() if r["kind"] == "wordpiece-vocab"], ids=lambda r: r["path"])
def test_wordpiece_vocab_matches_bert_wordpiece_tokenizer(row, lines):
    tokenizers = pytest.importorskip("tokenizers")
    from nbtok.formats.wordpiece import is_uncased, read_vocab
    path = str(ZOO / row["path"])
    lower = is_uncased(read_vocab(path))
    if "uncased" in row["path"]:
        assert lower
    ref = tokenizers.BertWordPieceTokenizer(path, lowercase=lower)
    tok = nbtok.Tokenizer.from_wordpiece(path, lowercase=lower)
    expected = [e.ids for e in ref.encode_batch(lines)]
    ids, offsets = tok.encode_batch_ragged(lines)
    bad = [k for k, e in enumerate(expected) if ids[offsets[k]:offsets[k + 1]].tolist() != e]
    assert not bad, f"{len(bad)} lines differ, first {lines[bad[0]][:60]!r}"
    assert [tok.decode(e) for e in expected[::20]] == [ref.decode(e) for e in expected[::20]]


def test_from_pretrained_reads_each_family_folder():
    folders = sorted({(ZOO / r["path"]).parent for r in _rows() if r["path"].endswith("tokenizer_config.json")})
    assert len(folders) > 5
    for folder in folders:
        names = {p.name for p in folder.iterdir()}
        if not any(n in names for n in ("tokenizer.json", "tokenizer.model", "spiece.model", "vocab.json", "vocab.txt")):
            with pytest.raises(FileNotFoundError):
                nbtok.Tokenizer.from_pretrained(folder)
            continue
        try:
            tok = nbtok.Tokenizer.from_pretrained(folder)
        except (ValueError, NotImplementedError) as e:   # the broken upstream files of the zoo
            assert "ortx" in str(folder) or "sdxl" in str(folder) or "pattern" in str(e), (folder, e)
            continue
        assert tok.encode("Hello world").size > 0, folder
