"""``SentencePieceProcessor.normalize``, ``override_normalizer_spec`` and
``SentencePieceNormalizer`` of ``nbtok.compat.sentencepiece`` against sentencepiece itself:
the same normalized text, offsets (bytes and characters) and serialized specs. (The flags are
passed explicitly: sentencepiece 0.2.1 replaces the spec's flags by False when they are not
given, 0.2.3 keeps them; nbtok follows 0.2.1 and keeps the spec's for None.)"""
import pickle

import pytest

from conftest import FIXTURES
from nbtok.compat import sentencepiece as compat

spm = pytest.importorskip("sentencepiece")
LINES = [l for l in (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines() if l]
TEXTS = LINES[:10] + ["ＫＡＤＯＫＡＷＡABC", "㍻", "  hello  world  ", "", " ", "Ⅻ ﬁ ｶﾞ \u200b x\u3000y", "日本語 🙃 é",
                      "tab\tand\nnewline", "\u00e9\u0301 combining"]
FLAGS = [dict(add_dummy_prefix=a, escape_whitespaces=e, remove_extra_whitespaces=r)
         for a in (True, False) for e in (True, False) for r in (True, False)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("spm_norm")
    out = []
    for rule, extra in (("nmt_nfkc", {}), ("nfkc_cf", {"user_defined_symbols": ["ABC", "▁x"]}),
                        ("identity", {"treat_whitespace_as_suffix": True})):
        prefix = str(tmp / rule)
        spm.SentencePieceTrainer.train(sentence_iterator=iter(LINES), model_prefix=prefix, vocab_size=300,
                                       normalization_rule_name=rule, minloglevel=2, **extra)
        out.append(prefix + ".model")
    return out


def test_processor_normalize_matches(models):
    for path in models:
        ours, ref = compat.SentencePieceProcessor(model_file=path), spm.SentencePieceProcessor(model_file=path)
        assert ours.normalize(TEXTS) == ref.normalize(TEXTS), path
        assert ours.Normalize(TEXTS, with_offsets=True) == ref.Normalize(TEXTS, with_offsets=True), path
        data = [t.encode("utf-8") for t in TEXTS]
        assert ours.normalize(data, with_offsets=True) == ref.normalize(data, with_offsets=True), path
        assert ours.normalize(TEXTS[10]) == ref.normalize(TEXTS[10])


def test_standalone_normalizer_matches(models):
    for path in models:
        for flags in FLAGS:
            ours = compat.SentencePieceNormalizer(model_file=path, **flags)
            ref = spm.SentencePieceNormalizer(model_file=path, **flags)
            assert ours.normalize(TEXTS) == ref.normalize(TEXTS), (path, flags)
            assert ours.normalize(TEXTS, with_offsets=True) == ref.normalize(TEXTS, with_offsets=True), (path, flags)
            data = [t.encode("utf-8") for t in TEXTS]
            assert ours.Normalize(data, with_offsets=True) == ref.Normalize(data, with_offsets=True), (path, flags)
            assert ours.serialized_normalizer_spec() == ref.serialized_normalizer_spec()
            assert ours.serialized_model_proto() == ref.serialized_model_proto()
            back = pickle.loads(pickle.dumps(ours))
            assert back.normalize(TEXTS) == ref.normalize(TEXTS)
    with open(models[0], "rb") as f:
        proto = f.read()
    assert compat.SentencePieceNormalizer(model_proto=proto, **FLAGS[0]).normalize(TEXTS) == \
        spm.SentencePieceNormalizer(model_proto=proto, **FLAGS[0]).normalize(TEXTS)


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity"])
def test_rule_names_match(rule):
    for flags in FLAGS[::3]:
        ours, ref = compat.SentencePieceNormalizer(rule_name=rule, **flags), spm.SentencePieceNormalizer(rule_name=rule, **flags)
        assert ours.normalize(TEXTS, with_offsets=True) == ref.normalize(TEXTS, with_offsets=True), (rule, flags)
        assert ours.serialized_normalizer_spec() == ref.serialized_normalizer_spec()
        spec = ours.serialized_normalizer_spec()
        assert compat.SentencePieceNormalizer(normalizer_spec=spec, **flags).normalize(TEXTS) == ref.normalize(TEXTS)


def test_flag_defaults_follow_0_2_1(models):
    # sentencepiece 0.2.1: flags not given are set to False
    n = compat.SentencePieceNormalizer(model_file=models[0])
    assert n.normalize("ＫＡＤＯＫＡＷＡABC  x") == "KADOKAWAABC  x"
    assert n.normalize("ＫＡＤＯＫＡＷＡABC  x") == spm.SentencePieceNormalizer(
        model_file=models[0], add_dummy_prefix=False, escape_whitespaces=False, remove_extra_whitespaces=False
    ).normalize("ＫＡＤＯＫＡＷＡABC  x")
    # None keeps the spec's (0.2.3)
    kept = compat.SentencePieceNormalizer(model_file=models[0], add_dummy_prefix=None, escape_whitespaces=None,
                                          remove_extra_whitespaces=None)
    assert kept.normalize(TEXTS) == spm.SentencePieceNormalizer(model_file=models[0]).normalize(TEXTS)


def test_override_normalizer_spec_matches(models, tmp_path):
    for path in models:
        for flags in FLAGS:
            ours = compat.SentencePieceProcessor(model_file=path)
            ours.override_normalizer_spec(**flags)
            # sentencepiece, loading the same spec from a model file, encodes alike
            p = tmp_path / "o.model"
            data = spm.SentencePieceNormalizer(model_file=path, **flags).serialized_normalizer_spec()
            from nbtok.formats.sentencepiece_model import read_model_proto, write_model_proto
            with open(path, "rb") as f:
                proto = read_model_proto(f.read())
            proto.raw_normalizer = data
            p.write_bytes(write_model_proto(proto))
            ref = spm.SentencePieceProcessor(model_file=str(p))
            assert ours.serialized_model_proto() == ref.serialized_model_proto()
            assert ours.encode(TEXTS, out_type=str) == ref.encode(TEXTS, out_type=str), (path, flags)
            assert ours.normalize(TEXTS, with_offsets=True) == ref.normalize(TEXTS, with_offsets=True)
    with pytest.raises(NotImplementedError, match="override_normalizer_spec"):
        compat.SentencePieceProcessor(model_file=models[0]).override_normalizer_spec(name="nfkc")


def test_unsupported_normalizer_sources_say_so(tmp_path):
    with pytest.raises(NotImplementedError, match="rule_tsv"):
        compat.SentencePieceNormalizer(rule_tsv=str(tmp_path / "rules.tsv"))
    with pytest.raises(ValueError, match="No precompiled charsmap"):
        compat.SentencePieceNormalizer(rule_name="no_such_rule")
    with pytest.raises(RuntimeError, match="no model"):
        compat.SentencePieceNormalizer()
