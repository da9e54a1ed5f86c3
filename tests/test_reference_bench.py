"""The benchmark reference algorithms must give the same tokens as nbtok's kernels.

The seed tables (asv_benchmarks/bench_seed_*.py) compare running times only; these tests
make sure every variant computes the same thing:

* the three reference BPE merge loops (asv_benchmarks/reference_bpe.py) against
  ``nbtok.models.bpe.merge.bpe_merge``, on random merge tables (always runs) and on a
  sentencepiece BPE model trained on tiny Shakespeare (also against ``sentencepiece``);
* the nested-loop Viterbi (asv_benchmarks/reference_unigram.py) against sentencepiece and
  nbtok's Unigram encoder, on the seed sentences and real text.
"""
import random
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from asv_benchmarks import _common  # noqa: E402
from asv_benchmarks import reference_bpe as R  # noqa: E402
from nbtok.kernels.hashmap import IntMap  # noqa: E402

SPACE = "\u2581"


# ---------------------------------------------------------------------- random merge tables
def random_table(seed, n_chars=5, n_merges=60, equal_rank_every=4):
    """A random merge table over the alphabet ▁ + n_chars letters.

    No merge takes a right part that contains ▁ (so pre-splitting before ▁ is exact), and
    every few merges share a rank (ties are broken by position)."""
    rng = random.Random(seed)
    strings = [SPACE] + [chr(ord("a") + i) for i in range(n_chars)]
    ids = {s: i for i, s in enumerate(strings)}
    keys, values = [], []
    rank = 0
    tries = 0
    while len(keys) < n_merges and tries < 10000:
        tries += 1
        left = rng.choice(strings)
        right = rng.choice(strings)
        merged = left + right
        if SPACE in right or merged in ids or len(merged) > 6:
            continue
        ids[merged] = len(strings)
        strings.append(merged)
        keys.append((ids[left] << 32) | ids[right])
        values.append((rank << 32) | ids[merged])
        if len(keys) % equal_rank_every:
            rank += 1
    table = IntMap.from_arrays(np.array(keys, np.int64), np.array(values, np.int64))
    return table, strings, n_chars


def random_input(rng, n, n_chars):
    chars = [SPACE] + [chr(ord("a") + i) for i in range(n_chars)]
    text = SPACE + "".join(rng.choice(chars) if rng.random() > 0.15 else SPACE for _ in range(n - 1))
    cps = np.frombuffer(text.encode("utf-32-le"), np.uint32)
    ids = np.array([chars.index(c) for c in text], np.int32)
    return cps, ids


@pytest.mark.parametrize("seed", range(12))
def test_reference_bpe_variants_match_bpe_merge_on_random_tables(seed):
    table, strings, n_chars = random_table(seed)
    rng = random.Random(1000 + seed)
    for n in [1, 2, 3, 5, 17, 64, 300]:
        cps, ids = random_input(rng, n, n_chars)
        expected = R.linked_list_bpe(ids, table.keys, table.values)
        for name in ["naive", "naive_presplit", "pq_tree"]:
            got = R.ALGORITHMS[name](cps, ids, table)
            assert got.dtype == np.int32
            assert got.tolist() == expected.tolist(), (name, n)
        # merged tokens spell the input
        assert "".join(strings[i] for i in expected) == "".join(strings[i] for i in ids)


def test_random_inputs_exercise_ties_and_merges():
    """The comparison has teeth: breaking ties to the right, or dropping the rank order,
    changes the output on these inputs."""
    table, strings, n_chars = random_table(3)
    # a table where every rank is the same: a different merge order
    flat_vals = table.values.copy()
    used = table.keys != -1
    flat_vals[used] = flat_vals[used] & 0xFFFFFFFF
    rng = random.Random(7)
    differs = 0
    merged_somewhere = 0
    for _ in range(20):
        cps, ids = random_input(rng, 200, n_chars)
        a = R.linked_list_bpe(ids, table.keys, table.values)
        b = R.naive_bpe(ids, table.keys, flat_vals)
        merged_somewhere += a.shape[0] < ids.shape[0]
        differs += a.tolist() != b.tolist()
    assert merged_somewhere == 20
    assert differs > 0


# ---------------------------------------------------------------------- sentencepiece BPE model
@pytest.fixture(scope="module")
def shakespeare_bpe():
    if _common.data_dir(required=False) is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA)")
    pytest.importorskip("sentencepiece")
    path = R.train_shakespeare_model(8000)
    return path, R.MergeTable.from_sentencepiece(path)


@pytest.mark.parametrize("n_lines", [1, 10, 100])
def test_seed_bpe_variants_equal_sentencepiece(shakespeare_bpe, n_lines):
    import sentencepiece as spm
    path, table = shakespeare_bpe
    sp = spm.SentencePieceProcessor(model_file=str(path))
    raw = " ".join(_common.lines("tinyshakespeare", n_lines))
    cps, ids = table.symbols(_common.sentencepiece_text(raw))
    expected = sp.encode(raw)
    for name, fn in R.ALGORITHMS.items():
        assert fn(cps, ids, table).tolist() == expected, name


def test_seed_bpe_other_text(shakespeare_bpe):
    """Text outside the training corpus (unknown characters included) still agrees."""
    import sentencepiece as spm
    path, table = shakespeare_bpe
    sp = spm.SentencePieceProcessor(model_file=str(path))
    for raw in _common.lines("botchan", 60, skip_empty=True) + ["naïve café — ünïcödé 東京 x"]:
        cps, ids = table.symbols(_common.sentencepiece_text(raw))
        expected = sp.encode(raw)
        for name, fn in R.ALGORITHMS.items():
            got = R.merge_unknowns(fn(cps, ids, table), table.unk_id)
            assert got.tolist() == expected, (name, raw)


# ---------------------------------------------------------------------- Unigram nested loop
UNIGRAM_MODELS = ["sp_unigram_test", "sp_unigram_wmtende", "sp_unigram_ja"]


def _unigram_texts():
    from asv_benchmarks import reference_unigram as U
    return ([U.seed_sentence("quick_fox"), U.seed_sentence("udhr_article1")]
            + _common.lines("botchan", 80, skip_empty=True)
            + _common.lines("wagahaiwa", 40, skip_empty=True)
            + ["x", "  spaced   out  ", "emoji 🙂 and 東京 and ǅ"])


@pytest.mark.parametrize("model", UNIGRAM_MODELS)
def test_nested_loop_viterbi_equals_sentencepiece(model):
    if _common.data_dir(required=False) is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA)")
    spm = pytest.importorskip("sentencepiece")
    from asv_benchmarks import reference_unigram as U
    path = _common.model_path(model)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    ref = U.NestedLoopUnigram.from_sentencepiece(path)
    for text in _unigram_texts():
        assert ref.encode(sp.normalize(text)).tolist() == sp.encode(text), text


@pytest.mark.parametrize("model", UNIGRAM_MODELS)
def test_nested_loop_viterbi_equals_nbtok_unigram(model):
    if _common.data_dir(required=False) is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA)")
    import nbtok
    from asv_benchmarks import reference_unigram as U
    try:
        tok = nbtok.Tokenizer.from_sentencepiece(str(_common.model_path(model)))
    except (ImportError, NotImplementedError) as exc:
        pytest.skip(f"nbtok's SentencePiece model is not available yet ({exc})")
    ref = U.NestedLoopUnigram.from_nbtok(tok.model)
    normalize = getattr(tok.model, "normalize", None)
    spm = pytest.importorskip("sentencepiece") if normalize is None else None
    sp = spm.SentencePieceProcessor(model_file=str(_common.model_path(model))) if spm else None
    for text in _unigram_texts():
        normalized = sp.normalize(text) if sp is not None else _as_str(normalize(text))
        assert ref.encode(normalized).tolist() == tok.encode(text).tolist(), text


def _as_str(x):
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else str(x)


def test_nested_loop_viterbi_tie_goes_to_earliest_start():
    """Hand-made vocabulary: 'ab'+'c' and 'a'+'bc' score the same; sentencepiece keeps the
    candidate found first for an end position, i.e. the earliest start ('a', 'bc')."""
    from asv_benchmarks import reference_unigram as U
    pieces = ["<unk>", "a", "b", "c", "ab", "bc"]
    scores = [0.0, -1.0, -3.0, -1.5, -1.5, -2.0]  # a+bc = ab+c = -3 exactly in float32
    kinds = [U.UNKNOWN, U.NORMAL, U.NORMAL, U.NORMAL, U.NORMAL, U.NORMAL]
    ref = U.NestedLoopUnigram(pieces, scores, kinds, 0)
    assert [pieces[i] for i in ref.encode("abc")] == ["a", "bc"]
    # unknown characters become one merged <unk>
    assert [pieces[i] for i in ref.encode("xyza")] == ["<unk>", "a"]


def test_seed_bpe_variants_equal_nbtok_sentencepiece_bpe(shakespeare_bpe):
    """nbtok's own SentencePiece BPE encoder on the same model gives the same ids."""
    import nbtok
    path, table = shakespeare_bpe
    try:
        tok = nbtok.Tokenizer.from_sentencepiece(str(path))
    except (ImportError, NotImplementedError) as exc:
        pytest.skip(f"nbtok's SentencePiece model is not available yet ({exc})")
    for n_lines in [1, 10, 100]:
        raw = " ".join(_common.lines("tinyshakespeare", n_lines))
        cps, ids = table.symbols(_common.sentencepiece_text(raw))
        expected = tok.encode(raw).tolist()
        for name, fn in R.ALGORITHMS.items():
            assert R.merge_unknowns(fn(cps, ids, table), table.unk_id).tolist() == expected, (name, n_lines)


def test_merge_table_from_nbtok_equals_from_sentencepiece(shakespeare_bpe):
    """The seed table's merge table read through nbtok's model object is the same table."""
    import nbtok
    path, table = shakespeare_bpe
    try:
        model = nbtok.Tokenizer.from_sentencepiece(str(path)).model
    except (ImportError, NotImplementedError) as exc:
        pytest.skip(f"nbtok's SentencePiece model is not available yet ({exc})")
    other = R.MergeTable.from_nbtok(model)
    assert other.pieces == table.pieces and other.char_id == table.char_id
    used = table.keys != -1
    assert sorted(zip(table.keys[used].tolist(), table.values[used].tolist())) == \
        sorted(zip(other.keys[other.keys != -1].tolist(), other.values[other.keys != -1].tolist()))
