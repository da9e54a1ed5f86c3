"""SentencePiece training against sentencepiece itself. BPE: every piece, in order, and the
saved ``.model`` loaded by sentencepiece encodes every line as sentencepiece's own model does.
Unigram: the pieces sentencepiece's own trainer picks on the same input (at least 98% in common,
the same number of tokens over the input within 0.5%), and the saved ``.model`` loaded by
sentencepiece gives nbtok's ids on every line."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtok
from conftest import FIXTURES

spm = pytest.importorskip("sentencepiece")
pytest.importorskip("regex")  # (the train extra: Unicode scripts)
ROOT = FIXTURES / "spm"


def lines_of(name):
    return [line for line in (ROOT / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def both(name, vocab_size, tmp_path, model_type="bpe", extra=(), **options):
    lines = lines_of(name) + list(extra)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "ref"),
                                   vocab_size=vocab_size, model_type=model_type, minloglevel=2, **options)
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
    tok = nbtok.train_sentencepiece(iter(lines), vocab_size, model_type=model_type, **options)
    return lines, ref, tok


CASES = [("botchan.txt", 800), ("botchan.txt", 2000), ("udhr_eng.txt", 400), ("udhr_rus.txt", 400),
         ("wagahaiwa_nekodearu_head.txt", 2500), ("udhr_hin.txt", 400), ("udhr_tha.txt", 300),
         ("udhr_kor.txt", 500),
         ("udhr_arb.txt", 400), ("udhr_vie.txt", 400)]


@pytest.mark.parametrize("name, vocab_size", CASES)
def test_bpe_pieces_and_encodings_match_sentencepiece(name, vocab_size, tmp_path):
    lines, ref, tok = both(name, vocab_size, tmp_path)
    assert [tok.id_to_piece(i) for i in range(tok.vocab_size)] == \
        [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    assert [back.encode(line) for line in lines] == [ref.encode(line) for line in lines]
    assert [tok.encode(line).tolist() for line in lines] == [ref.encode(line) for line in lines]


UNIGRAM_CASES = [("botchan.txt", 1000), ("botchan.txt", 3000), ("udhr_eng.txt", 400), ("udhr_rus.txt", 500),
                 ("udhr_kor.txt", 500), ("udhr_hin.txt", 400), ("udhr_tha.txt", 400), ("udhr_arb.txt", 400),
                 ("udhr_vie.txt", 400), ("wagahaiwa_nekodearu_head.txt", 2000)]


@pytest.mark.parametrize("name, vocab_size", UNIGRAM_CASES)
def test_unigram_pieces_match_sentencepiece(name, vocab_size, tmp_path):
    lines, ref, tok = both(name, vocab_size, tmp_path, "unigram")
    ours = [tok.id_to_piece(i) for i in range(tok.vocab_size)]
    theirs = [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    assert len(ours) == len(theirs) == vocab_size and ours[:3] == theirs[:3] == ["<unk>", "<s>", "</s>"]
    assert len(set(ours) & set(theirs)) >= 0.98 * vocab_size
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    assert [back.encode(line) for line in lines] == [tok.encode(line).tolist() for line in lines]
    n_ours = sum(map(len, back.encode(lines)))
    n_ref = sum(map(len, ref.encode(lines)))
    assert abs(n_ours / n_ref - 1) <= 0.005


META_OPTIONS = [dict(byte_fallback=True), dict(control_symbols=["<sep>", "<cls>"]),
                dict(pad_id=3, byte_fallback=True, control_symbols=["<mask>"]), dict(bos_id=-1, eos_id=1),
                dict(user_defined_symbols=["<sep>", "right", "▁the"]),
                dict(user_defined_symbols="<sep>,<s>", control_symbols="<cls>", byte_fallback=True)]
# meta pieces in the text itself: sentencepiece's trainer cuts the text at them
META_TEXT = ["everyone <s> has </s> the right <sep> to life <unk> and <cls> liberty <0x41> here"] * 8


@pytest.mark.parametrize("options", META_OPTIONS)
@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_meta_pieces_and_byte_fallback_as_sentencepiece(model_type, options, tmp_path):
    """Meta pieces (unk / bos / eos / pad, control symbols, the 256 byte pieces) take the ids
    sentencepiece gives them, and a text with characters outside the vocabulary falls back to
    bytes as with sentencepiece's own model."""
    vocab_size = 700 if options.get("byte_fallback") else 450
    lines, ref, tok = both("udhr_eng.txt", vocab_size, tmp_path, model_type, META_TEXT, **options)
    ours = [tok.id_to_piece(i) for i in range(tok.vocab_size)]
    theirs = [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    fixed = [i for i in range(ref.get_piece_size())
             if ref.is_control(i) or ref.is_unknown(i) or ref.is_byte(i) or ref.id_to_piece(i) in ("<sep>", "right", "▁the")]
    assert [ours[i] for i in fixed] == [theirs[i] for i in fixed]
    if model_type == "bpe":
        assert ours == theirs
    else:
        assert len(set(ours) & set(theirs)) >= 0.98 * len(theirs)
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    for text in lines[:20] + ["Ünïcödé 日本語 🙂 text"]:
        assert back.encode(text) == tok.encode(text).tolist()
        if model_type == "bpe":
            assert back.encode(text) == ref.encode(text)


def test_unigram_scores_are_log_probabilities_in_order(tmp_path):
    tok = nbtok.train_sentencepiece(iter(lines_of("udhr_eng.txt")), 400)
    tok.save_sentencepiece(tmp_path / "m.model")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    scores = [sp.get_score(i) for i in range(3, sp.get_piece_size())]
    assert all(s < 0 for s in scores) and scores == sorted(scores, reverse=True)


def test_unigram_vocab_too_large_for_the_input():
    lines = lines_of("udhr_eng.txt")[:5]
    with pytest.raises(ValueError, match="vocab_size is too high"):
        nbtok.train_sentencepiece(iter(lines), 5000)
    small = nbtok.train_sentencepiece(iter(lines), 5000, hard_vocab_limit=False)
    assert 3 < small.vocab_size < 5000


def test_inputs_and_unsupported_options(tmp_path):
    with pytest.raises(FileNotFoundError):
        nbtok.train_sentencepiece(["no such corpus.txt"], 300, model_type="bpe")
    with pytest.raises(ValueError, match="model_type"):
        nbtok.train_sentencepiece(iter(lines_of("botchan.txt")), 300, model_type="wordpiece")
    with pytest.raises(TypeError, match="treat_whitespace_as_suffix"):
        nbtok.train_sentencepiece(iter(lines_of("botchan.txt")), 300, model_type="bpe", treat_whitespace_as_suffix="yes")
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


def _words_and_units_one_by_one(counts):
    """sentencepiece's SplitIntoWords, sentence by sentence: the words, and each word with ``▁``
    after it when another word follows in its sentence."""
    from collections import Counter
    ws = "\u2581"
    words, units = Counter(), Counter()
    for s, c in counts.items():
        starts = [0] + [i for i in range(1, len(s)) if s[i] == ws]
        for j, a in enumerate(starts):
            b = starts[j + 1] if j + 1 < len(starts) else len(s)
            words[s[a:b]] += c
            units[s[a:b] + ws if b < len(s) else s[a:b]] += c
    return words, units


@given(st.dictionaries(st.text(alphabet="ab\u2581c\u00e9", min_size=1, max_size=8), st.integers(1, 3), min_size=1, max_size=8))
@settings(max_examples=300, deadline=None)
def test_unigram_words_and_units_split_like_sentencepiece(counts):
    from collections import Counter
    from nbtok.train.sentencepiece.unigram import split_sentences
    assert split_sentences(Counter(counts)) == _words_and_units_one_by_one(counts)


def test_an_iterator_of_utf8_bytes_trains_as_of_str():
    lines = lines_of("udhr_eng.txt")
    from_bytes = nbtok.train_sentencepiece(iter([line.encode() for line in lines]), 300)
    from_str = nbtok.train_sentencepiece(iter(lines), 300)
    assert from_bytes.vocab == from_str.vocab
    with pytest.raises(ValueError, match="not UTF-8"):
        nbtok.train_sentencepiece(iter([b"caf\xe9 au lait"] * 50), 30)
    with pytest.raises(TypeError, match="expected str"):
        nbtok.train_sentencepiece(iter([1, 2, 3]), 30)


@pytest.mark.parametrize("name, vocab_size", [("botchan.txt", 2000), ("wagahaiwa_nekodearu_head.txt", 1500)])
def test_unigram_held_out_compression_and_likelihood_as_sentencepiece(name, vocab_size, tmp_path):
    """Trained on 90% of the lines, both models score the other 10% alike: bytes per token and
    log-likelihood (the sum of the pieces' scores) within 0.5% of sentencepiece's model."""
    lines = lines_of(name)
    train, held = lines[: len(lines) * 9 // 10], lines[len(lines) * 9 // 10:]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_prefix=str(tmp_path / "ref"),
                                   vocab_size=vocab_size, model_type="unigram", minloglevel=2)
    nbtok.train_sentencepiece(iter(train), vocab_size).save_sentencepiece(tmp_path / "ours.model")
    stats = []
    for path in (tmp_path / "ours.model", tmp_path / "ref.model"):
        sp = spm.SentencePieceProcessor(model_file=str(path))
        ids = sp.encode(held)
        stats.append((sum(map(len, ids)), sum(sp.get_score(i) for seq in ids for i in seq)))
    (tokens, ll), (ref_tokens, ref_ll) = stats
    assert abs(tokens / ref_tokens - 1) <= 0.005 and abs(ll / ref_ll - 1) <= 0.005


def pieces_of(model):
    size = model.get_piece_size() if isinstance(model, spm.SentencePieceProcessor) else model.vocab_size
    return [model.id_to_piece(i) for i in range(size)]


def assert_parity(lines, ref, tok, model_type, tmp_path, min_shared=0.99):
    """BPE: sentencepiece's pieces, in order, and its encodings; Unigram: at least ``min_shared``
    of its pieces and its token count over the lines within 0.5%. Both: the saved ``.model``,
    loaded by sentencepiece, encodes every line as nbtok does."""
    ours, theirs = pieces_of(tok), pieces_of(ref)
    assert len(ours) == len(theirs)
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    assert [back.encode(line) for line in lines] == [tok.encode(line).tolist() for line in lines]
    if model_type == "bpe":
        assert ours == theirs
        assert [back.encode(line) for line in lines] == [ref.encode(line) for line in lines]
    else:
        assert len(set(ours) & set(theirs)) >= min_shared * len(theirs)
        n_ours, n_ref = sum(map(len, back.encode(lines))), sum(map(len, ref.encode(lines)))
        assert abs(n_ours / n_ref - 1) <= 0.005
    return ours


WS = "\u2581"
WHITESPACE_OPTIONS = [
    dict(treat_whitespace_as_suffix=True),
    dict(split_by_whitespace=False),
    dict(split_by_whitespace=False, treat_whitespace_as_suffix=True),
    dict(allow_whitespace_only_pieces=True, remove_extra_whitespaces=False),
    dict(allow_whitespace_only_pieces=True, remove_extra_whitespaces=False, treat_whitespace_as_suffix=True),
]


@pytest.mark.parametrize("options", WHITESPACE_OPTIONS)
@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
@pytest.mark.parametrize("name, vocab_size", [("botchan.txt", 1000), ("udhr_rus.txt", 500)])
def test_whitespace_options_as_sentencepiece(name, vocab_size, model_type, options, tmp_path):
    """treat_whitespace_as_suffix, split_by_whitespace=False and allow_whitespace_only_pieces:
    where ``▁`` may stand in a piece and how sentences split into words, as sentencepiece's."""
    lines, ref, tok = both(name, vocab_size, tmp_path, model_type, **options)
    ours = assert_parity(lines, ref, tok, model_type, tmp_path)
    words = [p for p in ours[3:] if len(p) > 1]
    inner = [p for p in words if WS in p[1:-1] and set(p) != {WS}]
    if options.get("treat_whitespace_as_suffix"):
        assert not any(p.startswith(WS) for p in words if set(p) != {WS})
        assert sum(p.endswith(WS) for p in words) > 0.2 * len(words)
    else:
        assert not any(p.endswith(WS) for p in words if set(p) != {WS})
    if options.get("split_by_whitespace", True):
        assert not inner
    else:
        assert inner  # pieces across words
    runs = [p for p in words if set(p) == {WS}]
    if options.get("allow_whitespace_only_pieces"):
        assert runs  # (the fixtures have runs of spaces: kept by remove_extra_whitespaces=False)
    else:
        assert not runs


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
@pytest.mark.parametrize("required", ["QXZ\u20ac\u65e5\u672c", "\u00e9\u00e0"])
def test_required_chars_as_sentencepiece(model_type, required, tmp_path):
    """required_chars: always pieces, frequent or not, in the text or not, as sentencepiece's."""
    lines, ref, tok = both("botchan.txt", 1000, tmp_path, model_type, required_chars=required)
    ours = assert_parity(lines, ref, tok, model_type, tmp_path)
    assert set(required) <= set(ours)
    without = nbtok.train_sentencepiece(iter(lines), 1000, model_type=model_type)
    assert not set(required) <= set(pieces_of(without))
    assert tok.encode("\u65e5\u672c \u20ac").tolist() == ref.encode("\u65e5\u672c \u20ac")


def test_required_chars_bad_values():
    lines = lines_of("udhr_eng.txt")
    for bad in (" ", "\u2585", "a\ud800"):
        with pytest.raises(ValueError, match="required_chars"):
            nbtok.train_sentencepiece(iter(lines), 300, required_chars=bad)
    with pytest.raises(TypeError, match="required_chars"):
        nbtok.train_sentencepiece(iter(lines), 300, required_chars=["a"])


def write_rules(path, rules, extra=""):
    """A rule file: each ``(source, target)`` as hex code points, ``extra`` lines after them."""
    with open(path, "w", encoding="utf-8") as f:
        for src, trg in rules:
            f.write(" ".join(f"{ord(c):X}" for c in src) + "\t" + " ".join(f"{ord(c):X}" for c in trg) + "\n")
        f.write(extra)
    return path


def rule_sample(n, seed=0):
    """``n`` rules of sentencepiece's own nmt_nfkc (decompiled), one and more characters long."""
    import random
    rules = [r for r in spm.SentencePieceNormalizer(rule_name="nmt_nfkc").decompile() if r[0] != r[1]]
    return random.Random(seed).sample(rules, n)


def normalizer_of(blob):
    from nbtok.formats import sentencepiece_model as smp
    spec = smp.encode_spec(b"", smp.NORMALIZER_FIELDS, dict(
        name="user_defined", precompiled_charsmap=blob, add_dummy_prefix=True,
        remove_extra_whitespaces=True, escape_whitespaces=True))
    return spm.SentencePieceNormalizer(normalizer_spec=spec)


def test_rule_tsv_compiles_to_sentencepiece_rules(tmp_path):
    """normalization_rule_tsv: the compiled charsmap (nbtok's own double array) holds exactly the
    rules sentencepiece's builder compiles from the file, and normalizes as sentencepiece's does;
    U+ and 0x spellings, a third column, a deletion (no tab) and a later rule replacing an
    earlier one are read as sentencepiece reads them."""
    import random
    from nbtok.train.sentencepiece.rules import compile_rule_tsv
    rules = rule_sample(3000)
    path = write_rules(tmp_path / "r.tsv", rules, "U+0041\tU+0062 0x63\t# A => bc\n7A\n66 66\t46\r\n66 66\t66 20 66\n")
    ours = normalizer_of(compile_rule_tsv(path))
    ref = spm.SentencePieceNormalizer(rule_tsv=str(path))
    assert dict(ours.decompile()) == dict(ref.decompile())
    rng = random.Random(1)
    sources = [s for s, _ in rules] + ["A", "z", "ff", "f"]
    texts = lines_of("botchan.txt")[:300] + ["".join(rng.choice(sources) + rng.choice(" aé") for _ in range(12)) for _ in range(1000)]
    assert [ours.normalize(t) for t in texts] == [ref.normalize(t) for t in texts]
    assert ref.normalize("Azff") == ours.normalize("Azff") == "\u2581bcf\u2581f"


def test_rule_tsv_bad_files(tmp_path):
    from nbtok.train.sentencepiece.rules import compile_rule_tsv
    many_prefixes = "".join(" ".join(["41"] * k) + "\t43\n" for k in range(1, 34))  # 33 rules on "AAA..."
    cases = {"41\tZZ\n": "not a hex code point", "41\t41\n": "maps to itself", "": "no normalization rule",
             "\t42\n": "needs a source", "D800\t41\n": "not a character", "41\t0\n": "not a character",
             "41\t110000\n": "not a character", "41\t42\n\n": "needs a source", many_prefixes: "prefixes"}
    for text, message in cases.items():
        path = tmp_path / "bad.tsv"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            compile_rule_tsv(path)
    with pytest.raises(FileNotFoundError):
        nbtok.train_sentencepiece(iter(lines_of("udhr_eng.txt")), 300, normalization_rule_tsv=str(tmp_path / "none.tsv"))


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_normalization_rule_tsv_trains_as_sentencepiece(model_type, tmp_path):
    """normalization_rule_tsv: sentencepiece normalizes the text by the file's rules alone
    (here: lower case, "th" -> "θ", commas deleted) and saves them as a ``user_defined``
    charsmap; nbtok trains on the same text and its model normalizes as sentencepiece's."""
    rules = [(chr(c), chr(c + 32)) for c in range(ord("A"), ord("Z") + 1)] + [("th", "\u03b8"), ("Th", "\u03b8")]
    path = write_rules(tmp_path / "rules.tsv", rules, "2C\n")
    lines, ref, tok = both("botchan.txt", 1000, tmp_path, model_type, normalization_rule_tsv=str(path))
    ours = assert_parity(lines, ref, tok, model_type, tmp_path)
    assert "\u03b8" in ours and not any(c.isupper() or c == "," for p in ours[3:] for c in p)
    from nbtok.formats import sentencepiece_model as smp
    saved = smp.read_model_file(tmp_path / "ours.model").normalizer
    assert saved["name"] == "user_defined"
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    text = "The Cat, the HAT."
    assert back.encode(text) == tok.encode(text).tolist()
    assert "".join(back.encode(text, out_type=str)) == "\u2581\u03b8e\u2581cat\u2581\u03b8e\u2581hat."
    plain = nbtok.train_sentencepiece(iter(lines), 1000, model_type=model_type)
    assert any(c.isupper() for p in pieces_of(plain) for c in p)


def test_input_sentence_size_first_lines_as_sentencepiece(tmp_path):
    """input_sentence_size with shuffle_input_sentence=False: the first lines that sentencepiece
    keeps (lines it skips, as too long or with its reserved U+2585, are not counted); the
    same pieces as sentencepiece's, for BPE in order."""
    skipped = ["x" * 5000, "a \u2585 b", "   "]  # (the last one is counted, then normalizes to nothing)
    lines = skipped + lines_of("botchan.txt")
    for model_type in ("bpe", "unigram"):
        options = dict(input_sentence_size=1500, shuffle_input_sentence=False)
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "ref"),
                                       vocab_size=800, model_type=model_type, minloglevel=2, **options)
        ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
        tok = nbtok.train_sentencepiece(iter(lines), 800, model_type=model_type, **options)
        assert_parity(lines[3:], ref, tok, model_type, tmp_path)
        first = nbtok.train_sentencepiece(iter(lines[2:1502]), 800, model_type=model_type)
        assert pieces_of(first) == pieces_of(tok)


def test_input_sentence_size_samples_as_sentencepiece_does():
    """input_sentence_size with shuffle_input_sentence (the default): sentencepiece's reservoir
    sampler, whose draws nbtok cannot replay (absl's BitGen, salted per process: sentencepiece
    itself samples differently each run), so nbtok keeps its semantics with its own seeded
    generator: the first ``size`` lines, then line t replaces slot ``n ~ U[0, t - 1)`` when
    ``n < size``. A line of the first ``size`` of T is kept with probability
    ``(size - 1) / (T - 1)``, a later one with ``size / (T - 1)``; a seed is one sample."""
    from nbtok.train.sentencepiece.sentences import sample_lines
    T, size, trials = 40, 10, 20000
    kept = np.zeros(T)
    for seed in range(trials):
        sample = sample_lines(range(T), size, seed)
        assert len(sample) == len(set(sample)) == size
        kept[sample] += 1
    expected = np.array([(size - 1) / (T - 1)] * size + [size / (T - 1)] * (T - size)) * trials
    sd = np.sqrt(expected * (1 - expected / trials))
    assert np.all(np.abs(kept - expected) < 4.5 * sd)  # (deterministic: the seeds are fixed)
    assert abs(kept[:size].mean() - expected[0]) < 0.03 * expected[0]  # (the first ones, a little less often)
    assert sample_lines(range(T), size, 7) == sample_lines(range(T), size, 7) != sample_lines(range(T), size, 8)
    assert sample_lines(range(5), size, 0) == list(range(5))


@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_input_sentence_size_trains_on_its_sample(model_type, tmp_path):
    """Training with input_sentence_size trains on the seeded sample of the kept lines, as
    sentencepiece trains on its own sample: a seed gives one model, another seed another; the
    saved model loads in sentencepiece and encodes as nbtok's."""
    from nbtok.train.sentencepiece.sentences import sample_lines
    lines = ["a \u2585 b"] + lines_of("botchan.txt")
    tok = nbtok.train_sentencepiece(iter(lines), 800, model_type=model_type, input_sentence_size=1500, seed=5)
    again = nbtok.train_sentencepiece(iter(lines), 800, model_type=model_type, input_sentence_size=1500, seed=5)
    other = nbtok.train_sentencepiece(iter(lines), 800, model_type=model_type, input_sentence_size=1500, seed=6)
    on_sample = nbtok.train_sentencepiece(iter(sample_lines(lines[1:], 1500, 5)), 800, model_type=model_type)
    assert pieces_of(tok) == pieces_of(again) == pieces_of(on_sample) != pieces_of(other)
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    assert [back.encode(line) for line in lines[1:]] == [tok.encode(line).tolist() for line in lines[1:]]
    # sentencepiece's own sample of the same size: its model shares about as many pieces with
    # nbtok's as two of nbtok's seeds share with each other (samples of the same text)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "ref"), vocab_size=800,
                                   model_type=model_type, minloglevel=2, input_sentence_size=1500)
    theirs = set(pieces_of(spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))))
    between_seeds = len(set(pieces_of(tok)) & set(pieces_of(other)))
    assert len(set(pieces_of(tok)) & theirs) >= 0.9 * between_seeds


def test_input_sentence_size_bad_values():
    lines = lines_of("udhr_eng.txt")
    for bad in (50, -1):
        with pytest.raises(ValueError, match="input_sentence_size"):
            nbtok.train_sentencepiece(iter(lines), 300, input_sentence_size=bad)
    with pytest.raises(TypeError, match="input_sentence_size"):
        nbtok.train_sentencepiece(iter(lines), 300, input_sentence_size=1000.5)
    with pytest.raises(TypeError, match="shuffle_input_sentence"):
        nbtok.train_sentencepiece(iter(lines), 300, input_sentence_size=1000, shuffle_input_sentence="maybe")


@pytest.mark.parametrize("name, n_lines, vocab_size", [("botchan.txt", 150, 3000), ("udhr_eng.txt", 60, 1200),
                                                      ("wagahaiwa_nekodearu_head.txt", 10, 367)])
def test_bpe_merges_rare_pairs_as_sentencepiece(name, n_lines, vocab_size, tmp_path):
    """Few lines and a large vocabulary: most merges are of pairs that occur once, where
    sentencepiece 0.2.3 takes the best of every pair (one exact priority queue), down to pairs
    no longer found; nbtok's pieces are its pieces, in order."""
    lines = lines_of(name)[:n_lines]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "ref"),
                                   vocab_size=vocab_size, model_type="bpe", minloglevel=2)
    ref = spm.SentencePieceProcessor(model_file=str(tmp_path / "ref.model"))
    tok = nbtok.train_sentencepiece(iter(lines), vocab_size, model_type="bpe")
    assert_parity(lines, ref, tok, "bpe", tmp_path)


def test_bpe_vocab_too_large_for_the_input(tmp_path):
    """As sentencepiece: more pieces than the pairs give is an error, or with
    hard_vocab_limit=False a smaller vocabulary (here all 367 pieces the lines give)."""
    lines = lines_of("wagahaiwa_nekodearu_head.txt")[:10]
    with pytest.raises(RuntimeError, match="Vocabulary size too high"):
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "ref"),
                                       vocab_size=2500, model_type="bpe", minloglevel=2)
    with pytest.raises(ValueError, match="vocab_size is too high"):
        nbtok.train_sentencepiece(iter(lines), 2500, model_type="bpe")
    assert nbtok.train_sentencepiece(iter(lines), 2500, model_type="bpe", hard_vocab_limit=False).vocab_size == 367


CHAR_WORD_OPTIONS = [{}, {"byte_fallback": True}, {"user_defined_symbols": ["rights", "ion", "\u2581of"]},
                     {"character_coverage": 0.98}, {"add_dummy_prefix": False, "remove_extra_whitespaces": False},
                     {"normalization_rule_name": "nfkc_cf"}, {"control_symbols": ["<sep>"], "pad_id": 3}]


CHAR_WORD_CASES = ([(m, "udhr_eng.txt", v, o) for m, v in (("char", 60), ("word", 400)) for o in CHAR_WORD_OPTIONS]
                   + [("char", "udhr_jpn.txt", 300, {}), ("char", "botchan.txt", 5000, {}),
                      ("word", "udhr_rus.txt", 600, {}), ("word", "botchan.txt", 3000, {})])


@pytest.mark.parametrize("model_type, name, vocab_size, options", CHAR_WORD_CASES)
def test_char_and_word_models_as_sentencepiece(model_type, name, vocab_size, options, tmp_path):
    """CHAR / WORD training gives sentencepiece's pieces, scores and kinds, in order (rare
    characters dropped by character_coverage keep their words out; a WORD model adds the ``▁``
    form of each user-defined symbol), and the model encodes as sentencepiece's own: single
    calls, batches and pieces, including text the model has not seen."""
    vocab_size += 256 * bool(options.get("byte_fallback"))
    lines, ref, tok = both(name, vocab_size, tmp_path, model_type, **options)
    assert tok.model_type == model_type

    def table(m, n):
        return [(m.id_to_piece(i), m.get_score(i), m.is_control(i), m.is_unknown(i), m.is_byte(i)) for i in range(n)]
    tok.save_sentencepiece(tmp_path / "ours.model")
    back = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours.model"))
    assert table(back, back.get_piece_size()) == table(ref, ref.get_piece_size())
    probe = lines + ["héllo wörld 🙃 日本語", "  two  spaces ", "", "rightsion of", "x\u00a0y \ufb01 \u2581", "<sep>"]
    want = [ref.encode(t) for t in probe]
    assert [tok.encode(t).tolist() for t in probe] == want
    assert [a.tolist() for a in tok.encode_batch(probe)] == want
    assert [tok.encode_as_pieces(t) for t in probe] == [ref.encode(t, out_type=str) for t in probe]
    assert [back.encode(t) for t in probe] == want
    loaded = nbtok.Tokenizer.from_sentencepiece(tmp_path / "ref.model")
    assert [a.tolist() for a in loaded.encode_batch(probe)] == want
    if not options.get("byte_fallback"):   # (byte pieces' spans: see test_sentencepiece_offsets)
        for t in probe[:40] + probe[-6:]:
            ids, starts, ends = loaded.encode_with_offsets(t)
            assert ids.tolist() == ref.encode(t)
            assert [(len(t[:x].encode()), len(t[:y].encode())) for x, y in zip(starts.tolist(), ends.tolist())] == \
                [(p.begin, p.end) for p in ref.encode(t, out_type="proto").pieces]


def test_char_and_word_models_refuse_sampling_and_a_vocab_too_large(tmp_path):
    lines = lines_of("udhr_jpn.txt")
    with pytest.raises(Exception):   # sentencepiece: "Vocabulary size too high"
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(tmp_path / "r"),
                                       vocab_size=400, model_type="word", minloglevel=2)
    with pytest.raises(ValueError, match="vocab_size is too high"):
        nbtok.train_sentencepiece(iter(lines), 400, model_type="word")
    small = nbtok.train_sentencepiece(iter(lines), 400, model_type="word", hard_vocab_limit=False)
    assert 3 < small.vocab_size < 400
    char = nbtok.train_sentencepiece(iter(lines), 5000, model_type="char")   # CHAR keeps what there is
    assert char.vocab_size < 5000
    for tok in (small, char):
        with pytest.raises(NotImplementedError, match="one segmentation"):
            tok.sample_encode(lines[0], alpha=0.1)
        with pytest.raises(ValueError, match="Unigram"):
            tok.nbest_encode(lines[0], 4)
