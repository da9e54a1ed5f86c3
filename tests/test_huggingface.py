"""tokenizer.json (HF ``tokenizers``) parity: ids, character offsets and decoded text.

The tokenizers under test are trained here by ``tokenizers`` itself on the committed text
(session-scoped, in a temporary folder) -- byte-level BPE (GPT-2 style and Llama-3 style),
Metaspace BPE with byte_fallback, Unigram, WordPiece with the BERT normalizer / pre-tokenizer --
plus the real files under ``../shared/data/models/hf_tokenizers`` when that folder exists.
Every comparison counts documents and mismatches and asserts zero mismatches.
"""
import json
import os
from itertools import chain
from pathlib import Path

import numpy as np
import pytest

import nbtok
from conftest import FIXTURES, corpus_files, shared_data_dir

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402

TEXT_FILES = sorted((FIXTURES / "text").glob("*.txt"))
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
TRAINED = ["bl_gpt2", "bl_llama3", "bl_nfkc", "bl_falcon", "ms_bpe", "llama_bpe", "ms_llama", "unigram", "unigram_bf",
           "wordpiece"]
SHARED = ["phi-3-mini", "t5-small"]


def _add_byte_pieces(path, unigram=False):
    """Give a trained model the 256 ``<0xNN>`` pieces and turn byte_fallback on."""
    d = json.loads(path.read_text(encoding="utf-8"))
    m = d["model"]
    if unigram:
        m["vocab"].extend([f"<0x{b:02X}>", -30.0] for b in range(256))
    else:
        n = max(m["vocab"].values()) + 1
        for b in range(256):
            m["vocab"][f"<0x{b:02X}>"] = n + b
    m["byte_fallback"] = True
    path.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")


def _train(name, out):
    files = [str(p) for p in TEXT_FILES]
    bl_alphabet = pre_tokenizers.ByteLevel.alphabet()
    if name == "bl_gpt2":
        t = tokenizers.Tokenizer(models.BPE())
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        t.decoder = decoders.ByteLevel()
        t.post_processor = processors.ByteLevel(trim_offsets=True)
        t.train(files, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<|endoftext|>"],
                                           initial_alphabet=bl_alphabet, show_progress=False))
        t.add_tokens([AddedToken(" hello world", normalized=False),
                      AddedToken("Article", single_word=True, normalized=False)])
        t.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=True, normalized=False)])
    elif name == "bl_llama3":
        t = tokenizers.Tokenizer(models.BPE(ignore_merges=True))
        t.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        t.decoder = decoders.ByteLevel()
        t.train(files, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
                                           initial_alphabet=bl_alphabet, show_progress=False))
        t.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                          special_tokens=[("<|begin_of_text|>", t.token_to_id("<|begin_of_text|>"))])])
    elif name == "bl_nfkc":  # Claude's / GPT-NeoX's shape: a normal form, then byte-level BPE
        t = tokenizers.Tokenizer(models.BPE())
        t.normalizer = normalizers.NFKC()
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        t.decoder = decoders.ByteLevel()
        t.post_processor = processors.ByteLevel(trim_offsets=True)
        t.train(files, trainers.BpeTrainer(vocab_size=1200, special_tokens=["<|endoftext|>"],
                                           initial_alphabet=bl_alphabet, show_progress=False))
        t.add_tokens([AddedToken("fine print", normalized=True), AddedToken(" world", normalized=False)])
    elif name == "bl_falcon":  # Falcon's pre-tokenizer: stages after ByteLevel, on its byte characters
        t = tokenizers.Tokenizer(models.BPE())
        t.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
            pre_tokenizers.Digits(individual_digits=False), pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), "isolated")])
        t.decoder = decoders.ByteLevel()
        t.post_processor = processors.ByteLevel(trim_offsets=True)
        t.train(files, trainers.BpeTrainer(vocab_size=1500, special_tokens=[">>TITLE<<", "<|endoftext|>"],
                                           initial_alphabet=bl_alphabet, show_progress=False))
    elif name == "ms_bpe":
        t = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
        t.normalizer = normalizers.NFKC()
        t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
        t.decoder = decoders.Sequence([decoders.Metaspace(replacement="\u2581", prepend_scheme="first", split=False),
                                       decoders.ByteFallback(), decoders.Fuse()])
        t.train(files, trainers.BpeTrainer(vocab_size=1200, special_tokens=["<unk>", "<s>", "</s>"],
                                           limit_alphabet=300, show_progress=False))
        t.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)])
        t.add_tokens([AddedToken("<|user|>", rstrip=True, normalized=False, special=True)])
    elif name in ("llama_bpe", "ms_llama"):  # Llama 2 / Phi-3's shape, and Mistral's newer one
        t = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
        if name == "llama_bpe":
            t.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
        else:
            t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
        t.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                       decoders.Strip(" ", 1, 0)])
        t.train(files, trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>", "<s>", "</s>"],
                                           limit_alphabet=400, show_progress=False))
        t.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
        t.add_tokens([AddedToken("<|user|>", normalized=False, special=True), AddedToken(" world", normalized=False)])
    elif name in ("unigram", "unigram_bf"):
        t = tokenizers.Tokenizer(models.Unigram())
        t.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
        t.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()])
        t.decoder = decoders.Metaspace()
        t.train(files, trainers.UnigramTrainer(vocab_size=2000, special_tokens=["<pad>", "</s>", "<unk>"],
                                               unk_token="<unk>", show_progress=False))
        t.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
        if name == "unigram_bf":
            t.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.Strip()])
            t.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                       pre_tokenizers.Metaspace(prepend_scheme="always", split=True)])
            t.decoder = decoders.Sequence([decoders.Metaspace(), decoders.ByteFallback(), decoders.Fuse()])
            t.add_tokens([AddedToken("universal", normalized=True)])
    elif name == "wordpiece":
        t = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
        t.normalizer = normalizers.BertNormalizer(lowercase=True)
        t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        t.decoder = decoders.WordPiece()
        t.train(files, trainers.WordPieceTrainer(vocab_size=1500, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                                                 show_progress=False))
        t.post_processor = processors.BertProcessing(("[SEP]", t.token_to_id("[SEP]")), ("[CLS]", t.token_to_id("[CLS]")))
    else:  # pragma: no cover
        raise KeyError(name)
    path = out / f"{name}.json"
    t.save(str(path))
    if name == "unigram_bf":
        _add_byte_pieces(path, unigram=True)
    if name in ("ms_bpe", "llama_bpe", "ms_llama"):
        _add_byte_pieces(path)
    return path


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf_trained")
    return {name: _train(name, out) for name in TRAINED}


def _shared_model(name):
    root = shared_data_dir()
    if root is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA): shared tokenizer.json files skipped")
    return root / "models" / "hf_tokenizers" / name / "tokenizer.json"


_LOADED = {}


def _pair(path):
    key = str(path)
    if key not in _LOADED:
        _LOADED[key] = (tokenizers.Tokenizer.from_file(key), nbtok.Tokenizer.from_huggingface(key))
    return _LOADED[key]


def compare(path, texts, add_special_tokens=True):
    """(documents, id mismatches, offset mismatches, decode mismatches), with examples printed."""
    ref, tok = _pair(path)
    encs = ref.encode_batch(texts, add_special_tokens=add_special_tokens)
    ids, st, en, off = tok.encode_batch_with_offsets(texts, add_special_tokens=add_special_tokens)
    ref_ids = [e.ids for e in encs]
    lens = np.fromiter(map(len, ref_ids), np.int64, len(ref_ids))
    flat = np.array(list(chain.from_iterable(ref_ids)), np.int64)
    bad_ids = bad_off = bad_dec = 0
    same_len = np.array_equal(np.diff(off), lens)
    if same_len and np.array_equal(ids, flat):
        ref_off = np.array(list(chain.from_iterable(e.offsets for e in encs)), np.int64).reshape(-1)
        mine = np.empty(2 * ids.size, np.int64)
        mine[0::2] = st
        mine[1::2] = en
        if not np.array_equal(mine, ref_off):
            doc_of = np.repeat(np.arange(len(texts)), lens)
            bad = np.unique(doc_of[np.nonzero((mine != ref_off).reshape(-1, 2).any(axis=1))[0]])
            bad_off = len(bad)
            for d in bad[:3].tolist():
                print("offsets differ:", repr(texts[d][:120]), encs[d].offsets[:12],
                      list(zip(st[off[d]:off[d + 1]].tolist(), en[off[d]:off[d + 1]].tolist()))[:12])
    else:
        for d, r in enumerate(ref_ids):
            mine = ids[off[d]:off[d + 1]].tolist()
            if mine != r:
                bad_ids += 1
                if bad_ids <= 3:
                    print("ids differ:", repr(texts[d][:120]), r[:20], mine[:20])
            elif list(zip(st[off[d]:off[d + 1]].tolist(), en[off[d]:off[d + 1]].tolist())) != [tuple(o) for o in encs[d].offsets]:
                bad_off += 1
    # the ids-only path (which a fused pipeline takes without offsets)
    r_ids, r_off = tok.encode_batch_ragged(texts, add_special_tokens=add_special_tokens)
    if not (np.array_equal(np.diff(r_off), lens) and np.array_equal(r_ids, flat)):
        for d, r in enumerate(ref_ids):
            if r_ids[r_off[d]:r_off[d + 1]].tolist() != r:
                bad_ids += 1
                if bad_ids <= 3:
                    print("ids (without offsets) differ:", repr(texts[d][:120]), r[:20],
                          r_ids[r_off[d]:r_off[d + 1]].tolist()[:20])
    ref_dec = ref.decode_batch(ref_ids)
    my_dec = tok.model.decode_batch(ref_ids)
    for d in range(len(ref_ids)):
        if my_dec[d] != ref_dec[d]:
            bad_dec += 1
            if bad_dec <= 3:
                print("decode differs:", repr(ref_dec[d][:80]), repr(my_dec[d][:80]))
    return len(texts), bad_ids, bad_off, bad_dec


def fixture_lines():
    lines = []
    for p in TEXT_FILES:
        lines.extend(p.read_text(encoding="utf-8").splitlines())
    return lines


EXTRA = [
    "", " ", "  leading and trailing  ", "\t\ttabs\tand\nnewlines\r\n", "hello world hello world",
    "<|endoftext|>text<|endoftext|>", " <mask> masked <mask>", "<s></s><unk>", "<|user|>   hi",
    "ArticleArticle Article, (Article) xArticle", "digits 1234567890 ١٢٣ ⅷ", "ﬁne ℌ ① ｆｕｌｌ", "e\u0301 a\u0308\u0301 한국어 ᄀᄀᄀ각",
    "🙃 👩‍👩‍👧 🇫🇷 \U0001fae8 unassigned \u0ae4 \ue000 private", "can't won't I'm we've they're", "CAPS lower MiXeD İstanbul ß",
    "a" * 300, "x" * 120 + " " + "y" * 120, "\u0000\u0001 ctrl \ufffd \u200b zero-width", "universal Universal UNIVERSAL",
    "中文字符测试 and 日本語のテキスト", "   ", "end with space ", "\u3000ideographic\u3000space", "Ġ▁ already-mapped chars",
    # normal forms around added tokens: a look-alike that NFKC turns into one, a combining mark
    # that NFC composes with the token's last character, a normalized token written in ligatures
    "＜|endoftext|＞ fullwidth", "<|endoftext|>\u0338 composed", "ﬁne print and fine print", "hello ｗorld world",
    "1234567 12 123456789 x2024-12-02 99.5% a...b!!c??",
]


# ---------------------------------------------------------------- committed fixtures
@pytest.mark.parametrize("name", TRAINED)
def test_committed_text_parity(trained, name):
    lines = fixture_lines() + EXTRA
    for add in (True, False):
        docs, bad_ids, bad_off, bad_dec = compare(trained[name], lines, add_special_tokens=add)
        print(f"{name} add_special_tokens={add}: {docs} documents, {bad_ids} id / {bad_off} offset / "
              f"{bad_dec} decode mismatches")
        assert docs > 2000
        assert (bad_ids, bad_off, bad_dec) == (0, 0, 0)


FUSED = {"bl_gpt2": "FusedByteLevel", "bl_llama3": "FusedByteLevel", "bl_nfkc": "FusedByteLevel",
         "llama_bpe": "FusedSentencePiece", "ms_llama": "FusedSentencePiece"}


def test_files_run_fused(trained):
    """Byte-level BPE runs on ByteLevelBPE's kernels, Llama-style BPE on SentencePieceModel's
    (``models/hf_fused.py``, ``models/hf_fused_spm.py``); the parity tests above then check the
    fused pass, and this one that it is taken."""
    for name in TRAINED:
        fused = nbtok.Tokenizer.from_huggingface(trained[name]).model.fused
        assert type(fused).__name__ == FUSED.get(name, "NoneType"), name


def test_fused_and_stage_by_stage_agree(trained):
    lines = fixture_lines() + EXTRA
    for name in FUSED:
        fused = nbtok.Tokenizer.from_huggingface(trained[name])
        stages = nbtok.Tokenizer.from_huggingface(trained[name])
        stages.model.fused = None
        for split in (False, True):
            a = fused.encode_batch(lines, return_offsets=True, padding=True, split_special_tokens=split)
            b = stages.encode_batch(lines, return_offsets=True, padding=True, split_special_tokens=split)
            assert np.array_equal(a.ids, b.ids) and np.array_equal(a.offsets, b.offsets), name
            ra, rb = (t.encode_batch_ragged(lines, split_special_tokens=split) for t in (fused, stages))
            assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1]), name
            assert [fused.encode(t, split_special_tokens=split).tolist() for t in lines] == \
                [stages.encode(t, split_special_tokens=split).tolist() for t in lines], name


@pytest.mark.parametrize("name", SHARED)
def test_shared_model_on_committed_text(name):
    path = _shared_model(name)
    docs, bad_ids, bad_off, bad_dec = compare(path, fixture_lines() + EXTRA)
    print(f"{name}: {docs} documents, {bad_ids} id / {bad_off} offset / {bad_dec} decode mismatches")
    assert (bad_ids, bad_off, bad_dec) == (0, 0, 0)


def test_single_text_api_matches_batch(trained):
    tok = nbtok.Tokenizer.from_huggingface(trained["bl_gpt2"])
    ref = tokenizers.Tokenizer.from_file(str(trained["bl_gpt2"]))
    text = "Hello <mask> world, hello world! 🙃"
    ids, st, en = tok.encode_with_offsets(text)
    e = ref.encode(text)
    assert ids.dtype == np.int32 and st.dtype == np.int64 and en.dtype == np.int64
    assert ids.tolist() == e.ids and list(zip(st.tolist(), en.tolist())) == e.offsets
    assert tok.encode(text).tolist() == e.ids
    plain = "Hello world, hello world! 🙃"
    assert tok.encode_as_pieces(plain) == ref.encode(plain).tokens
    batch = tok.encode_batch([text, "", text])
    assert [b.tolist() for b in batch] == [e.ids, [], e.ids]
    assert tok.decode(ids) == ref.decode(e.ids)
    assert tok.piece_to_id("<mask>") == ref.token_to_id("<mask>")
    assert tok.id_to_piece(ids[0]) == e.tokens[0]


def test_special_tokens_from_post_processor(trained):
    tok = nbtok.Tokenizer.from_huggingface(trained["wordpiece"])
    ids, st, en = tok.encode_with_offsets("hello")
    assert ids[0] == tok.piece_to_id("[CLS]") and ids[-1] == tok.piece_to_id("[SEP]")
    assert (st[0], en[0], st[-1], en[-1]) == (0, 0, 0, 0)
    plain = tok.encode("hello", add_special_tokens=False)
    assert plain.tolist() == ids[1:-1].tolist()


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", TRAINED)
def test_save_huggingface_round_trip(trained, name, tmp_path):
    tok = nbtok.Tokenizer.from_huggingface(trained[name])
    out = tmp_path / "tokenizer.json"
    tok.save_huggingface(out)
    ref = tokenizers.Tokenizer.from_file(str(out))
    lines = fixture_lines()[:400] + EXTRA
    ids, off = tok.encode_batch_ragged(lines)
    assert [ids[off[i]:off[i + 1]].tolist() for i in range(len(lines))] == [e.ids for e in ref.encode_batch(lines)]
    again = nbtok.Tokenizer.from_huggingface(out)
    assert np.array_equal(again.encode_batch_ragged(lines)[0], ids)


def test_native_format_round_trip(trained, tmp_path):
    tok = nbtok.Tokenizer.from_huggingface(trained["unigram"])
    tok.save(tmp_path / "m.nbtok")
    back = nbtok.Tokenizer.load(tmp_path / "m.nbtok")
    lines = fixture_lines()[:300]
    assert np.array_equal(back.encode_batch_ragged(lines)[0], tok.encode_batch_ragged(lines)[0])
    import pickle
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode("Hello world").tolist() == tok.encode("Hello world").tolist()


def test_bytelevel_bpe_saved_as_tokenizer_json(tmp_path):
    """nbtok's GPT-2 model (tiktoken ranks), written as tokenizer.json: ``tokenizers`` loading it
    gives tiktoken's ids, and so does nbtok reading it back."""
    tiktoken = pytest.importorskip("tiktoken")
    from reference import gpt2_ranks
    from nbtok.formats.huggingface import save_huggingface
    from nbtok.models.bytelevel import ByteLevelBPE
    from nbtok.pre_tokenizers.bytelevel import R50K
    ranks = gpt2_ranks()
    out = tmp_path / "gpt2.json"
    save_huggingface(ByteLevelBPE.from_ranks(ranks, "gpt2", {"<|endoftext|>": 50256}), out)
    enc = tiktoken.Encoding("gpt2_test", pat_str=R50K, mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": 50256})
    ref = tokenizers.Tokenizer.from_file(str(out))
    lines = fixture_lines()[:500] + ["<|endoftext|> x"]
    want = [enc.encode(t, allowed_special="all") for t in lines]
    assert [e.ids for e in ref.encode_batch(lines)] == want
    hf = nbtok.Tokenizer.from_huggingface(out)
    ids, off = hf.encode_batch_ragged(lines)
    assert [ids[off[i]:off[i + 1]].tolist() for i in range(len(lines))] == want


# ---------------------------------------------------------------- property test
def test_random_text_parity(trained):
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st_

    alphabet = st_.sampled_from(list("ab c  \t\n.,'!?1234éÉ\u0301\u0308İßﬁ①한각中🙃\u200d\U0001F1EBĠ▁<>|") +
                                ["<mask>", "<|endoftext|>", "<|user|>", "<s>", "</s>", "[CLS]", "Article",
                                 " hello world", "universal"])
    texts = st_.lists(alphabet, max_size=30).map("".join)

    @hypothesis.settings(max_examples=60, deadline=None, database=None)
    @hypothesis.given(st_.lists(texts, min_size=1, max_size=8))
    def check(batch):
        for name in TRAINED:
            assert compare(trained[name], batch)[1:] == (0, 0, 0), name

    check()


@pytest.mark.parametrize("normalizer", [None, {"type": "NFD"}, {"type": "NFKD"},
                                        {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "Lowercase"}]}])
def test_decomposing_normalizers_on_accents(trained, tmp_path, normalizer):
    """NFD / NFKD and BERT's ``strip_accents`` (``normalizer`` None: the trained file's own
    ``BertNormalizer``) on text dense in precomposed letters, combining marks out of canonical
    order, kana with voicing marks, Hangul and compatibility characters: ids and offsets equal
    HF's. (A unit whose decompositions stay in canonical order side by side takes the array
    path, ``pipeline.unicode.nf_decompose``; one where ordering moves a mark takes
    ``nf_transform``: the texts hold both.)"""
    import random
    d = _base_json(trained)
    if normalizer is not None:
        d["normalizer"] = normalizer
    path = tmp_path / "decompose.json"
    path.write_text(json.dumps(d))
    rng = random.Random(3)
    alphabet = list("aeiou AEIOU éèêëÉÅåçñüÿ ёйЁЙ がぎぐパピ 한국어각 ﬁﬂ①Ω℃ ſְཱི̧̣́̈̈́")
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(400)]
    texts += ["é", "ẹ́", "ẹ́", "ẛ̣", "ạ̈́", "がが", "̈́́"]
    assert compare(path, texts)[1:] == (0, 0, 0)


def test_stage_runs_give_the_same_batch(trained, monkeypatch):
    """A batch that runs stage by stage is cut into runs of ``STAGE_CHARS`` characters (its
    memory is one run's): with runs of 50 characters every trained file still gives HF's ids and
    offsets, on lines shorter and longer than a run, and empty ones."""
    import nbtok.models.huggingface as M
    monkeypatch.setattr(M, "STAGE_CHARS", 50)
    lines = fixture_lines()[:300] + ["", "x " * 250, "", "y"]
    for name in TRAINED:
        assert compare(trained[name], lines)[1:] == (0, 0, 0), name


# ---------------------------------------------------------------- errors
def _base_json(trained):
    return json.loads(Path(trained["wordpiece"]).read_text(encoding="utf-8"))


@pytest.mark.parametrize("where,cfg,name", [
    ("normalizer", {"type": "Fancy"}, "Fancy"),   # (Nmt and UnicodeScripts are supported now: tests/test_compat_tokenizers.py)
    ("pre_tokenizer", {"type": "Fancy"}, "Fancy"),
    ("post_processor", {"type": "Fancy"}, "Fancy"),
    ("decoder", {"type": "Fancy"}, "Fancy"),   # (CTC is supported now: tests/test_compat_tokenizers.py)
])
def test_unsupported_component_raises(trained, tmp_path, where, cfg, name):
    d = _base_json(trained)
    d[where] = cfg
    path = tmp_path / "t.json"
    path.write_text(json.dumps(d))
    with pytest.raises(NotImplementedError, match=name):
        nbtok.Tokenizer.from_huggingface(path)


def test_unsupported_model_raises(trained, tmp_path):
    d = _base_json(trained)
    d["model"]["type"] = "Fancy"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(d))
    with pytest.raises(NotImplementedError, match="Fancy"):
        nbtok.Tokenizer.from_huggingface(path)


@pytest.mark.parametrize("mutate", [
    lambda d: d.__setitem__("model", None),
    lambda d: d["model"].__setitem__("vocab", [1, 2]),
    lambda d: d["model"]["vocab"].__setitem__("zzz", -5),
    lambda d: d["model"]["vocab"].__setitem__("zzz", "7"),
    lambda d: d["model"].__setitem__("unk_token", "not-there"),
    lambda d: d.__setitem__("added_tokens", [{"id": "x", "content": "a"}]),
    lambda d: d.__setitem__("added_tokens", [{"id": 3}]),
    lambda d: d.__setitem__("post_processor", {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "?"}}],
                                               "special_tokens": {}}),
    lambda d: d.__setitem__("pre_tokenizer", {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"}),
    lambda d: d.__setitem__("pre_tokenizer", {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways"}),
    lambda d: d.__setitem__("normalizer", {"type": "Replace", "pattern": {"String": ""}, "content": "x"}),
    lambda d: d.__setitem__("normalizer", {"type": "Precompiled", "precompiled_charsmap": "!!!"}),
])
def test_bad_files_raise_value_error(trained, tmp_path, mutate):
    d = _base_json(trained)
    mutate(d)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError):
        nbtok.Tokenizer.from_huggingface(path)


def test_bad_bpe_files(trained, tmp_path):
    d = json.loads(Path(trained["bl_gpt2"]).read_text(encoding="utf-8"))
    d["model"]["merges"] = [["no-such", "token"]]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="merge 0"):
        nbtok.Tokenizer.from_huggingface(path)
    d["model"]["merges"] = ["a b c"]
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError):
        nbtok.Tokenizer.from_huggingface(path)
    path.write_text("{not json")
    with pytest.raises(ValueError):
        nbtok.Tokenizer.from_huggingface(path)
    with pytest.raises(ValueError):
        nbtok.Tokenizer.from_huggingface(tmp_path / "missing.json")


def test_bad_inputs(trained):
    tok = nbtok.Tokenizer.from_huggingface(trained["ms_bpe"])
    assert tok.encode(b"bytes").tolist() == tok.encode("bytes").tolist()  # UTF-8 bytes, as every model
    with pytest.raises(TypeError):
        tok.encode(None)
    with pytest.raises(TypeError):
        tok.encode_batch(["ok", 3])
    with pytest.raises(ValueError):
        tok.decode([10 ** 7])
    with pytest.raises(ValueError):
        tok.decode([-1])
    with pytest.raises(TypeError):
        tok.decode([1.5])
    with pytest.raises(TypeError):
        tok.encode("x", allowed_colors="all")
    assert tok.decode([]) == ""
    # lone surrogates are replaced, never crash
    assert tok.encode("a\ud800b").size > 0


# ---------------------------------------------------------------- the shared corpora
def _corpus_stride(path):
    """Lines compared per file: every line with NBTOK_HF_CORPORA=all; by default every 32nd line
    (every 256th of the 56 MB bench/ corpus) so the eight tokenizers fit the test-time budget --
    ``tokenizers`` itself needs minutes per tokenizer for the full 70 MB with offsets."""
    if os.environ.get("NBTOK_HF_CORPORA", "").lower() == "all":
        return 1
    return 256 if "bench" in path.parts else 32


@pytest.mark.parametrize("name", TRAINED + SHARED)
def test_every_corpus_line_matches_tokenizers(shared_data, trained, name):
    path = trained[name] if name in trained else _shared_model(name)
    totals = np.zeros(4, np.int64)
    full = True
    phase = sum(map(ord, name))  # each tokenizer samples different lines
    for p in corpus_files(shared_data):
        lines = p.read_bytes().decode("utf-8", errors="replace").splitlines()
        stride = _corpus_stride(p)
        full &= stride == 1
        lines = lines[phase % stride::stride]
        for i in range(0, len(lines), 50_000):
            totals += compare(path, lines[i:i + 50_000])
    docs, bad_ids, bad_off, bad_dec = totals.tolist()
    print(f"{name}: {docs} documents compared ({'every line' if full else 'sampled lines'}); "
          f"mismatches: ids {bad_ids}, offsets {bad_off}, decode {bad_dec}")
    assert docs > (800_000 if full else 5_000)
    assert (bad_ids, bad_off, bad_dec) == (0, 0, 0)


def test_unigram_unknown_token_is_its_text(tmp_path):
    """HF's Encoding.tokens gives a Unigram model's unknown token as the text it covers."""
    t = tokenizers.Tokenizer(models.Unigram())
    t.pre_tokenizer = pre_tokenizers.Metaspace()
    t.decoder = decoders.Metaspace()
    t.train([str(FIXTURES / "text" / "udhr_eng.txt")], trainers.UnigramTrainer(
        vocab_size=300, special_tokens=["<unk>"], unk_token="<unk>", show_progress=False))
    t.post_processor = processors.TemplateProcessing(single="$A <unk>", special_tokens=[("<unk>", 0)])
    t.save(str(tmp_path / "u.json"))
    tok = nbtok.Tokenizer.from_huggingface(tmp_path / "u.json")
    for text in ["A sentence 🤗", "🤗🤗 x🤗y", "Ωmega", "<unk> literal", ""]:
        assert tok.encode_as_pieces(text) == t.encode(text).tokens, text
        assert tok.encode(text).tolist() == t.encode(text).ids, text
