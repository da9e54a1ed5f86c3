"""One behaviour for every model type: accepted inputs, lone surrogates, ids out of range,
calls a model type lacks, and ``encode_batch`` padding / truncation against HF tokenizers."""
import itertools

import numpy as np
import pytest

import nbtok
from conftest import FIXTURES

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
TEXT = (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines()
LINES = [line for line in TEXT if line.strip()][:40] + ["", "a", "Hello world, hello world!"]


def _spm(tmp, model_type):
    prefix = str(tmp / model_type)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT), model_prefix=prefix, vocab_size=400,
                                   model_type=model_type, byte_fallback=True, minloglevel=2)
    return prefix + ".model"


def _hf(tmp, kind):
    from tokenizers import models, normalizers, pre_tokenizers, processors, trainers, decoders
    if kind == "wordpiece":
        t = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        t.normalizer = normalizers.BertNormalizer(lowercase=True)
        t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        t.decoder = decoders.WordPiece()
        t.train_from_iterator(TEXT, trainers.WordPieceTrainer(
            vocab_size=600, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"], show_progress=False))
        t.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    else:
        t = tokenizers.Tokenizer(models.BPE())
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        t.decoder = decoders.ByteLevel()
        t.train_from_iterator(TEXT, trainers.BpeTrainer(
            vocab_size=600, special_tokens=["<s>", "</s>"], show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        t.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 1)])
    path = tmp / f"{kind}.json"
    t.save(str(path))
    return str(path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("behaviour")
    paths = {"hf_wordpiece": _hf(tmp, "wordpiece"), "hf_bytelevel": _hf(tmp, "bytelevel")}
    return {
        "bytelevel": nbtok.get_encoding("gpt2"),
        "spm_unigram": nbtok.Tokenizer.from_sentencepiece(_spm(tmp, "unigram")),
        "spm_bpe": nbtok.Tokenizer.from_sentencepiece(_spm(tmp, "bpe")),
        "hf_wordpiece": nbtok.Tokenizer.from_huggingface(paths["hf_wordpiece"]),
        "hf_bytelevel": nbtok.Tokenizer.from_huggingface(paths["hf_bytelevel"]),
        "paths": paths,  # (trained once: the WordPiece trainer breaks ties differently each run)
    }


KINDS = ["bytelevel", "spm_unigram", "spm_bpe", "hf_wordpiece", "hf_bytelevel"]


@pytest.mark.parametrize("kind", KINDS)
def test_inputs_are_the_same_for_every_model(models, kind):
    tok = models[kind]
    text = "Hello wörld"
    ids = tok.encode(text).tolist()
    assert tok.encode(text.encode("utf-8")).tolist() == ids
    assert tok.encode(bytearray(text.encode("utf-8"))).tolist() == ids
    for bad in (None, 3, 1.5, ["a"]):
        with pytest.raises(TypeError, match="text must be str or UTF-8 bytes"):
            tok.encode(bad)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        tok.encode(b"ab\xff")
    # a lone surrogate is U+FFFD, in every entry point
    assert tok.encode("a\ud800b").tolist() == tok.encode("a\ufffdb").tolist()
    [batch_ids] = tok.encode_batch(["a\udfffb"])
    assert batch_ids.tolist() == tok.encode("a\ufffdb").tolist()
    mixed = tok.encode_batch(["Hello", b"Hello"])
    assert mixed[0].tolist() == mixed[1].tolist()
    with pytest.raises(TypeError, match="single str"):
        tok.encode_batch("Hello")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        tok.encode_batch(["a", None])


@pytest.mark.parametrize("kind", KINDS)
def test_ids_outside_the_vocabulary(models, kind):
    tok = models[kind]
    n = tok.vocab_size
    for bad in (n, -1, 10 ** 12):
        message = f"token id {bad} is not in the vocabulary \\(ids 0..{n - 1}\\)"
        with pytest.raises(ValueError, match=message):
            tok.id_to_piece(bad)
        with pytest.raises(ValueError, match=message):
            tok.decode([0, bad])
        with pytest.raises(ValueError, match=message):
            tok.decode_bytes(np.array([bad]))
    with pytest.raises(TypeError):
        tok.decode([1.5])
    with pytest.raises(TypeError):
        tok.id_to_piece("1")
    assert tok.decode([]) == ""


@pytest.mark.parametrize("kind", KINDS)
def test_vocab_is_id_to_bytes_for_every_model(models, kind, tmp_path):
    tok = models[kind]
    vocab = tok.vocab
    assert len(vocab) == tok.vocab_size and all(isinstance(b, bytes) for b in vocab.values())
    tok.save(tmp_path / "m.nbtok")
    assert nbtok.Tokenizer.load(tmp_path / "m.nbtok").vocab == vocab


def test_calls_a_model_lacks_name_the_alternative(models):
    with pytest.raises(NotImplementedError, match="sample_encode is not available for bytelevel_bpe.*SentencePiece"):
        models["bytelevel"].sample_encode("hi")
    with pytest.raises(NotImplementedError, match="nbest_encode is not available"):
        models["hf_wordpiece"].nbest_encode("hi", 2)
    with pytest.raises(NotImplementedError, match="save_tiktoken is not available for unigram"):
        models["spm_unigram"].save_tiktoken("x.tiktoken")
    with pytest.raises(NotImplementedError, match="save_sentencepiece is not available"):
        models["bytelevel"].save_sentencepiece("x.model")
    with pytest.raises(AttributeError, match="no attribute 'no_such_call'"):
        models["bytelevel"].no_such_call
    assert len(models["spm_bpe"].sample_encode("Hello world", alpha=0.1, seed=1)) > 0


def _hf_batch(path, texts, padding, max_length, truncation, padding_side, truncation_side, multiple):
    """HF tokenizers' answer: (ids rows, mask rows), or the exception type it raises."""
    t = tokenizers.Tokenizer.from_file(path)
    if truncation:
        t.enable_truncation(max_length, direction=truncation_side)
    if padding:
        t.enable_padding(direction=padding_side, pad_id=7, pad_token="[X]",
                         length=max_length if padding == "max_length" else None, pad_to_multiple_of=multiple)
    encs = t.encode_batch(texts)
    return [e.ids for e in encs], [e.attention_mask for e in encs]


@pytest.mark.parametrize("kind", ["hf_wordpiece", "hf_bytelevel"])
def test_padding_and_truncation_follow_hf(models, kind):
    tok, path = models[kind], models["paths"][kind]
    texts = LINES[:6] + ["", "word"]
    n_added = len(tok.encode(""))  # the specials the post-processor adds to every text
    checked = 0
    for padding, max_length, truncation, padding_side, truncation_side, multiple in itertools.product(
            [False, "longest", "max_length"], [None, 0, 2, 3, 9, 64], [False, True], ["right", "left"],
            ["right", "left"], [None, 4]):
        if (padding == "max_length" or truncation) and max_length is None:
            with pytest.raises(ValueError, match="needs max_length"):
                tok.encode_batch(texts, padding=padding, max_length=max_length, truncation=truncation)
            continue
        if not padding and not truncation:
            continue
        kw = dict(padding=padding, max_length=max_length, truncation=truncation, padding_side=padding_side,
                  truncation_side=truncation_side, pad_to_multiple_of=multiple, pad_id=7)
        if truncation and max_length < n_added:
            # HF computes max_length - n_added in unsigned arithmetic and then does not truncate
            # at all; nbtok refuses the call instead of returning rows longer than max_length
            with pytest.raises(ValueError, match="leaves no room for the"):
                tok.encode_batch(texts, **kw)
            continue
        try:
            want_ids, want_mask = _hf_batch(path, texts, padding, max_length, truncation, padding_side,
                                            truncation_side, multiple)
        except Exception:  # HF refuses (max_length below the special tokens it adds)
            with pytest.raises(ValueError):
                tok.encode_batch(texts, **kw)
            continue
        lengths = {len(r) for r in want_ids}
        if padding and len(lengths) > 1:  # HF leaves rows longer than max_length: no matrix
            with pytest.raises(ValueError, match="more than max_length"):
                tok.encode_batch(texts, **kw)
            continue
        got = tok.encode_batch(texts, **kw)
        if padding:
            assert got.ids.tolist() == want_ids, kw
            assert got.attention_mask.tolist() == want_mask, kw
        else:
            assert [r.tolist() for r in got] == want_ids, kw
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("kind", KINDS)
def test_batch_return_type_depends_only_on_the_call(models, kind):
    tok = models[kind]
    for texts in (LINES[:3], [], [""]):
        assert isinstance(tok.encode_batch(texts), list)
        got = tok.encode_batch(texts, truncation=True, max_length=4)
        assert isinstance(got, nbtok.batch.BatchEncoding) and got.attention_mask is None
        padded = tok.encode_batch(texts, padding="longest")
        assert padded.ids.ndim == 2 and padded.ids.shape[0] == len(texts)
    bad = dict(padding="sideways"), dict(padding_side="up"), dict(truncation_side="middle"), \
        dict(max_length=-1, truncation=True), dict(pad_to_multiple_of=0, padding=True)
    for kw in bad:
        with pytest.raises(ValueError):
            tok.encode_batch(LINES[:2], **kw)


def test_truncation_keeps_bos_and_eos(models):
    tok = models["spm_bpe"]
    full = tok.encode("Everyone has the right to life", add_bos=True, add_eos=True).tolist()
    got = tok.encode_batch(["Everyone has the right to life"], truncation=True, max_length=3,
                           add_bos=True, add_eos=True)
    assert got[0].tolist() == [full[0], full[1], full[-1]]
    left = tok.encode_batch(["Everyone has the right to life"], truncation=True, max_length=3,
                            truncation_side="left", add_bos=True, add_eos=True)
    assert left[0].tolist() == [full[0], full[-2], full[-1]]


STREAM_TEXTS = [line for line in TEXT if line.strip()][:5] + [
    "Héllò 🙃 wörld 日本語のテキスト", "  two  spaces\tand\ttabs\n", "€€€ ∑ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "a"]


def _stream_models(models, tmp_path):
    """Every model type, plus the SentencePiece models as tokenizer.json (byte fallback)."""
    out = {k: models[k] for k in KINDS}
    for k in ("spm_unigram", "spm_bpe"):
        path = tmp_path / f"{k}.json"
        models[k].save_huggingface(str(path))
        out[k + "_json"] = nbtok.Tokenizer.from_huggingface(str(path))
    return out


def test_streaming_decode_adds_up_to_decode_for_every_model(models, tmp_path):
    for kind, tok in _stream_models(models, tmp_path).items():
        for text in STREAM_TEXTS:
            ids = tok.encode(text).tolist()
            for skip in (False, True):
                stream = tok.decode_stream(skip_special_tokens=skip)
                pieces = [stream.step(i) for i in ids]
                expected = tok.decode(ids, skip_special_tokens=skip)
                assert "".join(pieces) + stream.flush() == expected, (kind, text, skip)
                # nothing is shown before its character is whole
                assert all("\ufffd" not in p for p in pieces) or "\ufffd" in expected, (kind, text)


def test_streaming_decode_matches_hf_decode_stream(models, tmp_path):
    from tokenizers.decoders import DecodeStream
    for kind, tok in _stream_models(models, tmp_path).items():
        if not (kind.startswith("hf") or kind.endswith("json")):
            continue
        path = models["paths"][kind] if kind in models["paths"] else str(tmp_path / f"{kind[:-5]}.json")
        ref = tokenizers.Tokenizer.from_file(path)
        for text in STREAM_TEXTS:
            ids = ref.encode(text).ids
            ours, theirs = tok.decode_stream(), DecodeStream(skip_special_tokens=False)
            assert [ours.step(i) for i in ids] == [theirs.step(ref, i) or "" for i in ids], (kind, text)


@pytest.mark.parametrize("kind", KINDS)
def test_streaming_decode_rejects_ids_outside_the_vocabulary(models, kind):
    stream = models[kind].decode_stream()
    with pytest.raises(ValueError, match="not in the vocabulary"):
        stream.step(models[kind].vocab_size)
    with pytest.raises(TypeError):
        stream.step("a")
    ids = models[kind].encode("ab").tolist()
    assert "".join(stream.step(i) for i in ids) + stream.flush() == models[kind].decode(ids, skip_special_tokens=False)


def test_streaming_decode_of_random_ids_adds_up(models, tmp_path):
    """Any id sequence, also byte pieces that never form a character: the stream adds up, or,
    where the decoder itself rewrites earlier text (HF's ByteFallback turns a run of bytes that
    stops being UTF-8 into one U+FFFD per byte), says so with a ValueError."""
    rng = np.random.default_rng(0)
    raised = 0
    for kind, tok in _stream_models(models, tmp_path).items():
        opts = {"skip_special_tokens": False}
        for _ in range(200):
            ids = rng.integers(0, min(tok.vocab_size, 300), rng.integers(1, 10)).tolist()
            full = tok.decode(ids, **opts)
            monotone = all(full.startswith(tok.decode(ids[:k], **opts).rstrip("\ufffd")) for k in range(len(ids)))
            stream = tok.decode_stream()
            try:
                assert "".join(stream.step(i) for i in ids) + stream.flush() == full, (kind, ids)
            except ValueError:
                assert not monotone and kind.endswith("json"), (kind, ids)
                raised += 1
    assert 0 < raised < 400  # of the 400 random sequences of the two tokenizer.json models


@pytest.mark.parametrize("kind", KINDS)
def test_decode_skip_special_tokens_on_every_model(models, kind):
    tok = models[kind]
    special = sorted(tok.special_tokens.values())
    assert special, kind
    ids = tok.encode("Hello world").tolist()
    with_specials = [special[0]] + ids + [special[-1]]
    assert tok.decode(with_specials, skip_special_tokens=True) == tok.decode(ids, skip_special_tokens=True)
    assert tok.decode_batch([with_specials], skip_special_tokens=True) == [tok.decode(ids, skip_special_tokens=True)]
    kept = tok.decode(with_specials, skip_special_tokens=False)
    if kind in ("bytelevel", "hf_wordpiece", "hf_bytelevel"):   # sentencepiece drops control pieces always
        assert tok.id_to_piece(special[0]) in kept or tok.decode([special[0]], skip_special_tokens=False) in kept
