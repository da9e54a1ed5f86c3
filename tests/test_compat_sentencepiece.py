"""``nbtok.compat.sentencepiece`` against sentencepiece itself: the same calls on the same
models give the same answers (models trained here, plus the shared ones when present)."""
import pickle

import pytest

from conftest import FIXTURES, shared_data_dir
from nbtok.compat import sentencepiece as compat

spm = pytest.importorskip("sentencepiece")
TEXT = [line for line in (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines() if line]
TEXTS = TEXT[:20] + ["Hello world", "  two  spaces ", "日本語のテキスト", "🙃 emoji é", "", "I saw a girl with a telescope."]


def _models(tmp):
    out = []
    for kind, bf in (("unigram", False), ("unigram", True), ("bpe", True)):
        prefix = str(tmp / f"{kind}{int(bf)}")
        spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT), model_prefix=prefix, vocab_size=500,
                                       model_type=kind, byte_fallback=bf, minloglevel=2)
        out.append(prefix + ".model")
    root = shared_data_dir()
    if root is not None:
        out += [str(p) for p in sorted((root / "models" / "sentencepiece").glob("*.model"))]
        out += [str(root / "zoo" / "t5" / "sd3-t5xxl" / "spiece.model")]
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return _models(tmp_path_factory.mktemp("compat_spm"))


CALLS = {
    "ids": lambda s: s.encode(TEXTS),
    "one": lambda s: s.encode(TEXTS[0]),
    "pieces": lambda s: s.encode(TEXTS, out_type=str),
    "bos_eos": lambda s: s.encode(TEXTS, add_bos=True, add_eos=True) if s.bos_id() >= 0 and s.eos_id() >= 0 else None,
    "reverse": lambda s: s.encode(TEXTS, out_type=str, reverse=True),
    "emit_unk": lambda s: s.encode(TEXTS, out_type=str, emit_unk_piece=True),
    "camel": lambda s: (s.EncodeAsIds(TEXTS[1]), s.EncodeAsPieces(TEXTS[1]), s.GetPieceSize(), len(s)),
    "reserved": lambda s: (s.unk_id(), s.bos_id(), s.eos_id(), s.pad_id(), s.get_piece_size(), s.vocab_size()),
    "kinds": lambda s: [(s.is_unknown(i), s.is_control(i), s.is_unused(i), s.is_byte(i)) for i in range(s.get_piece_size())],
    "id_to_piece": lambda s: (s.id_to_piece(list(range(60))), s.IdToPiece(5)),
    "scores": lambda s: s.get_score(list(range(60))),
    "piece_to_id": lambda s: s.piece_to_id(["▁the", "<unk>", "zzzqqq", "<s>", "e"]),
}


def test_calls_match_sentencepiece(models):
    for path in models:
        ref, ours = spm.SentencePieceProcessor(model_file=path), compat.SentencePieceProcessor(model_file=path)
        for name, call in CALLS.items():
            assert call(ours) == call(ref), (path, name)
        ids = ref.encode(TEXTS)
        assert ours.decode(ids) == ref.decode(ids), path
        assert ours.decode(ref.encode(TEXTS, out_type=str)) == ref.decode(ref.encode(TEXTS, out_type=str)), path
        assert ours.decode(ids[0], out_type=bytes) == ref.decode(ids[0], out_type=bytes), path
        assert ours.decode(5) == ref.decode(5), path
        if ref.bos_id() < 0:
            with pytest.raises(ValueError):
                ours.encode("hi", add_bos=True)


def test_nbest_and_sampling(models):
    ref, ours = (cls(model_file=models[0]) for cls in (spm.SentencePieceProcessor, compat.SentencePieceProcessor))
    text = "I saw a girl with a telescope."
    assert ours.nbest_encode_as_ids(text, nbest_size=5)[0] == ref.encode(text)
    assert ours.nbest_encode(text, nbest_size=5) == ref.nbest_encode(text, nbest_size=5)
    assert ours.nbest_encode_as_pieces(text, nbest_size=3) == ref.nbest_encode_as_pieces(text, nbest_size=3)
    compat.set_random_generator_seed(0)
    for _ in range(20):   # a sample is one of the segmentations of the text
        pieces = ours.sample_encode_as_pieces(text, nbest_size=-1, alpha=0.5)
        assert ours.decode(pieces) == text
        assert ours.decode(ours.sample_encode_as_ids(text, nbest_size=-1, alpha=0.5)) == text
    assert ours.encode(text, enable_sampling=True, alpha=0.1, nbest_size=1) == ref.encode(text)
    unk_text = "x \u85e4\u85e4 y"  # an unknown character: its piece is its text, in samples and n-best
    assert "\u85e4\u85e4" in ref.encode(unk_text, out_type=str)
    assert ours.nbest_encode_as_pieces(unk_text, nbest_size=3) == ref.nbest_encode_as_pieces(unk_text, nbest_size=3)
    for nbest_size in (-1, 3):
        assert "\u85e4\u85e4" in ours.sample_encode_as_pieces(unk_text, nbest_size=nbest_size, alpha=0.1)
        assert "<unk>" in ours.sample_encode_as_pieces(unk_text, nbest_size=nbest_size, alpha=0.1, emit_unk_piece=True)


def test_options_and_loading(models, tmp_path):
    path = models[0]
    with open(path, "rb") as f:
        proto = f.read()
    ours = compat.SentencePieceProcessor(model_proto=proto, out_type=str, add_eos=True)
    ref = spm.SentencePieceProcessor(model_proto=proto, out_type=str, add_eos=True)
    assert ours.encode(TEXTS) == ref.encode(TEXTS)
    ours, ref = compat.SentencePieceProcessor(), spm.SentencePieceProcessor()
    assert ours.Load(path) and ref.Load(path)
    ours.SetEncodeExtraOptions("bos:eos:reverse")   # sentencepiece 0.1's way of setting defaults
    assert ours.encode(TEXTS) == ref.encode(TEXTS, add_bos=True, add_eos=True, reverse=True)
    assert ours.serialized_model_proto() == ref.serialized_model_proto()
    again = pickle.loads(pickle.dumps(ours))
    assert again.encode(TEXTS) == ours.encode(TEXTS)


def test_unsupported_calls_say_so(models):
    sp = compat.SentencePieceProcessor(model_file=models[0])
    for call in (lambda: sp.encode("x", out_type="proto"), lambda: sp.decode([5], out_type="proto"),
                 lambda: compat.SentencePieceNormalizer(rule_tsv="rules.tsv"),
                 lambda: sp.set_vocabulary(["a"])):
        with pytest.raises(NotImplementedError, match="not implemented by nbtok"):
            call()


def _segmentation_log_probabilities(ref, text, alpha):
    """{pieces: log p} over every segmentation of ``text``, p ~ exp(alpha * score), from
    sentencepiece's own n-best list (all of them: the text has fewer than 512)."""
    import numpy as np
    nbest = ref.nbest_encode(text, nbest_size=512, out_type="proto").nbests
    assert len(nbest) < 512
    logits = {tuple(p.piece for p in s.pieces): alpha * s.score for s in nbest}
    z = np.logaddexp.reduce(list(logits.values()))
    return {k: v - z for k, v in logits.items()}


def test_sample_encode_and_score_draws_from_the_segmentation_distribution(models):
    """sentencepiece 0.2.3 dropped ``SampleEncodeAndScore``, so the oracle is what it computes:
    with replacement, independent draws scored by their log-probability; without, distinct
    samples (a Gumbel-top-k draw) scored by their log inclusion probability q, for which
    sum over the sample of p / q has expectation 1 (the estimator those scores exist for);
    the first of them is a draw from p."""
    import collections
    import math
    ref, ours = spm.SentencePieceProcessor(model_file=models[0]), compat.SentencePieceProcessor(model_file=models[0])
    text, alpha, rounds = "the right", 0.5, 2000
    logp = _segmentation_log_probabilities(ref, text, alpha)
    compat.set_random_generator_seed(3)
    first, estimate = collections.Counter(), 0.0
    for _ in range(rounds):
        for pieces, score in ours.sample_encode_and_score(text, wor=False, num_samples=2, out_type=str, alpha=alpha):
            assert score == pytest.approx(logp[tuple(pieces)], abs=1e-5)
        drawn = ours.sample_encode_and_score(text, wor=True, num_samples=3, out_type=str, alpha=alpha)
        assert len(drawn) == 3 and len({tuple(p) for p, _ in drawn}) == 3
        estimate += sum(math.exp(logp[tuple(p)] - q) for p, q in drawn)
        first[tuple(drawn[0][0])] += 1
    assert estimate / rounds == pytest.approx(1.0, abs=0.06)
    assert 0.5 * sum(abs(first[k] / rounds - math.exp(v)) for k, v in logp.items()) < 0.06
    best = ours.sample_encode_and_score(text, wor=True, include_best=True, num_samples=4, out_type=int)
    assert best[0] == (ref.encode(text), 0.0) and ref.encode(text) not in [ids for ids, _ in best[1:]]
    for out_type in (str, int, "serialized_proto", "immutable_proto"):  # sentencepiece 0.2.1's own test
        for wor in (True, False):
            results = ours.sample_encode_and_score([text, "I have a pen."], wor=wor, num_samples=10, out_type=out_type)
            if out_type in (str, int):
                assert [ours.decode(seq) for seq, _ in results[1]] == ["I have a pen."] * len(results[1])
    proto = ours.SampleEncodeAndScoreAsImmutableProto(text, 3, wor=True)
    assert [p.piece for p in proto.nbests[0].pieces] and proto.nbests[0].text == text
    for bad in (lambda: ours.sample_encode_and_score(text, num_samples=0),
                lambda: ours.sample_encode_and_score(text, include_best=True),
                lambda: ours.sample_encode_and_score(""),
                lambda: compat.SentencePieceProcessor(model_file=models[2]).sample_encode_and_score(text)):
        with pytest.raises(RuntimeError):
            bad()


def _entropy_by_enumeration(ref, text, alpha):
    """-sum p log p over every segmentation of ``text`` into the model's pieces (read from
    sentencepiece), p ~ exp(alpha * total score): the definition, for texts whose every
    character is a piece and that the normalizer leaves as ``▁`` + text with ``▁`` for spaces."""
    import math
    s = "\u2581" + text.replace(" ", "\u2581")
    score = {ref.id_to_piece(i): ref.get_score(i) for i in range(ref.get_piece_size())
             if not (ref.is_control(i) or ref.is_unknown(i) or ref.is_byte(i))}
    assert all(ch in score for ch in s)

    def totals(i):
        if i == len(s):
            yield 0.0
            return
        for j in range(i + 1, len(s) + 1):
            if s[i:j] in score:
                for rest in totals(j):
                    yield score[s[i:j]] + rest
    logits = [alpha * t for t in totals(0)]
    top = max(logits)
    z = top + math.log(sum(math.exp(v - top) for v in logits))
    return -sum(math.exp(v - z) * (v - z) for v in logits)


def test_calculate_entropy_is_the_entropy_of_the_segmentations(models):
    """sentencepiece 0.2.3 no longer has ``CalculateEntropy``, so the oracle is its definition:
    the entropy of p ~ exp(alpha * score) over every segmentation, enumerated."""
    texts = ["the right", "everyone has", "a telescope", "of the"]
    for path in models[:2]:
        ref, ours = spm.SentencePieceProcessor(model_file=path), compat.SentencePieceProcessor(model_file=path)
        for alpha in (0.1, 0.5, 1.0):
            expected = [_entropy_by_enumeration(ref, t, alpha) for t in texts]
            assert ours.calculate_entropy(texts, alpha) == pytest.approx(expected, rel=1e-6)
            assert ours.CalculateEntropy(texts[0], alpha) == pytest.approx(expected[0], rel=1e-6)
    bpe = compat.SentencePieceProcessor(model_file=models[2])
    with pytest.raises(NotImplementedError, match="Unigram"):
        bpe.calculate_entropy("the right", 0.1)


def test_trainer_writes_a_model_sentencepiece_loads(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXT), encoding="utf-8")
    compat.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=300,
                                      model_type="bpe")
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    assert ref.get_piece_size() == 300
    assert ref.decode(ref.encode(TEXT[0])) == TEXT[0]
    assert (tmp_path / "m.vocab").read_text(encoding="utf-8").count("\n") == 300
    compat.SentencePieceTrainer.train(f"--input={corpus} --model_prefix={tmp_path / 'n'} --vocab_size=300 --model_type=bpe")
    assert (tmp_path / "n.model").read_bytes() == (tmp_path / "m.model").read_bytes()
