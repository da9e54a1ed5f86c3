"""SentencePiece-shaped tokenizer.json files run fused (``models/hf_fused_spm.py``) and give HF's ids.

The Unigram files are written here the way HF's converters write T5 / ALBERT files, in both
shapes (``Precompiled`` + ``WhitespaceSplit`` + ``Metaspace``, the older one; ``Precompiled`` +
``Strip`` + ``Replace(" {2,}", "▁")`` + ``Metaspace``, today's), around a Unigram model that
``sentencepiece`` trains on the committed text, with added tokens. Each is loaded by HF
``tokenizers`` (the oracle) and by nbtok; every id is compared on the committed text, the edge
cases, texts that hold added tokens, and arbitrary Unicode (hypothesis), through the batch and
the single-text calls; the same for a BPE model in BARThez's shape. The Llama-style BPE files
are trained in ``test_huggingface.py`` (``llama_bpe``, ``ms_llama``); the real files of
``../shared/data`` (T5, Phi-3, Yi, Marian, BARThez) are compared on the shared corpora when
that folder exists.
"""
import base64
import json
import os

import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

import nbtok  # noqa: E402
from conftest import corpus_lines, shared_data_dir  # noqa: E402
from test_sentencepiece import EDGE_CASES, fixture_lines, train  # noqa: E402

SPACE = "\u2581"
CORPUS_STEP = int(os.environ.get("NBTOK_CORPUS_STEP", "100"))
ADDED = ["<extra_id_0>", "<extra_id_1>", "<sep>"]
MORE = ["<extra_id_0> fill <extra_id_1>", "x<sep>y", "＜sep＞ fullwidth", "\u2581\u2581a \u2581", "a\u2581",
        "  leading", "\u200bleading", "\u200b lead", "trailing \u3000", "a\u00a0b\u2009c\u202fd", "tab\tand\nnewline",
        "\u0041\u030a \u212b \u00c5", "\uff21\uff22", "\u00a8a x\u00a8", "ﬁ ﬂ", "\u1100\u1161\u11a8",
        "E\u0301TE\u0301", "The \u0041\u0301 e\u0301e\u0301", "\u200b", "\u00a0\u00a0x", "\r\nA\r\n",
        "\u337f" * 200, "x \u337f\ufdfa" * 50]   # (NFKC makes these longer: the batch redoes them alone)


# a charsmap of its own (as Marian's): upper case as "U" + lower case, a rule of two characters,
# a deleted character, characters mapped to a space
RULES = {"E": "Ue", "A": "Ua", "T": "Ut", "e\u0301": "\u00e9", "\u200b": "", "\u00a0": " ", "\u3000": " ",
         "\uff21": "A"}


@pytest.fixture(scope="module", params=["nmt_nfkc", "rules"])
def unigram_model(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("fused_spm")
    path = root / f"uni_{request.param}.model"
    kw = {}
    if request.param == "rules":
        tsv = root / "rules.tsv"
        tsv.write_text("".join(" ".join(f"{ord(c):X}" for c in k) + "\t" + " ".join(f"{ord(c):X}" for c in v) + "\n"
                               for k, v in RULES.items()), encoding="utf-8")
        kw["normalization_rule_tsv"] = str(tsv)
    train(path, fixture_lines(), model_type="unigram", vocab_size=2000, **kw)
    return path


def t5_json(model_path, shape):
    """A tokenizer.json as HF's T5 converter writes it (``shape``: "strip" or "whitespace")."""
    tok = nbtok.Tokenizer.from_sentencepiece(str(model_path))
    proto = tok.model.proto
    charsmap = base64.b64encode(bytes(proto.normalizer["precompiled_charsmap"])).decode("ascii")
    n = proto.types.size
    pieces = [tok.model.id_to_piece(i) for i in range(n)]
    vocab = [[p, float(s)] for p, s in zip(pieces, proto.scores.tolist())]
    unk = int(np.flatnonzero(proto.types == 2)[0])
    added = [{"id": i, "content": pieces[i], "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i in np.flatnonzero(proto.types == 3).tolist() + [unk]]
    for k, text in enumerate(ADDED):   # "<sep>" is found in the normalized text ("＜sep＞" too)
        vocab.append([text, 0.0])
        added.append({"id": n + k, "content": text, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": text == "<sep>", "special": True})
    if shape == "strip":
        normalizer = {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": charsmap},
            {"type": "Strip", "strip_left": False, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": SPACE}]}
        pre = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True}
    else:
        normalizer = {"type": "Precompiled", "precompiled_charsmap": charsmap}
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Metaspace", "replacement": SPACE, "add_prefix_space": True}]}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre,
            "post_processor": {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}},
                                                                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                               "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
                               "special_tokens": {"</s>": {"id": "</s>", "ids": [pieces.index("</s>")],
                                                           "tokens": ["</s>"]}}},
            "decoder": {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "always", "split": True},
            "model": {"type": "Unigram", "unk_id": unk, "vocab": vocab, "byte_fallback": False}}


def bpe_json(model_path):
    """BARThez's shape: a SentencePiece BPE model behind its charsmap, WhitespaceSplit, Metaspace;
    merges as HF's converter makes them (every split of a piece into two pieces, by piece id)."""
    cfg = t5_json(model_path, "whitespace")
    pieces = [p for p, _ in cfg["model"]["vocab"]]
    vocab = {p: i for i, p in enumerate(pieces)}
    merges = sorted(((vocab[p], vocab[p[:k]], p[:k], p[k:]) for p in pieces[:len(pieces) - len(ADDED)]
                     for k in range(1, len(p)) if p[:k] in vocab and p[k:] in vocab))
    unk = cfg["model"]["unk_id"]
    cfg["model"] = {"type": "BPE", "vocab": vocab, "merges": [[a, b] for _, _, a, b in merges], "dropout": None,
                    "unk_token": pieces[unk], "continuing_subword_prefix": None, "end_of_word_suffix": None,
                    "fuse_unk": True, "byte_fallback": False}
    return cfg


@pytest.fixture(scope="module")
def bpe_pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("fused_bpe")
    train(root / "bpe.model", fixture_lines(), model_type="bpe", vocab_size=2000)
    path = root / "barthez.json"
    path.write_text(json.dumps(bpe_json(root / "bpe.model"), ensure_ascii=False), encoding="utf-8")
    return tokenizers.Tokenizer.from_file(str(path)), nbtok.Tokenizer.from_huggingface(path)


def test_bpe_with_charsmap(bpe_pair):
    ref, tok = bpe_pair
    assert type(tok.model.fused).__name__ == "FusedSentencePiece"
    lines = fixture_lines() + EDGE_CASES + MORE
    bad = mismatches(ref, tok, lines)
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, e.g. {[lines[k] for k in bad[:3]]!r}"


@pytest.fixture(scope="module", params=["strip", "whitespace"])
def unigram_pair(request, unigram_model, tmp_path_factory):
    """(HF tokenizers, nbtok) on a T5-shaped file around each trained model."""
    path = tmp_path_factory.mktemp("fused_json") / f"t5_{request.param}.json"
    path.write_text(json.dumps(t5_json(unigram_model, request.param), ensure_ascii=False), encoding="utf-8")
    return tokenizers.Tokenizer.from_file(str(path)), nbtok.Tokenizer.from_huggingface(path)


def mismatches(ref, tok, lines, add_special_tokens=True):
    """Lines whose ids differ between HF and nbtok (batch call, then the single-text call)."""
    want = [e.ids for e in ref.encode_batch(lines, add_special_tokens=add_special_tokens)]
    ids, off = tok.encode_batch_ragged(lines, add_special_tokens=add_special_tokens)
    bad = [k for k in range(len(lines)) if ids[off[k]:off[k + 1]].tolist() != want[k]]
    bad += [k for k in range(len(lines)) if tok.encode(lines[k], add_special_tokens=add_special_tokens).tolist()
            != want[k]]
    return sorted(set(bad))


def test_unigram_files_run_fused(unigram_pair):
    assert type(unigram_pair[1].model.fused).__name__ == "FusedUnigram"


def test_unigram_committed_text(unigram_pair):
    ref, tok = unigram_pair
    lines = fixture_lines() + EDGE_CASES + MORE
    for add in (True, False):
        bad = mismatches(ref, tok, lines, add)
        assert not bad, f"{len(bad)} of {len(lines)} lines differ, e.g. {[lines[k] for k in bad[:3]]!r}"


def test_unigram_flags_send_texts_stage_by_stage(unigram_pair):
    """The texts where the two normalizations part are the ones flagged (each of these would
    differ fused), and plain text is not."""
    from nbtok.text import pack_utf8
    fused = unigram_pair[1].model.fused
    flagged = ["a\u2581b", "x <sep> y", "e\u0301"]
    plain = ["Hello world", "  two  spaces  ", "日本語", "Привет"]
    buf, off, _ = pack_utf8(flagged + plain)
    assert fused._flagged(buf, off).tolist() == [True] * len(flagged) + [False] * len(plain)


def test_unigram_word_cache(unigram_pair):
    """The batch kernel's word cache (``models.unigram.huggingface``) replays only what HF
    computes: 300 KB of lines over more distinct words than the cache has slots (so words are
    evicted and come back), words around the 32-byte limit, words of more than 8 pieces, and
    Cyrillic and CJK words; compared word for word with HF, through one batch call."""
    import random
    from nbtok.models.unigram.huggingface import CACHE_IDS, CACHE_SLOTS, CACHE_WORD
    ref, tok = unigram_pair
    rng = random.Random(5)
    words = sorted({w for line in fixture_lines() for w in line.split()})
    words += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 12)))
              for _ in range(2 * CACHE_SLOTS)]
    words += ["x" * n for n in range(CACHE_WORD - 6, CACHE_WORD + 3)]   # (U+2581 is 3 of the bytes)
    words += ["q.z!" * (CACHE_IDS // 2 + k) for k in range(4)]          # more than CACHE_IDS pieces
    words += ["Привет", "мир", "日本語", "東京", "ёлка"]
    lines, size = [], 0
    while size < 300_000:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        lines.append(line)
        size += len(line.encode())
    assert sum(len(ref.encode(w, add_special_tokens=False).ids) > CACHE_IDS for w in words[-9:-5]) == 4
    bad = mismatches(ref, tok, lines[:400])
    want = [e.ids for e in ref.encode_batch(lines)]
    ids, off = tok.encode_batch_ragged(lines)
    bad += [k for k in range(len(lines)) if ids[off[k]:off[k + 1]].tolist() != want[k]]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, e.g. {[lines[k] for k in bad[:3]]!r}"


def test_unigram_random_unicode(unigram_pair):
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st
    ref, tok = unigram_pair
    alphabet = st.one_of(st.characters(codec="utf-8"), st.sampled_from(
        list(" \u2581\u3000\u00a0\t\u200b\u0301\u00a8\uff21EATe\r\n") + ADDED + ["  ", "ing", "the "]))

    @hypothesis.settings(max_examples=300, deadline=None, database=None)
    @hypothesis.given(st.lists(st.lists(alphabet, max_size=20).map("".join), min_size=1, max_size=8))
    def check(texts):
        assert not mismatches(ref, tok, texts)
    check()


# ---------------------------------------------------------------- real files of ../shared/data
SHARED = {"t5-small": "models/hf_tokenizers/t5-small/tokenizer.json", "t5-xxl": "zoo/t5/sd3-t5xxl/tokenizer.json",
          "phi-3": "models/hf_tokenizers/phi-3-mini/tokenizer.json", "yi": "zoo/yi/tokenizer.json",
          "marian": "zoo/marian/tokenizer.json", "barthez": "zoo/barthez/tokenizer.json"}
KIND = {"t5-small": "FusedUnigram", "t5-xxl": "FusedUnigram", "marian": "FusedUnigram",
        "phi-3": "FusedSentencePiece", "yi": "FusedSentencePiece", "barthez": "FusedSentencePiece"}


@pytest.mark.parametrize("name", sorted(SHARED))
def test_shared_files(name):
    root = shared_data_dir()
    if root is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA): shared tokenizer.json files skipped")
    path = root / SHARED[name]
    ref, tok = tokenizers.Tokenizer.from_file(str(path)), nbtok.Tokenizer.from_huggingface(path)
    assert type(tok.model.fused).__name__ == KIND[name]
    lines = [line for k, (_, line) in enumerate(corpus_lines(root)) if k % CORPUS_STEP == 0] + EDGE_CASES + MORE
    bad = mismatches(ref, tok, lines)
    print(f"{name}: {len(lines)} lines, {len(bad)} differ")
    assert not bad, f"{name}: {len(bad)} of {len(lines)} lines differ, e.g. {[lines[k] for k in bad[:3]]!r}"
