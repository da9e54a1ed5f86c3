"""Damaged files: random byte edits of a sentencepiece ``.model`` and a ``.tiktoken`` file, and
random value edits of tokenizer.json files. Every one either loads and then encodes / decodes,
or is refused with ``ValueError`` / ``NotImplementedError`` -- never another exception, a hang
or a crash (the kernels do no bounds checks: the loaders must catch whatever would make them
read out of bounds). Seeded, so a failure reproduces."""
import copy
import json
import os
import random

import pytest

import nbtok
from conftest import FIXTURES
from fuzz_runner import mutate_bytes

TEXT = [line for line in (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines() if line]
PROBES = TEXT[:4] + ["héllo 🙃 <s> [CLS] <unk>", ""]
REFUSALS = (ValueError, NotImplementedError)


def _exercise(tok):
    for text in PROBES:
        tok.decode(tok.encode(text))
    tok.encode_batch(TEXT[:8])


def _check_damaged(load, data, path, rng, trials):
    loaded = 0
    for _ in range(trials):
        path.write_bytes(mutate_bytes(data, rng))
        try:
            tok = load(path)
        except REFUSALS:
            continue
        try:
            _exercise(tok)
        except REFUSALS:
            pass
        loaded += 1
    return loaded


def test_damaged_sentencepiece_models(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT), model_prefix=str(tmp_path / "base"),
                                   vocab_size=600, byte_fallback=True, minloglevel=2)
    data = (tmp_path / "base.model").read_bytes()
    loaded = _check_damaged(nbtok.Tokenizer.from_sentencepiece, data, tmp_path / "m.model", random.Random(0), 300)
    assert 0 < loaded < 300   # both outcomes happen: the edits reach the parts that matter


def test_damaged_rank_files(tmp_path):
    tok = nbtok.train_bpe(iter(TEXT * 3), 400, progress=False)
    tok.save_tiktoken(str(tmp_path / "base.tiktoken"))
    data = (tmp_path / "base.tiktoken").read_bytes()

    def load(path):
        return nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2", cache=False)
    loaded = _check_damaged(load, data, tmp_path / "m.tiktoken", random.Random(1), 200)
    assert 0 < loaded < 200


VALUES = [-1, 0, 1, 2**31, 2**63 - 1, -2**40, 1e308, "", "x", "\u0000", None, True, [], {}, [1, 2], "<s>", 10**6]


def _paths(obj, rng, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, rng, prefix + (k,))
    elif isinstance(obj, list):
        picks = list(range(min(len(obj), 3))) + ([rng.randrange(len(obj))] if len(obj) > 3 else [])
        for i in picks:
            yield from _paths(obj[i], rng, prefix + (i,))


def _tokenizer_json(kind):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
    if kind == "bytelevel":
        t = tokenizers.Tokenizer(models.BPE())
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        t.decoder = decoders.ByteLevel()
        t.train_from_iterator(TEXT, trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>"], show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    elif kind == "unigram":
        t = tokenizers.Tokenizer(models.Unigram())
        t.normalizer = normalizers.NFKC()
        t.pre_tokenizer = pre_tokenizers.Metaspace()
        t.decoder = decoders.Metaspace()
        t.train_from_iterator(TEXT, trainers.UnigramTrainer(vocab_size=300, special_tokens=["<unk>"],
                                                            unk_token="<unk>", show_progress=False))
    else:
        t = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        t.normalizer = normalizers.BertNormalizer()
        t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        t.decoder = decoders.WordPiece()
        t.train_from_iterator(TEXT, trainers.WordPieceTrainer(vocab_size=400, special_tokens=["[UNK]", "[CLS]", "[SEP]"],
                                                              show_progress=False))
        t.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    return json.loads(t.to_str())


@pytest.mark.parametrize("kind", ["bytelevel", "unigram", "wordpiece"])
def test_damaged_tokenizer_json(kind, tmp_path):
    base = _tokenizer_json(kind)
    rng = random.Random(2)
    loaded = 0
    for _ in range(150):
        cfg = copy.deepcopy(base)
        for _ in range(rng.randint(1, 3)):
            where = rng.choice(list(_paths(cfg, rng))[1:])
            parent = cfg
            for key in where[:-1]:
                parent = parent[key]
            if rng.random() < 0.7:
                parent[where[-1]] = copy.deepcopy(rng.choice(VALUES))
            elif isinstance(parent, dict):
                del parent[where[-1]]
            else:
                parent.pop(where[-1])
        path = tmp_path / "t.json"
        path.write_text(json.dumps(cfg), encoding="utf-8")
        try:
            tok = nbtok.Tokenizer.from_huggingface(path)
        except REFUSALS:
            continue
        try:
            _exercise(tok)
            tok.encode_batch(TEXT[:8], return_offsets=True, padding=True)
        except REFUSALS:
            pass
        loaded += 1
    assert 0 < loaded < 150


# ------------------------------------------------------------------ every loader, crash- and hang-proof
# tests/fuzz_runner.py runs the cases in a worker process with a timeout per case, so that a
# crash or a hang is counted instead of taking pytest down. NBTOK_FUZZ_CASES sets the cases
# per format (a long local run: tests/fuzz_runner.py --cases 3000, README "Testing").
FUZZ_CASES = int(os.environ.get("NBTOK_FUZZ_CASES", "25"))


@pytest.fixture(scope="module")
def fuzz_bases(tmp_path_factory):
    import fuzz_runner
    path = tmp_path_factory.mktemp("fuzz") / "bases"
    return path, fuzz_runner.build_bases(path)


@pytest.mark.parametrize("fmt", ["model", "tiktoken", "gpt2", "tokenizer_json", "native"])
def test_fuzz_every_loader(fmt, fuzz_bases, tmp_path):
    import fuzz_runner
    bases, built = fuzz_bases
    if fmt not in built:
        pytest.skip(f"the base {fmt} file needs a reference library that is not installed")
    r = fuzz_runner.run_format(fmt, bases, FUZZ_CASES, tmp_path / "work", timeout=120)
    assert not r["errors"] and not r["crashes"] and not r["hangs"], r
    assert r["refused"] > 0, r  # the edits reach what the loader checks


def test_byte_fallback_with_a_suffix_does_not_crash():
    """Found by the long fuzz run (tokenizer_json case 67): a BPE tokenizer.json with byte
    fallback and an ``end_of_word_suffix`` spelled the suffix's bytes past the word's end, and
    their spans read scratch that held nothing (a segfault in ``assemble``)."""
    from nbtok.formats.huggingface import tokenizer_from_config
    from nbtok.formats.sentencepiece_model import tokenizer_from_proto
    from nbtok.warmup import _spm_proto
    cfg = tokenizer_from_proto(_spm_proto(2)).model.to_huggingface_json()
    assert cfg["model"]["byte_fallback"]
    cfg["model"]["end_of_word_suffix"] = "\u0000"
    tok = tokenizer_from_config(cfg)
    for text in ["hello", "© 1996 – 2009 hé", "zzz 日本"] * 3:
        ids = tok.encode(text)
        tok.decode(ids)
    batch = tok.encode_batch(["© 1996 – 2009", "hello x"], return_offsets=True)
    n = len("© 1996 – 2009")
    spans = batch.offsets[batch.row_offsets[0]:batch.row_offsets[1]]
    assert ((spans >= 0) & (spans <= n) & (spans[:, :1] <= spans[:, 1:])).all(), spans
