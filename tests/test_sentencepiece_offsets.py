"""SentencePiece character offsets and n-best sampling, against ``sentencepiece`` itself.

Offsets: the reference is sentencepiece's ``SentencePieceText`` (``encode(..., return_type=
"proto")``; ``encode_as_immutable_proto`` in older versions): per piece ``begin`` / ``end``,
byte offsets into the original UTF-8 input, converted here to character offsets. They come from
the normalizer's ``norm_to_orig``, so NFKC expansions / contractions, removed whitespace, the
dummy prefix and user-defined symbols are all covered by comparing on real text.

One documented sentencepiece quirk is deliberately NOT copied: for an unknown character
decomposed into byte-fallback pieces, sentencepiece gives every ``<0xXX>`` piece but the last an
empty span (``begin == end``, "the other byte pieces have no surface",
``PopulateSentencePieceText``). nbtok gives each of them the character's span, so every token
of a character points at it (as HF does for byte-level tokens); ``reference_offsets`` below
applies that rule to sentencepiece's output before comparing, and
``test_byte_fallback_offsets_quirk`` pins both behaviours. bos / eos get ``(0, 0)``
(sentencepiece's proto API refuses add_bos / add_eos; its C++ ``ApplyExtraOptions`` leaves the
fields at 0).
"""
import os
import collections

import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece")
from hypothesis import HealthCheck, given, settings  # noqa: E402

from conftest import FIXTURES, corpus_files, shared_data_dir  # noqa: E402
from test_sentencepiece import CONFIGS, EDGE_CASES, TEXTS, load_pair, spm_models  # noqa: E402,F401

_ROOT = shared_data_dir()
SHARED_MODELS = sorted((_ROOT / "models" / "sentencepiece").glob("*.model")) if _ROOT else []
EVERY_NTH = int(os.environ.get("NBTOK_CORPUS_STEP", "50"))  # every Nth corpus line per model; 1: all


def committed_lines():
    lines = []
    for folder in ("text", "spm"):
        for path in sorted((FIXTURES / folder).glob("*.txt")):
            lines.extend(path.read_bytes().decode("utf-8", errors="replace").splitlines())
    return lines


def _byte_len(lead):
    if lead < 0x80 or lead < 0xC0:
        return 1
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def reference_offsets(sp, text, proto=None):
    """(ids, [(start, end)] in characters) from sentencepiece's proto, with the byte-fallback
    rule above (all byte pieces of one character get that character's span)."""
    proto = proto if proto is not None else sp.encode(text, return_type="proto")
    b = np.frombuffer(text.encode("utf-8"), np.uint8)
    char_at = np.zeros(b.size + 1, np.int64)
    np.cumsum((b & 0xC0) != 0x80, out=char_at[1:])
    pieces = list(proto.pieces)
    ids = [p.id for p in pieces]
    spans = [(p.begin, p.end) for p in pieces]
    i = 0
    while i < len(pieces):
        if sp.is_byte(pieces[i].id):
            n = _byte_len(int(pieces[i].piece[3:5], 16))
            group = range(i, min(i + n, len(pieces)))
            last = spans[group[-1]]
            for j in group:
                spans[j] = last
            i = group[-1] + 1
        else:
            i += 1
    return ids, [(int(char_at[s]), int(char_at[e])) for s, e in spans]


def compare_offsets(tok, sp, lines, label=""):
    """Run nbtok's batch offsets once over ``lines``; return (documents, mismatching documents)."""
    ids, off, st, en = tok.model.encode_batch_offsets(lines)
    protos = sp.encode(lines, return_type="proto")
    bad = []
    for d, (text, proto) in enumerate(zip(lines, protos)):
        rids, rspans = reference_offsets(sp, text, proto)
        a, b = off[d], off[d + 1]
        mine = list(zip(st[a:b].tolist(), en[a:b].tolist()))
        if ids[a:b].tolist() != rids or mine != rspans:
            bad.append(d)
    if bad:
        d = bad[0]
        a, b = off[d], off[d + 1]
        detail = (lines[d][:200], ids[a:b].tolist()[:40], list(zip(st[a:b].tolist(), en[a:b].tolist()))[:40],
                  reference_offsets(sp, lines[d])[1][:40])
        raise AssertionError(f"{label}: {len(bad)} of {len(lines)} documents differ; first: {detail!r}")
    print(f"offsets {label}: {len(lines)} documents, 0 mismatches")
    return len(lines), len(bad)


# ---------------------------------------------------------------------------------- committed text
@pytest.mark.parametrize("name", list(CONFIGS))
def test_offsets_committed_text(spm_models, name):
    tok, sp = load_pair(spm_models[name])
    lines = committed_lines()
    n, _ = compare_offsets(tok, sp, lines + EDGE_CASES, label=name)
    assert n > 5000


@pytest.mark.parametrize("model", SHARED_MODELS or [None], ids=lambda p: p.name if p else "absent")
def test_offsets_shared_models_committed_text(model):
    if model is None:
        pytest.skip("no sentencepiece models under ../shared/data/models/sentencepiece (set NBTOK_SHARED_DATA)")
    tok, sp = load_pair(model)
    compare_offsets(tok, sp, committed_lines() + EDGE_CASES, label=model.name)


@pytest.mark.parametrize("name", ["uni_symbols", "uni_cf_raw", "bpe_llama", "bpe_suffix_symbols", "uni_bf_nfkc",
                                  "uni_identity_suffix", "bpe_nmt"])
def test_offsets_hypothesis(spm_models, name):
    tok, sp = load_pair(spm_models[name])

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    def check(text):
        ids, st, en = tok.encode_with_offsets(text)
        rids, rspans = reference_offsets(sp, text)
        assert ids.tolist() == rids
        assert list(zip(st.tolist(), en.tolist())) == rspans

    check()


# ---------------------------------------------------------------------------------- shared corpora
def _nth_lines(root):
    lines = []
    for path in corpus_files(root):
        text = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        lines.extend(text[::EVERY_NTH])
    return lines


@pytest.mark.parametrize("model", SHARED_MODELS or [None], ids=lambda p: p.name if p else "absent")
def test_offsets_shared_corpora(shared_data, model):
    if model is None:
        pytest.skip("no sentencepiece models under ../shared/data/models/sentencepiece")
    tok, sp = load_pair(model)
    lines = _nth_lines(shared_data)
    n, _ = compare_offsets(tok, sp, lines, label=f"{model.name} on every {EVERY_NTH}th corpus line")
    assert n > 800_000 // EVERY_NTH


@pytest.mark.parametrize("name", list(CONFIGS))
def test_offsets_trained_models_shared_corpora(shared_data, spm_models, name):
    tok, sp = load_pair(spm_models[name])
    compare_offsets(tok, sp, _nth_lines(shared_data), label=f"{name} on every {EVERY_NTH}th corpus line")


# ---------------------------------------------------------------------------------- details / API
def test_normalizer_alignment_matches_normalizer(spm_models):
    from nbtok.normalizers import sentencepiece as knorm
    from nbtok.normalizers.sentencepiece_offsets import normalized_with_alignment
    for name in CONFIGS:
        tok, _ = load_pair(spm_models[name])
        N = tok.model.N
        for text in EDGE_CASES + committed_lines()[::50]:
            raw = np.frombuffer(text.encode("utf-8"), np.uint8)
            out, n = knorm.normalize(raw, 0, raw.size, *N, np.empty(raw.size + 16, np.uint8))
            norm, n2o = normalized_with_alignment(raw, N)
            assert norm.tobytes() == out[:n].tobytes(), (name, text)
            assert n2o.size == norm.size + 1 and np.all(np.diff(n2o) >= 0) and n2o[-1] <= raw.size


def test_byte_fallback_offsets_quirk(spm_models):
    tok, sp = load_pair(spm_models["bpe_llama"])
    text = "a\U0001F642b"  # the emoji is not in the vocabulary: four byte pieces
    ids, st, en = tok.encode_with_offsets(text)
    proto = sp.encode(text, return_type="proto")
    assert ids.tolist() == [p.id for p in proto.pieces]
    raw = [(p.begin, p.end) for p in proto.pieces if sp.is_byte(p.id)]
    assert raw == [(1, 1), (1, 1), (1, 1), (1, 5)]  # sentencepiece: bytes of U+1F642
    byte_spans = [(s, e) for i, s, e in zip(ids.tolist(), st.tolist(), en.tolist()) if sp.is_byte(i)]
    assert byte_spans == [(1, 2)] * 4  # nbtok: the character, in characters


def test_offsets_examples(spm_models):
    tok, sp = load_pair(spm_models["uni_nmt"])
    # leading / repeated / trailing spaces are dropped; the dummy prefix starts at the text
    ids, st, en = tok.encode_with_offsets("   hello    world   ")
    pieces = [tok.id_to_piece(i) for i in ids.tolist()]
    spans = list(zip(st.tolist(), en.tolist()))
    assert pieces == sp.encode_as_pieces("   hello    world   ")
    assert spans[0][0] == 3 and spans[-1][1] == 17
    # unknown characters merge into one unk token spanning all of them
    text = "x\u16a0\u16a1\u16a2 y"
    ids, st, en = tok.encode_with_offsets(text)
    assert ids.tolist() == sp.encode(text)
    k = ids.tolist().index(sp.unk_id())
    assert (st[k], en[k]) == (1, 4)
    # bos / eos are (0, 0)
    ids, st, en = tok.encode_with_offsets("hello", add_bos=True, add_eos=True)
    assert ids.tolist() == sp.encode("hello", add_bos=True, add_eos=True)
    assert (st[0], en[0], st[-1], en[-1]) == (0, 0, 0, 0)
    assert list(zip(st[1:-1].tolist(), en[1:-1].tolist())) == reference_offsets(sp, "hello")[1]


def test_offsets_batch_padding_and_threads(spm_models):
    import numba
    tok, sp = load_pair(spm_models["uni_bf_nfkc"])
    lines = committed_lines()[:400] + EDGE_CASES + ["\ufdfa" * 40, "\u3300" * 30 + "x"]
    ids, off, st, en = tok.model.encode_batch_offsets(lines)
    ref = [reference_offsets(sp, t) for t in lines]
    for d, (rids, rspans) in enumerate(ref):
        assert ids[off[d]:off[d + 1]].tolist() == rids
        assert list(zip(st[off[d]:off[d + 1]].tolist(), en[off[d]:off[d + 1]].tolist())) == rspans
    for threads in (1, 2):
        old = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            again = tok.model.encode_batch_offsets(lines)
        finally:
            numba.set_num_threads(old)
        for a, b in zip(again, (ids, off, st, en)):
            assert np.array_equal(a, b)
    for side in ("right", "left"):
        batch = tok.encode_batch(lines, return_offsets=True, padding="longest", padding_side=side)
        assert batch.offsets.shape == batch.ids.shape + (2,)
        for d in range(len(lines)):
            mask = batch.attention_mask[d].astype(bool)
            assert batch.ids[d][mask].tolist() == ref[d][0]
            assert [tuple(x) for x in batch.offsets[d][mask].tolist()] == ref[d][1]
    cut = tok.encode_batch(lines, return_offsets=True, truncation=True, max_length=5)
    for d in range(len(lines)):
        row = cut[d].tolist()
        assert row == ref[d][0][:5]
    ragged = tok.encode_batch(lines, return_offsets=True)
    assert ragged.offsets.shape == (ids.size, 2)
    empty = tok.model.encode_batch_offsets([])
    assert empty[0].size == 0 and empty[1].tolist() == [0]
    with pytest.raises(TypeError):
        tok.model.encode_batch_offsets("not a list")


# ---------------------------------------------------------------------------------- n-best sampling
def _counts(draws):
    return collections.Counter(tuple(x) for x in draws)


@pytest.mark.parametrize("text,alpha,nbest", [("I saw a girl with a telescope.", 0.5, 8),
                                              ("New York", 1.0, 4), ("unbelievable", 0.2, 16),
                                              ("hello world", 0.0, 3)])
def test_nbest_sampling_matches_sentencepiece(spm_models, text, alpha, nbest):
    tok, sp = load_pair(spm_models["uni_nmt"])
    n = 4000
    tok.sample_encode(text, alpha=alpha, nbest_size=nbest, seed=12345)
    mine = _counts(tok.sample_encode(text, alpha=alpha, nbest_size=nbest).tolist() for _ in range(n))
    spm.set_random_generator_seed(12345)
    theirs = _counts(sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=nbest) for _ in range(n))
    # every draw is one of the n-best segmentations
    best = {tuple(x.tolist()) for x in tok.nbest_encode(text, nbest)}
    assert set(mine) <= best, set(mine) - best
    assert set(theirs) <= best | {tuple(x) for x in sp.nbest_encode(text, nbest_size=nbest)}
    # the expected probabilities: exp(alpha * score - Z) over the n-best scores
    ids, off, scores = tok.model._nbest_raw(text, nbest)
    p = np.exp(alpha * scores - np.logaddexp.reduce(alpha * scores))
    expected = {tuple(ids[off[j]:off[j + 1]].tolist()): p[j] for j in range(len(p))}
    # chi-square-like bound: each segmentation's frequency within 4.5 standard deviations
    for seg, pj in expected.items():
        sd = np.sqrt(pj * (1 - pj) / n) + 1e-9
        assert abs(mine[seg] / n - pj) <= 4.5 * sd + 1e-3, (seg, mine[seg] / n, pj)
        assert abs(theirs[seg] / n - pj) <= 4.5 * sd + 1e-3, (seg, theirs[seg] / n, pj)
    chi2 = sum((mine[s] - n * pj) ** 2 / (n * pj) for s, pj in expected.items() if n * pj >= 5)
    dof = sum(1 for pj in expected.values() if n * pj >= 5)
    assert chi2 < dof + 6 * np.sqrt(2 * max(dof, 1)) + 10, (chi2, dof)
    if alpha == 0.0:
        assert len(mine) == len(expected)  # uniform over the n-best


def test_nbest_sampling_edge_cases(spm_models):
    tok, sp = load_pair(spm_models["uni_nmt"])
    assert tok.sample_encode("", alpha=0.5, nbest_size=4).tolist() == []
    assert tok.sample_encode("   ", alpha=0.5, nbest_size=4).tolist() == sp.encode("   ")
    with pytest.raises(ValueError):
        tok.sample_encode("abc", alpha=0.5, nbest_size=513)
    ids = tok.sample_encode("hello", alpha=0.5, nbest_size=4, add_bos=True, add_eos=True).tolist()
    assert ids[0] == sp.bos_id() and ids[-1] == sp.eos_id()
    # seeded runs repeat
    a = [tok.sample_encode("I saw a girl", alpha=0.1, nbest_size=10, seed=7).tolist()] + \
        [tok.sample_encode("I saw a girl", alpha=0.1, nbest_size=10).tolist() for _ in range(20)]
    b = [tok.sample_encode("I saw a girl", alpha=0.1, nbest_size=10, seed=7).tolist()] + \
        [tok.sample_encode("I saw a girl", alpha=0.1, nbest_size=10).tolist() for _ in range(20)]
    assert a == b
