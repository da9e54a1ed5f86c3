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
