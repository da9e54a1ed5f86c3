"""SentencePiece BPE training against sentencepiece itself: every piece, in order, and the
saved ``.model`` loaded by sentencepiece encodes every line as sentencepiece's own model does."""
import tempfile

import pytest

import nbtok
from conftest import FIXTURES

spm = pytest.importorskip("sentencepiece")
pytest.importorskip("regex")  # (the train extra: Unicode scripts)
ROOT = FIXTURES / "spm"


def lines_of(name):
    return [line for line in (ROOT / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def both(name, vocab_size, tmp_path):
    lines = lines_of(name)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "ref"),
                                   vocab_size=vocab_size, model_type="bpe", minloglevel=2)
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
    tok = nbtok.train_sentencepiece(iter(lines), vocab_size, model_type="bpe")
    return lines, ref, tok


CASES = [("botchan.txt", 800), ("botchan.txt", 2000), ("udhr_eng.txt", 400), ("udhr_rus.txt", 400),
         ("wagahaiwa_nekodearu_head.txt", 2500), ("udhr_hin.txt", 400), ("udhr_tha.txt", 300),
         ("udhr_kor.txt", 500),
         pytest.param("udhr_arb.txt", 400, marks=pytest.mark.xfail(strict=True, reason="known gap: 314 of 400 pieces agree")),
         pytest.param("udhr_vie.txt", 400, marks=pytest.mark.xfail(strict=True, reason="known gap: 113 of 400 pieces agree"))]


@pytest.mark.parametrize("name, vocab_size", CASES)
def test_bpe_pieces_and_encodings_match_sentencepiece(name, vocab_size, tmp_path):
    lines, ref, tok = both(name, vocab_size, tmp_path)
    assert [tok.id_to_piece(i) for i in range(tok.vocab_size)] == \
        [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    assert [back.encode(line) for line in lines] == [ref.encode(line) for line in lines]
    assert [tok.encode(line).tolist() for line in lines] == [ref.encode(line) for line in lines]


def test_inputs_and_unsupported_options(tmp_path):
    with pytest.raises(FileNotFoundError):
        nbtok.train_sentencepiece(["no such corpus.txt"], 300, model_type="bpe")
    with pytest.raises(NotImplementedError, match="unigram"):
        nbtok.train_sentencepiece(iter(lines_of("botchan.txt")), 300)
    with pytest.raises(ValueError, match="model_type"):
        nbtok.train_sentencepiece(iter(lines_of("botchan.txt")), 300, model_type="wordpiece")
    with pytest.raises(NotImplementedError, match="byte_fallback"):
        nbtok.train_sentencepiece(iter(lines_of("botchan.txt")), 300, model_type="bpe", byte_fallback=True)
    with pytest.raises((TypeError, ValueError)):
        nbtok.train_sentencepiece(iter(lines_of("botchan.txt")), 300, model_type="bpe", no_such_option=1)
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines_of("udhr_eng.txt")), encoding="utf-8")
    from_file = nbtok.train_sentencepiece(path, 400, model_type="bpe")
    from_lines = nbtok.train_sentencepiece(iter(lines_of("udhr_eng.txt")), 400, model_type="bpe")
    assert from_file.vocab == from_lines.vocab


def test_non_utf8_file_is_an_error(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9 ".encode("latin-1") * 20)
    with pytest.raises(ValueError, match="latin1.txt:1 is not UTF-8"):
        nbtok.train_sentencepiece(bad, 50, model_type="bpe")
