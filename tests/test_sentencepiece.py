"""SentencePiece models: parity with the ``sentencepiece`` library itself.

Models are trained here with ``sentencepiece`` on the committed text under ``tests/data/spm``
(cached once per session) to cover unigram / bpe, byte_fallback on / off, the normalization
rules (nmt_nfkc, nfkc, nmt_nfkc_cf, identity), add_dummy_prefix / remove_extra_whitespaces off,
treat_whitespace_as_suffix, split_digits, user-defined and control symbols and a 32k
vocabulary. Full-corpus parity over ``../shared/data`` is in ``test_sentencepiece_corpora.py``.
"""
import io
import itertools
import random

import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import nbtok  # noqa: E402
from conftest import FIXTURES  # noqa: E402

SPM_DATA = FIXTURES / "spm"

CONFIGS = {
    "uni_nmt": dict(model_type="unigram", vocab_size=2000),
    "uni_bf_nfkc": dict(model_type="unigram", vocab_size=3000, byte_fallback=True,
                        normalization_rule_name="nfkc", character_coverage=0.98),
    "uni_cf_raw": dict(model_type="unigram", vocab_size=2000, normalization_rule_name="nmt_nfkc_cf",
                       add_dummy_prefix=False, remove_extra_whitespaces=False),
    "uni_identity_suffix": dict(model_type="unigram", vocab_size=2000, normalization_rule_name="identity",
                                treat_whitespace_as_suffix=True, split_digits=True),
    "uni_symbols": dict(model_type="unigram", vocab_size=2000,
                        user_defined_symbols=["<sep>", "<mask>", "ing", "\u2581the", "\U0001F642"],
                        control_symbols=["<ctl>", "<2ja>"], pad_id=3),
    "bpe_llama": dict(model_type="bpe", vocab_size=4000, byte_fallback=True, split_digits=True,
                      normalization_rule_name="identity", remove_extra_whitespaces=False,
                      allow_whitespace_only_pieces=True),
    "bpe_nmt": dict(model_type="bpe", vocab_size=2000),
    "bpe_suffix_symbols": dict(model_type="bpe", vocab_size=2000, treat_whitespace_as_suffix=True,
                               user_defined_symbols=["<sep>", "ing", "ab"], control_symbols=["<ctl>"],
                               normalization_rule_name="nfkc", add_dummy_prefix=False),
    # user-defined symbols as in Gemma's model (whitespace runs, newlines, markup) and ones that
    # start with a character the normalizer's fast paths copy (Cyrillic, CJK, fullwidth)
    "bpe_symbols": dict(model_type="bpe", vocab_size=3000, byte_fallback=True, split_digits=True,
                        normalization_rule_name="identity", remove_extra_whitespaces=False,
                        user_defined_symbols=["<mask>", "<start_of_turn>", "\u2581\u2581", "\u2581\u2581\u2581", "\n",
                                              "\n\n", "ing", "ab", "\u0439", "\u65e5\u672c", "\uff0c"]),
    "bpe_32k": dict(model_type="bpe", vocab_size=32000, hard_vocab_limit=False, byte_fallback=True),
    "uni_32k": dict(model_type="unigram", vocab_size=32000, hard_vocab_limit=False),
}

EDGE_CASES = [
    "", " ", "   ", "\t", "\n\n", "a", " a", "a ", "  hello   world  ", "Hello, World!",
    "\u2581", "a\u2581b", "\u2581\u2581x", "x\u2581", "\u3000full\u3000width\u3000", "ｈｅｌｌｏ　ＷＯＲＬＤ",
    "ﬁﬂ ① ㍿ ™ ½", "e\u0301 a\u0308 \u0301\u0301", "\u200b\u200c\u200d", "\ufeffbom", "\ufffd", "\x00a\x00",
    "\x01\x02abc\x7f", "tab\tsep\tline", "\U0001F44D\U0001F3FD \U0001F468\u200d\U0001F469\u200d\U0001F467",
    "<sep>foo<sep>", "<ctl> <s> </s> <unk> <pad>", "<mask>ing<mask>", "abababab", "the thethe\u2581the",
    "日本語のテキストです。", "吾輩は猫である。名前はまだ無い。", "Привет, мир!", "नमस्ते दुनिया",
    "مرحبا بالعالم", "สวัสดีชาวโลก", "Tiếng Việt có dấu", "1234567890 3.14159 1,000,000",
    "a" * 300, "\u00e9" * 100, " " * 50 + "x" + " " * 50, "..........", "\U00010000\U0010FFFF",
    "\uFF5E ~ \u301C", "İstanbul ǅ ß ẞ", "\u1100\u1161\u11a8 \uac01",
]


def fixture_lines():
    lines = []
    for path in sorted(SPM_DATA.glob("*.txt")):
        lines.extend(path.read_bytes().decode("utf-8", errors="replace").splitlines())
    return lines


def train(path, lines, **kw):
    spm.set_random_generator_seed(1)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, minloglevel=2,
                                   num_threads=2, **kw)
    path.write_bytes(model.getvalue())


@pytest.fixture(scope="session")
def spm_models(tmp_path_factory):
    """name -> path of a model trained by sentencepiece on the committed text (shared cache)."""
    root = tmp_path_factory.getbasetemp() / "spm_models"
    root.mkdir(exist_ok=True)
    lines = None
    paths = {}
    for name, kw in CONFIGS.items():
        path = root / f"{name}.model"
        if not path.exists():
            lines = lines if lines is not None else fixture_lines()
            train(path, lines, **kw)
        paths[name] = path
    return paths


def load_pair(path):
    return nbtok.Tokenizer.from_sentencepiece(str(path)), spm.SentencePieceProcessor(model_file=str(path))


def ragged(lists):
    lens = np.fromiter(map(len, lists), np.int64, len(lists))
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    flat = np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(offsets[-1]))
    return flat, offsets


def count_mismatches(ids, offsets, ref_flat, ref_offsets):
    """Number of documents whose id sequences differ."""
    n = offsets.size - 1
    if np.array_equal(offsets, ref_offsets):
        diff = np.flatnonzero(ids != ref_flat)
        return int(np.unique(np.searchsorted(offsets, diff, side="right") - 1).size)
    bad = 0
    for d in range(n):
        if not np.array_equal(ids[offsets[d]:offsets[d + 1]], ref_flat[ref_offsets[d]:ref_offsets[d + 1]]):
            bad += 1
    return bad


def assert_batch_parity(tok, sp, lines, decode=True, label=""):
    ids, offsets = tok.encode_batch_ragged(lines)
    ref = sp.encode(lines)
    ref_flat, ref_off = ragged(ref)
    bad = count_mismatches(ids, offsets, ref_flat, ref_off)
    assert len(lines) > 0
    assert bad == 0, f"{label}: {bad} of {len(lines)} documents differ in ids"
    if decode:
        mine = tok.model.decode_ragged(ref_flat, ref_off)
        theirs = sp.decode(ref)
        bad_dec = sum(a != b for a, b in zip(mine, theirs))
        assert bad_dec == 0, f"{label}: {bad_dec} of {len(lines)} documents differ when decoded"
    return len(lines)


# ---------------------------------------------------------------------------------- parity
@pytest.mark.parametrize("name", list(CONFIGS))
def test_parity_on_committed_text(spm_models, name):
    tok, sp = load_pair(spm_models[name])
    lines = fixture_lines()
    n = assert_batch_parity(tok, sp, lines, label=name)
    assert n > 5000
    # pieces on a sample, and single-document encode == batch encode
    for line in lines[:200] + lines[-50:]:
        assert tok.encode_as_pieces(line) == sp.encode_as_pieces(line), line
        assert tok.encode(line).tolist() == sp.encode(line), line


@pytest.mark.parametrize("name", list(CONFIGS))
def test_parity_edge_cases(spm_models, name):
    tok, sp = load_pair(spm_models[name])
    for text in EDGE_CASES:
        ids = sp.encode(text)
        assert tok.encode(text).tolist() == ids, repr(text)
        assert tok.encode_as_pieces(text) == sp.encode_as_pieces(text), repr(text)
        assert tok.decode(ids) == sp.decode(ids), repr(text)
        assert tok.encode(text, add_bos=True, add_eos=True).tolist() == sp.encode(text, add_bos=True, add_eos=True)
    assert_batch_parity(tok, sp, EDGE_CASES, label=name)


def test_bpe_word_loop_between_user_defined_symbols(spm_models):
    """A prefix-whitespace BPE model with user-defined symbols takes the word loop: the symbols
    (whitespace runs, newlines, markup, a Cyrillic letter, two ideographs, fullwidth comma),
    matched where the initial split reaches them, cut the text; batch, single and pieces agree."""
    tok, sp = load_pair(spm_models["bpe_symbols"])
    assert tok.model.fast_words
    bits = ["<mask>", "<start_of_turn>", "  ", "   ", "\n", "\n\n\n", "ing", "ab", "\u0439", "\u65e5\u672c", "\uff0c",
            " ", "x", "\u2581", "<", "<ma"]
    rng = np.random.default_rng(7)
    lines = fixture_lines()[:3000]
    docs = ["".join(rng.choice(bits, 12)) for _ in range(500)]
    docs += [a + rng.choice(bits) + b for a, b in zip(lines[::2], lines[1::2])]
    docs += ["\n".join(lines[i:i + 400]) for i in range(0, 3000, 400)]  # long documents
    assert_batch_parity(tok, sp, docs, label="bpe_symbols")
    for text in docs[:600]:
        assert tok.encode(text).tolist() == sp.encode(text), repr(text)
        assert tok.encode_as_pieces(text) == sp.encode_as_pieces(text), repr(text)


def test_bpe_word_loop_with_pieces_across_indentation(spm_models, tmp_path):
    """Code models (InternLM) have pieces with U+2581 after a tab or newline ('\\t▁▁▁',
    '\\n▁▁▁▁\\n'): the word loop starts no word at a U+2581 after those bytes (``build_joins``)
    and keeps to sentencepiece's ids; a piece with U+2581 after a non-ASCII character sends the
    model to the merge-table path."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString(spm_models["bpe_llama"].read_bytes())
    low = min(p.score for p in proto.pieces if p.type == 1)
    for k, piece in enumerate(["\t\u2581", "\t\u2581\u2581\u2581", "\n\u2581\u2581\u2581\u2581\n", "\u2581\u2581\n\u2581\u2581",
                               "\t\t\u2581", ")\u2581", "\t\u2581\u2581\u2581\u2581\t"]):
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, low - 1 - k, 1
    proto.trainer_spec.vocab_size = len(proto.pieces)
    path = tmp_path / "indent.model"
    path.write_bytes(proto.SerializeToString())
    tok, sp = load_pair(path)
    assert tok.model.fast_words and not tok.model._words_ok
    from pathlib import Path
    code = [f.read_text() for f in sorted((Path(nbtok.__file__).parent / "models").glob("*.py"))[:5]]
    docs = code + [c.replace("    ", "\t") for c in code] + [x for c in code for x in c.splitlines(True)][:4000]
    docs += ["\t\t  x\n\n  \t y", "\n    \n", "a\t    b", "f(x) (y)  z", "\t", " \t ", "\u3042 \t  \u3044"]
    assert_batch_parity(tok, sp, docs, label="indent")
    for text in docs[-7:] + docs[:3]:
        assert tok.encode(text).tolist() == sp.encode(text), repr(text)
    entry = proto.pieces.add()
    entry.piece, entry.score, entry.type = "\u00e9\u2581", low - 20, 1
    proto.trainer_spec.vocab_size = len(proto.pieces)
    path.write_bytes(proto.SerializeToString())
    tok, sp = load_pair(path)
    assert not tok.model.fast_words
    assert_batch_parity(tok, sp, docs[-7:] + ["caf\u00e9 au lait"], label="indent, non-ASCII")


def test_long_pieces_exist(spm_models):
    tok, sp = load_pair(spm_models["bpe_32k"])
    assert tok.vocab_size == sp.get_piece_size() >= 30000
    assert max(len(sp.id_to_piece(i)) for i in range(sp.get_piece_size())) >= 12


SPECIAL_BITS = [" ", "  ", "\t", "\n", "\u3000", "\u2581", "\u0301", "\u0308", "\u200b", "\u2460", "\ufb01",
                "<sep>", "<ctl>", "<s>", "<mask>", "ing", "ab", "\ufffd", "\x00", "123", "\uff21", "\U0001F642",
                "\u00a0", "\u2028", "\ud7a3", "\U000E0001", "...", "\n\n\n", "<start_of_turn>", "\u0439",
                "\u65e5\u672c", "\uff0c"]
TEXTS = st.lists(st.one_of(st.text(st.characters(blacklist_categories=("Cs",)), max_size=6),
                           st.text(st.characters(min_codepoint=0x20, max_codepoint=0x24F), max_size=10),
                           st.sampled_from(SPECIAL_BITS)), max_size=14).map("".join)


@pytest.mark.parametrize("name", ["uni_symbols", "uni_cf_raw", "bpe_llama", "bpe_suffix_symbols", "uni_bf_nfkc",
                                  "bpe_symbols"])
def test_hypothesis_parity(spm_models, name):
    tok, sp = load_pair(spm_models[name])

    @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    def check(text):
        ids = sp.encode(text)
        assert tok.encode(text).tolist() == ids
        assert tok.encode_as_pieces(text) == sp.encode_as_pieces(text)
        assert tok.decode(ids) == sp.decode(ids)

    check()


# characters the normalizer's fast paths tell apart: Cyrillic letters and kana (rules start with
# them, continued by a combining mark), those marks, fullwidth punctuation (a rule of its own),
# CJK ideographs, Greek, spaces; in runs long enough for the six-byte blocks
FAST_PATH_TEXTS = st.text(alphabet=st.sampled_from(
    list("абвгдеийклмнопрстуёЙ") + list("かがきぎくぐはばぱ") + ["\u0301", "\u0306", "\u0308", "\u3099", "\u309a"]
    + list("，；：！（）") + list("日本語中文") + list("αβγδ") + [" ", "a", "b", "\u3000", "1"]), max_size=80)


@pytest.mark.parametrize("name", ["uni_nmt", "uni_bf_nfkc", "uni_cf_raw", "bpe_suffix_symbols", "uni_32k",
                                  "bpe_symbols", "uni_symbols"])
def test_normalizer_fast_paths_hypothesis(spm_models, name):
    tok, sp = load_pair(spm_models[name])

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(FAST_PATH_TEXTS, min_size=1, max_size=4))
    def check(texts):
        ref = sp.encode(texts)
        assert [tok.encode(t).tolist() for t in texts] == ref
        ids, offsets = tok.encode_batch_ragged(texts)
        assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(texts))] == ref

    check()


def ascii_word_cases():
    """Runs of printable ASCII of every length around the normalizer's 8-byte step, ended by a
    space, the text's end, a control byte, DEL or a non-ASCII character, and letters that start
    compositions (e + U+0301) at every offset of a run."""
    letters = "abcdefghijklmnopqrstuvwxyzAEIOU.,;'\"!?-(0123)~aeiou<"
    cases = []
    for n in range(1, 19):
        w = "".join(letters[(7 * i + n) % len(letters)] for i in range(n))
        cases += [w, w + " " + w, "  " + w + "   " + w + " ", w + "\u0301", w + "\u0308x", w + "\x7f" + w,
                  w + "\t" + w, w + "\u00e9" + w, w + "\u2019s", w + "\u2581" + w, w + "\x00"]
        cases += [w[:k] + "e\u0301" + w[k:] for k in range(n + 1)]
    return cases


ASCII_WORDS = st.lists(st.sampled_from(list("abeiouyzAE.'!~ \t\x7f\u0301\u0308\u00e9<") + ["<sep>", "<mask>", "ing"]),
                       max_size=40).map("".join)


# whether the normalizer copies printable ASCII eight bytes at a time: not when a rule starts
# with a printable byte (case folding maps A-Z); where user-defined symbols start with a
# printable byte ("ing", "<sep>"), the step stops before those bytes (listed: the value)
WORD_STEP = {"uni_nmt": 1, "bpe_llama": 1, "uni_bf_nfkc": 1, "uni_cf_raw": 0, "uni_symbols": "<i",
             "bpe_symbols": "<ai"}


@pytest.mark.parametrize("name", list(WORD_STEP))
def test_ascii_word_step(spm_models, name):
    from nbtok.normalizers.sentencepiece import ASCII_WORDS as FLAG, UD_ASCII
    tok, sp = load_pair(spm_models[name])
    cls = tok.model.N[6]
    assert cls[FLAG] == bool(WORD_STEP[name])
    stops = WORD_STEP[name] if isinstance(WORD_STEP[name], str) else ""
    assert bytes(cls[UD_ASCII + 1:UD_ASCII + 1 + int(cls[UD_ASCII])]).decode() == stops
    cases = ascii_word_cases()
    assert [tok.encode(x).tolist() for x in cases] == sp.encode(cases)
    assert_batch_parity(tok, sp, cases, label=name)

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(ASCII_WORDS)
    def check(text):
        assert tok.encode(text).tolist() == sp.encode(text)

    check()


def test_identity_space_rule_takes_the_ascii_step():
    """An older nmt_nfkc charsmap (tflite-support's model) has the rule ' ' -> ' ': the space
    then counts as a plain one, and ASCII words take the 8-byte step, with sentencepiece's ids."""
    from conftest import shared_data_dir
    from nbtok.normalizers.sentencepiece import ASCII_WORDS as FLAG
    root = shared_data_dir()
    path = root / "zoo" / "sentencepiece-test" / "tflite-support-sentencepiece.model" if root else None
    if path is None or not path.is_file():
        pytest.skip("the shared zoo's tflite-support model is absent")
    tok, sp = load_pair(path)
    assert tok.model.N[2][0x20] and tok.model.N[6][0x20] == 2 and tok.model.N[6][FLAG] == 1
    cases = ascii_word_cases() + EDGE_CASES + ["  a  b  ", " \u0301x", "a \u0308", "x \u3000 y", " \t \n "]
    assert [tok.encode(x).tolist() for x in cases] == sp.encode(cases)
    assert_batch_parity(tok, sp, cases + fixture_lines()[:3000], label="tflite")

    @settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
    @given(TEXTS)
    def check(text):
        assert tok.encode(text).tolist() == sp.encode(text)

    check()


def test_single_character_rules_take_the_fast_path(spm_models):
    """A character whose only charsmap rule is itself (fullwidth punctuation: U+FF0C -> ',') is
    replaced by the normalizer's fast path; one whose rule writes a space (U+3000) or that starts
    longer rules is not."""
    from nbtok.normalizers.sentencepiece import PLAIN_OFF, REPLACED_OFF
    for name in ("uni_nmt", "uni_bf_nfkc", "uni_cf_raw"):
        tok, sp = load_pair(spm_models[name])
        cls = tok.model.N[6]
        assert cls[PLAIN_OFF + 0xFF0C] & 8 and cls[REPLACED_OFF + 4 * 0xFF0C:][:2].tolist() == [1, ord(",")]
        assert not cls[PLAIN_OFF + 0x3000] & 8
        assert cls[PLAIN_OFF + ord("й")] & 8 == 0
        lines = ["床前明月光，疑是地上霜；举头望明月：低头思故乡？", "（括号）［方括号］＃１２３！",
                 "，，，", "a，b　c，　，d", "Ｈｅｌｌｏ，ｗｏｒｌｄ！", "\u2160\u2161 \u00bd\u2122，"]
        assert [tok.encode(x).tolist() for x in lines] == sp.encode(lines)
        assert_batch_parity(tok, sp, lines * 30, label=name)


# ---------------------------------------------------------------------------------- API
def test_vocabulary_api(spm_models):
    tok, sp = load_pair(spm_models["uni_symbols"])
    assert tok.vocab_size == sp.get_piece_size()
    for i in range(sp.get_piece_size()):
        assert tok.id_to_piece(i) == sp.id_to_piece(i)
        assert tok.piece_to_id(sp.id_to_piece(i)) == sp.piece_to_id(sp.id_to_piece(i))
    assert tok.piece_to_id("definitely-not-a-piece") == sp.piece_to_id("definitely-not-a-piece") == sp.unk_id()
    with pytest.raises(ValueError, match=f"token id {sp.get_piece_size()} is not in the vocabulary"):
        tok.id_to_piece(sp.get_piece_size())
    with pytest.raises(ValueError):
        tok.decode([sp.get_piece_size()])
    with pytest.raises(TypeError):
        tok.encode(123)


def test_batch_matches_single_and_threads(spm_models):
    import numba
    tok, sp = load_pair(spm_models["bpe_llama"])
    lines = fixture_lines()[:3000] + EDGE_CASES
    ref = [tok.encode(x).tolist() for x in lines]
    for threads in (1, 2):
        old = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            got = tok.encode_batch(lines)
        finally:
            numba.set_num_threads(old)
        assert [g.tolist() for g in got] == ref
    ids, offsets = tok.encode_batch_ragged([])
    assert ids.size == 0 and offsets.tolist() == [0]


# ---------------------------------------------------------------------------------- word cache
def hand_made_unigram(spm_models, path, pieces):
    """A Unigram model with these (piece, score) NORMAL pieces, after <unk>, <s>, </s>, and the
    normalizer of a trained one."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    proto = pb.ModelProto()
    proto.ParseFromString(spm_models["uni_nmt"].read_bytes())
    del proto.pieces[:]
    for piece, score, kind in [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)] + [(p, s, 1) for p, s in pieces]:
        entry = proto.pieces.add()
        entry.piece, entry.score, entry.type = piece, score, kind
    proto.trainer_spec.vocab_size = len(proto.pieces)
    path.write_bytes(proto.SerializeToString())
    return load_pair(path)


def test_word_cache_replays_a_path_only_where_rounding_cannot_change_it(spm_models, tmp_path):
    """Alone, '▁a' + 'b' beats '▁ab' by 0.001. After 6000 words of score -10, float32
    rounds both to -60003, and sentencepiece gives the tie to the earlier start: '▁ab'.
    The batch's word cache meets 'ab' in a short document first (and caches '▁a b'), then in
    long ones, where it must not replay that path (the margin is below the rounding bound there)."""
    from nbtok.models.unigram import words as kwords
    tok, sp = hand_made_unigram(spm_models, tmp_path / "tie.model", [
        ("▁", -20.0), ("a", -20.0), ("z", -20.0), ("b", -1.5), ("▁a", -1.5), ("▁ab", -3.001),
        ("▁zz", -10.0)])
    short, long = "ab ab ab ab", "zz " * 6000 + "ab ab ab"
    assert sp.encode_as_pieces(short) == ["▁a", "b"] * 4
    assert sp.encode_as_pieces(long)[-3:] == ["▁ab"] * 3
    docs = [short] + [long] * 4
    assert tok.model.word_score_bound == 30.0  # |min score - 10|
    assert kwords.word_slots(sum(map(len, docs))) > 0  # one worker: the cache is on
    ids, offsets = tok.encode_batch_ragged(docs, num_threads=1)
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == sp.encode(docs)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_word_cache_on_ties_and_near_ties(spm_models, tmp_path, seed):
    """Every piece over {a, b, c} up to 3 letters, with and without U+2581, scored on a coarse
    grid plus offsets of 0, 1e-4 or 1e-2 (exact ties, near-ties that rounding decides once the
    running score passes about 1000, clear wins). Short documents first, so that the cache
    learns its words where rounding is fine, then long ones (running scores to about -30,000)."""
    rng = random.Random(seed)
    letters = [""] + ["".join(t) for k in (1, 2, 3) for t in itertools.product("abc", repeat=k)]
    pieces = [(p, -rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.0]) - rng.choice([0.0, 1e-4, 1e-2]))
              for w in letters for p in (w, "\u2581" + w) if p]
    tok, sp = hand_made_unigram(spm_models, tmp_path / "grid.model", pieces)
    assert tok.model.word_score_bound >= 0
    word = lambda: "".join(rng.choice("abc") for _ in range(rng.randint(1, 5)))
    docs = [" ".join(word() for _ in range(n)) for n in [20] * 300 + [3000] * 12]
    ids, offsets = tok.encode_batch_ragged(docs, num_threads=1)
    assert sum(map(len, docs)) > 64 * 1024
    ref_flat, ref_off = ragged(sp.encode(docs))
    assert count_mismatches(ids, offsets, ref_flat, ref_off) == 0


def test_word_cache_only_where_no_piece_crosses_a_word_start(spm_models, tmp_path):
    assert load_pair(spm_models["uni_nmt"])[0].model.word_score_bound >= 0
    assert load_pair(spm_models["uni_symbols"])[0].model.word_score_bound >= 0  # '▁the' starts with it
    assert load_pair(spm_models["uni_identity_suffix"])[0].model.word_score_bound == -1  # 'word▁'
    base = [("▁", -5.0), ("a", -5.0), ("b", -5.0), ("▁a", -3.0)]
    for piece in ("a\u2581", "a\u2581b", "\u2581\u2581"):
        tok, sp = hand_made_unigram(spm_models, tmp_path / "cross.model", base + [(piece, -1.0)])
        assert tok.model.word_score_bound == -1, repr(piece)
        docs = ["a b a ab ba " * 20] * 400
        ids, offsets = tok.encode_batch_ragged(docs, num_threads=1)
        assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == sp.encode(docs)


def test_word_cache_batches_repeat_and_run_concurrently(spm_models):
    """The workers' cache buffers are reused from call to call and never shared by two calls."""
    from concurrent.futures import ThreadPoolExecutor
    tok, sp = load_pair(spm_models["uni_32k"])
    lines = fixture_lines()
    ref = ragged(sp.encode(lines))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: tok.encode_batch_ragged(lines), range(8)))
    for ids, offsets in results:
        assert count_mismatches(ids, offsets, *ref) == 0


def test_batch_overflow_fallback(spm_models, monkeypatch):
    # NFKC expands U+FDFA (3 bytes) into 33 bytes: more ids than the room of the chunk, so the
    # batch kernel gives those documents up and they are encoded one at a time and spliced in
    tok, sp = load_pair(spm_models["uni_bf_nfkc"])
    lines = ["first", "\ufdfa" * 40, "plain", "\u3300" * 30 + "x", "\ufdfa" * 50, "last"]
    redone = []
    encode = tok.model.encode
    monkeypatch.setattr(tok.model, "encode", lambda text, *a, **k: redone.append(text) or encode(text, *a, **k))
    ids, offsets = tok.encode_batch_ragged(lines)
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(lines))] == sp.encode(lines)
    assert "\ufdfa" * 50 in redone


def test_save_sentencepiece_roundtrip(spm_models, tmp_path):
    lines = fixture_lines()[:500] + EDGE_CASES
    for name in ("uni_symbols", "bpe_llama"):
        tok, sp = load_pair(spm_models[name])
        out = tmp_path / f"{name}.model"
        tok.save_sentencepiece(str(out))
        sp2 = spm.SentencePieceProcessor(model_file=str(out))
        assert sp2.encode(lines) == sp.encode(lines)
        assert sp2.get_piece_size() == sp.get_piece_size()
        tok2 = nbtok.Tokenizer.from_sentencepiece(str(out))
        assert [x.tolist() for x in tok2.encode_batch(lines)] == sp.encode(lines)


def test_pickle_roundtrip(spm_models):
    import pickle
    tok, sp = load_pair(spm_models["uni_nmt"])
    tok2 = pickle.loads(pickle.dumps(tok))
    assert tok2.encode("Hello world, again.").tolist() == sp.encode("Hello world, again.")


# ---------------------------------------------------------------------------------- corrupt files
def test_corrupt_models_raise_value_error(spm_models, tmp_path):
    data = spm_models["uni_symbols"].read_bytes()
    rng = random.Random(0)
    cuts = sorted({rng.randrange(1, len(data)) for _ in range(60)} | {1, 2, 5, 100, len(data) - 1})
    candidates = [data[:c] for c in cuts] + [b"", b"\x00" * 64, bytes(rng.randrange(256) for _ in range(2000))]
    for _ in range(60):
        b = bytearray(data)
        for _ in range(rng.randrange(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        candidates.append(bytes(b))
    raised = 0
    for i, blob in enumerate(candidates):
        path = tmp_path / f"c{i}.model"
        path.write_bytes(blob)
        try:
            tok = nbtok.Tokenizer.from_sentencepiece(str(path))
        except ValueError:
            raised += 1
            continue
        # a file that still parses must encode without crashing
        for text in ("Hello world", "日本語 ﬁ ①", ""):
            tok.encode(text)
            tok.decode(tok.encode(text))
    assert raised >= len(cuts)  # every truncation is detected


def test_charsmap_validation():
    from nbtok.normalizers.sentencepiece import decode_charsmap
    with pytest.raises(ValueError):
        decode_charsmap(b"\x01\x00")
    with pytest.raises(ValueError):
        decode_charsmap((1000).to_bytes(4, "little") + b"\x00" * 16)
    # a leaf value pointing past the pool
    with pytest.raises(ValueError):
        decode_charsmap((4).to_bytes(4, "little") + (0x80000000 | 999).to_bytes(4, "little") + b"ab\x00")
    units, pool = decode_charsmap(b"")
    assert units.size == 0


# ---------------------------------------------------------------------------------- worst case
def test_worst_case_inputs_match(spm_models):
    """1 MB without spaces (Japanese; one repeated character) is one long sequence for the merge
    loop and the lattice: ids equal sentencepiece's. Growth of the time (N log N for BPE, linear
    for Unigram) is measured by asv_benchmarks/bench_sentencepiece.py WorstCase; tests do not time."""
    ja = (SPM_DATA / "wagahaiwa_nekodearu_head.txt").read_text(encoding="utf-8").replace("\r\n", "").replace(" ", "")
    ja = (ja * (1_100_000 // len(ja.encode()) + 1))
    for name in ("bpe_32k", "uni_32k"):
        tok, sp = load_pair(spm_models[name])
        for base in (ja, "\u3042" * 400_000):
            big = base.encode()[:1_000_000].decode("utf-8", "ignore")
            assert tok.encode(big).tolist() == sp.encode(big), name


# ---------------------------------------------------------------------------------- sampling
def _chi_square_ok(counts, probs, n):
    """Pearson's chi-square goodness of fit of ``counts`` (n draws) to ``probs``, bins with an
    expected count under 5 pooled; True unless the fit is rejected at p = 0.001 (Wilson-Hilferty
    approximation of the critical value)."""
    expected = {k: p * n for k, p in probs.items()}
    big = [k for k, e in expected.items() if e >= 5]
    stat = sum((counts.get(k, 0) - expected[k]) ** 2 / expected[k] for k in big)
    rest_e = n - sum(expected[k] for k in big)
    rest_o = n - sum(counts.get(k, 0) for k in big)
    df = len(big) - 1
    if rest_e >= 5:
        stat += (rest_o - rest_e) ** 2 / rest_e
        df += 1
    critical = df * (1 - 2 / (9 * df) + 3.09 * (2 / (9 * df)) ** 0.5) ** 3
    return stat < critical, stat, critical


@pytest.mark.parametrize("name, nbest_size", [("uni_nmt", -1), ("uni_nmt", 4), ("bpe_nmt", -1)])
def test_seeded_batch_sampling_equals_the_single_calls(spm_models, name, nbest_size):
    tok, _ = load_pair(spm_models[name])
    texts = fixture_lines()[:40] + ["", "I saw a girl with a telescope.", "日本語 🙃"]
    batch = tok.sample_encode_batch(texts, alpha=0.3, nbest_size=nbest_size, seed=1234, add_eos=True)
    single = [tok.sample_encode(t, alpha=0.3, nbest_size=nbest_size, seed=1234 + i, add_eos=True) for i, t in enumerate(texts)]
    assert [b.tolist() for b in batch] == [s.tolist() for s in single]
    again = tok.sample_encode_batch(texts, alpha=0.3, nbest_size=nbest_size, seed=1234, add_eos=True)
    assert [b.tolist() for b in again] == [b.tolist() for b in batch]
    other = tok.sample_encode_batch(texts, alpha=0.3, nbest_size=nbest_size, seed=99, add_eos=True)
    assert [b.tolist() for b in other] != [b.tolist() for b in batch]
    assert [tok.decode(b) for b in batch] == [tok.decode(tok.encode(t)) for t in texts]
    with pytest.raises(ValueError, match="seed"):
        tok.sample_encode_batch(texts, seed=2 ** 32 - 1)


@pytest.mark.parametrize("nbest_size", [-1, 6])
def test_sampling_follows_the_exact_distribution(spm_models, nbest_size):
    """10,000 draws (FFBS over the whole lattice, and over the n best) against the exact
    probabilities p ~ exp(alpha * score) of every segmentation, by a chi-square test; and
    sentencepiece's own draws pass the same test (the oracle's distribution is this one)."""
    import collections
    import math
    tok, sp = load_pair(spm_models["uni_nmt"])
    text, alpha, n = "a telescope", 0.4, 10_000
    segs = [tuple(x.tolist()) for x in tok.nbest_encode(text, 512 if nbest_size < 0 else nbest_size)]
    assert nbest_size > 0 or len(segs) < 512  # every segmentation
    logits = {s: alpha * sum(sp.get_score(i) for i in s) for s in segs}
    top = max(logits.values())
    z = sum(math.exp(v - top) for v in logits.values())
    probs = {s: math.exp(v - top) / z for s, v in logits.items()}
    mine = collections.Counter(tuple(tok.sample_encode(text, alpha=alpha, nbest_size=nbest_size, seed=7 if i == 0 else None).tolist())
                               for i in range(n))
    theirs = collections.Counter(tuple(sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=nbest_size))
                                 for _ in range(n))
    assert set(mine) <= set(probs)
    ok, stat, critical = _chi_square_ok(mine, probs, n)
    assert ok, (stat, critical)
    assert _chi_square_ok(theirs, probs, n)[0]


def test_unigram_sampling_matches_sentencepiece_distribution(spm_models):
    import collections
    tok, sp = load_pair(spm_models["uni_nmt"])
    text = "I saw a girl with a telescope."
    n = 2000
    mine = collections.Counter(tuple(tok.sample_encode(text, alpha=0.3, nbest_size=-1, seed=i if i == 0 else None).tolist())
                               for i in range(n))
    theirs = collections.Counter(tuple(sp.encode(text, enable_sampling=True, alpha=0.3, nbest_size=-1)) for _ in range(n))
    assert len(mine) > 5 and len(theirs) > 5
    # the most frequent segmentations have the same frequencies (within sampling noise)
    for k, c in theirs.most_common(6):
        assert abs(mine[k] - c) / n < 0.04, (k, mine[k], c)
    for ids in list(mine)[:20]:
        assert tok.decode(list(ids)) == sp.decode(list(ids))
    assert tok.sample_encode(text, nbest_size=1).tolist() == sp.encode(text)


def test_bpe_dropout(spm_models):
    tok, sp = load_pair(spm_models["bpe_llama"])
    text = "Tokenization with BPE-dropout 123"
    assert tok.sample_encode(text, alpha=0.0).tolist() == sp.encode(text)
    chars = tok.sample_encode(text, alpha=1.0).tolist()
    assert chars == sp.encode(text, enable_sampling=True, alpha=1.0)
    seen = {tuple(tok.sample_encode(text, alpha=0.2).tolist()) for _ in range(200)}
    assert len(seen) > 10
    assert all(tok.decode(list(s)) == text for s in seen)


@pytest.mark.parametrize("name", ["uni_nmt", "uni_symbols", "uni_bf_nfkc"])
def test_nbest_encode(spm_models, name):
    tok, sp = load_pair(spm_models[name])
    lines = [x for x in fixture_lines()[:400] if 0 < len(x) < 120 and x.strip()][:60]
    lines += EDGE_CASES
    for text in lines:
        for k in (2, 8, 64):   # sentencepiece's own order, ties included (its A* search replayed)
            assert [x.tolist() for x in tok.nbest_encode(text, k)] == sp.nbest_encode(text, nbest_size=k), (text, k)
        assert tok.nbest_encode(text, 1)[0].tolist() == sp.encode(text), text
    with pytest.raises(ValueError):
        load_pair(spm_models["bpe_nmt"])[0].nbest_encode("abc", 3)


def test_lattice_scores_user_defined_pieces_by_characters(spm_models):
    """sentencepiece's Viterbi (EncodeOptimized) scores a user-defined piece 0.1 * (bytes - 1),
    its Lattice (n-best, sampling, entropy) 0.1 * (characters - 1): "\u2581the" (3 bytes for
    one character) is worth 0.5 to encode and 0.3 to n-best. The n-best scores follow the lattice."""
    tok, sp = load_pair(spm_models["uni_symbols"])

    def lattice_score(ids):
        return sum(0.1 * (len(sp.id_to_piece(i)) - 1) if tok.model.vocab.kinds[i] == 4 else sp.get_score(i)
                   for i in ids)

    texts = ["theory of the thesis", "theory of the theme", "thesis of the thermal", "a thethe\u2581the \U0001F642"]
    for text in texts:
        mine = [x.tolist() for x in tok.nbest_encode(text, 6)]
        theirs = sp.nbest_encode(text, nbest_size=6)
        assert any(sp.id_to_piece(i) == "\u2581the" for i in theirs[0]), text  # the case in question
        assert np.allclose([lattice_score(x) for x in mine], [lattice_score(x) for x in theirs], atol=1e-3), text
        assert tok.nbest_encode(text, 1)[0].tolist() == sp.nbest_encode(text, nbest_size=1)[0] == sp.encode(text)


@pytest.mark.parametrize("name", ["uni_nmt", "uni_symbols", "uni_bf_nfkc"])
def test_unigram_wide_units(spm_models, name):
    """A lattice trie too large for uint32 units gets uint64 ones (forced here): same ids on
    every path (batch, single text, n-best, sampling with a fixed seed)."""
    narrow, sp = load_pair(spm_models[name])
    wide = nbtok.Tokenizer.from_sentencepiece(str(spm_models[name]))
    assert narrow.model.M[0].dtype == np.uint32
    wide.model._M = wide.model._lattice(wide=True)
    assert wide.model.M[0].dtype == np.uint64
    lines = fixture_lines()[:3000] + EDGE_CASES
    assert_batch_parity(wide, sp, lines, decode=False, label=name)
    for text in lines[:300:7] + EDGE_CASES:
        assert wide.encode(text).tolist() == sp.encode(text), repr(text)
        assert [x.tolist() for x in wide.nbest_encode(text, 4)] == [x.tolist() for x in narrow.nbest_encode(text, 4)]
        a = narrow.sample_encode(text, alpha=0.5, nbest_size=-1, seed=11).tolist()
        assert wide.sample_encode(text, alpha=0.5, nbest_size=-1, seed=11).tolist() == a, repr(text)


# ---------------------------------------------------------------------------------- automaton
def automaton_symbols(model, text):
    """(symbols of the walk, of the automaton (no word cache) or None where it gives way) for
    one text, on the normalized bytes."""
    from nbtok.models.unigram import viterbi as kuni
    walk, norm = kuni.symbols_one(np.frombuffer(text.encode(), np.uint8), model.N, model.M)
    au, outs, rec = model.automaton
    units, idsc, unk_score, V = model.M
    n = norm.shape[0]
    best, start_at, node_id = np.empty(n + 1, np.float32), np.empty(n + 1, np.int32), np.empty(n + 1, np.int32)
    syms = np.empty(n + 1, np.int64)
    none = (np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.float32))
    m = kuni.viterbi_automaton(norm, n, (au, outs, rec, rec.view(np.float32)), idsc, idsc.view(np.float32),
                               kuni.space_node(units), unk_score, V, best, start_at, node_id, syms, none,
                               model.word_score_bound, units)
    return walk.tolist(), (syms[:m].tolist() if m >= 0 else None)


@pytest.mark.parametrize("name", ["uni_nmt", "uni_symbols", "uni_identity_suffix", "uni_32k"])
def test_automaton_matches_the_walk(spm_models, name):
    """The Aho-Corasick Viterbi finds the walk's path on every text, with the U+2581 shortcut
    (pieces start words) and without it (``uni_identity_suffix``: 'word▁' pieces)."""
    tok, sp = load_pair(spm_models[name])
    assert tok.model.automaton[0].size > 0
    assert (tok.model.word_score_bound >= 0) == (name != "uni_identity_suffix")
    for text in fixture_lines()[::3] + EDGE_CASES:
        walk, auto = automaton_symbols(tok.model, text)
        assert auto == walk, repr(text)

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
    def check(text):
        walk, auto = automaton_symbols(tok.model, text)
        assert auto == walk

    check()


def test_automaton_rebases_as_sentencepiece(spm_models, tmp_path):
    """Past |score| 100000 sentencepiece rebases its running scores; the automaton does the
    same (the candidates from before the rebasing start, less its score, then the others), and
    hands a document to the walk only where two rebasings fall within MAX_LEN bytes."""
    tok, sp = hand_made_unigram(spm_models, tmp_path / "long.model", [
        ("▁", -20.0), ("a", -20.0), ("z", -20.0), ("b", -1.5), ("▁a", -1.5), ("▁ab", -3.001), ("▁zz", -10.0),
        ("zz", -13.7), ("zzz", -20.6), ("ab", -2.9), ("ba", -4.4), ("zab", -7.3), ("q", -60000.0)])
    long = "zz " * 12000 + "ab ab ab"
    rng = np.random.default_rng(5)
    runs = "".join(rng.choice(list("abz"), 40000, p=[0.2, 0.2, 0.6]))  # no spaces: pieces cross every start
    spaced = " ".join(runs[i:i + int(k)] for i, k in zip(range(0, 40000, 40), rng.integers(1, 40, 1000)))
    for text in (long, runs, spaced, "zz " * 100 + "ab"):
        walk, auto = automaton_symbols(tok.model, text)
        assert auto == walk
    twice = "q" * 5 + "ab"  # a rebasing at every start from the third
    assert automaton_symbols(tok.model, twice)[1] is None
    docs = ["ab ab", long, "zz ab", long[:20000], runs, spaced, runs[:30001], twice, "ab " + twice]
    ids, offsets = tok.encode_batch_ragged(docs, num_threads=1)
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == sp.encode(docs)


def test_automaton_limits(spm_models, tmp_path):
    """A piece of 1024 bytes or more does not fit a record: no automaton, the batch walks."""
    from nbtok.models.unigram.automaton import build_automaton
    tok, sp = hand_made_unigram(spm_models, tmp_path / "longpiece.model", [
        ("▁", -5.0), ("a", -5.0), ("b", -5.0), ("▁a", -3.0), ("▁" + "ab" * 600, -1.0)])
    assert tok.model.automaton[0].size == 0
    units, idsc = tok.model.M[0], tok.model.M[1]
    assert build_automaton(units, tok.model._lattice_bc, idsc)[0].size == 0
    docs = ["a b " + "ab" * 600, "ab" * 700, "ba a b"] * 50
    ids, offsets = tok.encode_batch_ragged(docs, num_threads=1)
    assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == sp.encode(docs)


def test_han_text_takes_the_walk(spm_models):
    from nbtok.models.unigram.words import mostly_han
    chinese = [x.strip() for x in (FIXTURES / "text" / "udhr_cmn_hans.txt").read_text().splitlines() if x.strip()]
    as_bytes = lambda s: np.frombuffer(("\u2581" + s).encode(), np.uint8)
    assert sum(mostly_han(as_bytes(x), len(as_bytes(x))) for x in chinese) > len(chinese) // 2
    assert not mostly_han(as_bytes("吾輩は猫である。名前はまだ無い。"), 48)  # kana between
    assert not mostly_han(as_bytes("Hello 世界"), 14)
    tok, sp = load_pair(spm_models["uni_32k"])
    assert_batch_parity(tok, sp, chinese + fixture_lines()[:2000], decode=False, label="han")


def test_word_cache_pauses_where_it_does_not_pay():
    """``words_wanted``: a window of words scored (replays - 4 fills) / words, running mean
    below 30% pauses the cache for WORD_PAUSE bytes."""
    from nbtok.models.unigram import words as kwords
    w32 = np.zeros(kwords.word_cache_size(1024), np.int32)
    c = w32.size - kwords.WORD_COUNTS
    assert kwords.words_wanted(w32, 100) and not kwords.words_wanted(w32[:0], 100)
    w32[c:c + 3] = kwords.WORD_WINDOW, kwords.WORD_WINDOW // 10, kwords.WORD_WINDOW // 20  # cold first window
    assert kwords.words_wanted(w32, 100)  # mean (100% + -10%) / 2 = 45%
    assert w32[c + 4] == 450 and w32[c:c + 3].tolist() == [0, 0, 0]
    w32[c:c + 3] = kwords.WORD_WINDOW, kwords.WORD_WINDOW // 2, kwords.WORD_WINDOW // 10  # 10%
    assert not kwords.words_wanted(w32, 100)  # (45% + 10%) / 2 < 30%
    assert w32[c + 3] == kwords.WORD_PAUSE
    assert not kwords.words_wanted(w32, kwords.WORD_PAUSE - 1)
    assert not kwords.words_wanted(w32, 5)
    assert kwords.words_wanted(w32, 5)  # paused bytes spent: the next window tests again
    w32[c:c + 3] = kwords.WORD_WINDOW, kwords.WORD_WINDOW * 9 // 10, 0  # 90%
    assert kwords.words_wanted(w32, 100) and w32[c + 4] == (275 + 900) // 2


def test_word_cache_pause_keeps_parity(spm_models):
    """Words that rarely come back (random letters) pause the cache; English lines after them
    resume it: the same ids as sentencepiece throughout."""
    tok, sp = load_pair(spm_models["uni_32k"])
    rng = random.Random(5)
    noise = [" ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
                      for _ in range(40)) for _ in range(600)]
    docs = noise + fixture_lines() * 2 + noise[:100]
    ids, offsets = tok.encode_batch_ragged(docs, num_threads=1)
    ref_flat, ref_off = ragged(sp.encode(docs))
    assert count_mismatches(ids, offsets, ref_flat, ref_off) == 0
