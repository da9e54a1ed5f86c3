"""nbtok.train_bpe: exact reproduction of the CS336 reference, agreement with a plain Python
reference trainer on random corpora, HF tokenizers' BpeTrainer with tie_break="hf", chunked
counting, the trained tokenizer's encode/save round trips, and bad input."""
import json
import pickle
from collections import Counter
from pathlib import Path

import pytest

import nbtok
from nbtok.formats.gpt2 import bytes_to_unicode, token_to_bytes
from nbtok.train.bpe import gpt2_byte_order
from nbtok.train.counting import count_pretokens

from conftest import FIXTURES

TRAIN = FIXTURES / "train"
CORPUS_EN = TRAIN / "corpus.en"
GPT2_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


# ---------------------------------------------------------------- the plain reference
def reference_train(docs, vocab_size, special_tokens=(), tie_break="greatest_bytes", pattern=GPT2_PAT):
    """An obviously correct (slow) BPE trainer: recount every pair each step.

    docs: list of str (each its own document). Returns (vocab dict[int, bytes], merges).
    """
    import regex
    words = Counter()
    split = None
    if special_tokens:
        split = regex.compile("|".join(regex.escape(s) for s in sorted(special_tokens, key=len, reverse=True)))
    for doc in docs:
        parts = split.split(doc) if split else [doc]
        for part in parts:
            for m in regex.finditer(pattern, part):
                words[tuple(bytes([b]) for b in m.group().encode("utf-8"))] += 1
    S = len(special_tokens)
    vocab = {i: s.encode("utf-8") for i, s in enumerate(special_tokens)}
    for r, b in enumerate(gpt2_byte_order()):
        vocab[S + r] = bytes([b])
    hf_id = {b: i for i, b in vocab.items() if i >= S}
    merges = []
    while len(vocab) < vocab_size:
        pairs = Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        if tie_break == "hf":
            best = min(pairs, key=lambda p: (-pairs[p], hf_id[p[0]], hf_id[p[1]]))
        else:
            best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        new = best[0] + best[1]
        if tie_break == "hf":
            if new not in hf_id:
                hf_id[new] = len(vocab)
                vocab[len(vocab)] = new
        else:
            vocab[len(vocab)] = new
        merged = Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            merged[tuple(out)] += c
        words = merged
    return vocab, merges


def read_reference():
    merges = []
    for line in (TRAIN / "train-bpe-reference-merges.txt").read_text(encoding="utf-8").splitlines():
        a, b = line.split(" ")
        merges.append((token_to_bytes(a, "merges"), token_to_bytes(b, "merges")))
    raw = json.loads((TRAIN / "train-bpe-reference-vocab.json").read_text(encoding="utf-8"))
    vocab = {i: (s.encode("utf-8") if s == "<|endoftext|>" else token_to_bytes(s, "vocab")) for s, i in raw.items()}
    return vocab, merges


# ---------------------------------------------------------------- 1. CS336 exactness
@pytest.fixture(scope="module")
def cs336():
    return nbtok.train_bpe(CORPUS_EN, 500, special_tokens=["<|endoftext|>"], progress=False)


def test_cs336_reference_merges_exact(cs336):
    _, ref_merges = read_reference()
    assert len(cs336.merges) == 243
    assert cs336.merges == ref_merges


def test_cs336_reference_vocab_exact(cs336):
    ref_vocab, _ = read_reference()
    # upstream checks the id set and the value set; our id layout equals the fixture's too
    assert set(cs336.vocab) == set(ref_vocab)
    assert set(cs336.vocab.values()) == set(ref_vocab.values())
    assert cs336.vocab == ref_vocab
    assert cs336.vocab_size == 500


# ---------------------------------------------------------------- 1b. random corpora vs the reference
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# few distinct characters -> many equal counts, so the tie rules are exercised
_CHARS = list("abcab ba  \n\n\t.,'s1207!é€漢") + ["<|endoftext|>", "'ll", " the", "\r\n"]
_docs = st.lists(st.lists(st.sampled_from(_CHARS), max_size=60).map("".join), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=_docs, extra=st.integers(0, 40), tie=st.sampled_from(["greatest_bytes", "hf"]),
       specials=st.sampled_from([[], ["<|endoftext|>"], ["<|endoftext|>", "ab"]]))
def test_random_corpora_match_reference(docs, extra, tie, specials):
    vocab_size = 256 + len(specials) + extra
    if not "".join(docs):
        with pytest.raises(ValueError, match="no text to train on"):
            nbtok.train_bpe(iter(docs), vocab_size, special_tokens=specials, tie_break=tie, progress=False)
        return
    ref_vocab, ref_merges = reference_train(docs, vocab_size, specials, tie)
    tok = nbtok.train_bpe(iter(docs), vocab_size, special_tokens=specials, tie_break=tie, progress=False)
    assert tok.merges == ref_merges
    assert tok.vocab == ref_vocab


@pytest.mark.parametrize("pattern", [r"\S+|\s+", r"[a-z]+| ?[^a-z]"])
def test_custom_regex_pattern_uses_regex_fallback(pattern):
    from nbtok.pre_tokenizers.bytelevel import Pretokenizer
    assert Pretokenizer(pattern).cfg is None  # not a scanner family: the regex module path
    docs = [CORPUS_EN.read_text(encoding="utf-8")[:20000], "<|endoftext|>x y<|endoftext|>"]
    for tie in ("greatest_bytes", "hf"):
        ref_vocab, ref_merges = reference_train(docs, 400, ["<|endoftext|>"], tie, pattern=pattern)
        tok = nbtok.train_bpe(iter(docs), 400, special_tokens=["<|endoftext|>"], pattern=pattern, tie_break=tie,
                              progress=False)
        assert tok.merges == ref_merges and tok.vocab == ref_vocab


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_other_builtin_patterns_match_reference(pattern):
    from nbtok.pre_tokenizers.bytelevel import resolve_pattern
    docs = [CORPUS_EN.read_text(encoding="utf-8")[:30000] + "\n\tFoo123456 BarBAZ's  x\r\n"]
    ref_vocab, ref_merges = reference_train(docs, 450, (), "greatest_bytes", pattern=resolve_pattern(pattern))
    tok = nbtok.train_bpe(iter(docs), 450, pattern=pattern, progress=False)
    assert tok.merges == ref_merges


def test_merges_never_cross_special_tokens():
    docs = ["xy<|endoftext|>xy<|endoftext|>xy" * 50, "yx<|endoftext|>"]
    tok = nbtok.train_bpe(iter(docs), 300, special_tokens=["<|endoftext|>"], progress=False)
    for a, b in tok.merges:
        assert b"<|" not in a + b and b"|>" not in a + b
    assert (b"x", b"y") in tok.merges
    # without the special token, its pieces are ordinary text and do get merged
    tok2 = nbtok.train_bpe(iter(docs), 300, progress=False)
    assert any(b"|" in a + b for a, b in tok2.merges)


def test_duplicate_bytes_from_two_merge_paths():
    # "ab"+"c" and "a"+"bc" both give b"abc": greatest_bytes keeps both vocab entries
    # (as the CS336 reference does), hf reuses the id; both agree with the reference
    docs = ["abc"] * 3 + ["xbc"] * 5 + ["aby"] * 4 + [" abcd"] * 2
    for tie in ("greatest_bytes", "hf"):
        ref_vocab, ref_merges = reference_train(docs, 268, (), tie)
        tok = nbtok.train_bpe(iter(docs), 268, tie_break=tie, progress=False)
        assert tok.merges == ref_merges and tok.vocab == ref_vocab


# ---------------------------------------------------------------- 2. input forms and chunked counting
def _regex_counts(texts, pattern, specials=()):
    import regex
    from nbtok.pre_tokenizers.bytelevel import resolve_pattern
    pat = regex.compile(resolve_pattern(pattern))
    split = regex.compile("|".join(regex.escape(s) for s in sorted(specials, key=len, reverse=True))) if specials else None
    c = Counter()
    for t in texts:
        for part in (split.split(t) if split else [t]):
            c.update(m.encode("utf-8") for m in pat.findall(part))
    return dict(c)


TEXT_FILES = sorted((FIXTURES / "text").glob("*.txt")) + [CORPUS_EN]


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_chunked_counting_equals_whole_text(pattern):
    """Tiny blocks and tasks force many safe cuts; the counts must equal whole-file regex counts."""
    from nbtok.pre_tokenizers.bytelevel import Pretokenizer
    pre = Pretokenizer(pattern)
    for path in TEXT_FILES:
        text = path.read_bytes().decode("utf-8")
        want = _regex_counts([text], pattern)
        got = count_pretokens(path, pre, block_size=2048, task_size=300).as_dict()
        assert got == want, path.name


def test_chunked_counting_with_specials_and_crlf(tmp_path):
    from nbtok.pre_tokenizers.bytelevel import Pretokenizer
    pre = Pretokenizer("gpt2")
    text = ("Hello world.\r\nIt's 2024!  \n\n  yes<|endoftext|>next doc\n/path\n" * 300) + "tail  "
    p = tmp_path / "t.txt"
    p.write_bytes(text.encode("utf-8"))
    want = _regex_counts([text], "gpt2", ["<|endoftext|>"])
    for block in (64, 1000, 1 << 20):
        got = count_pretokens(p, pre, ["<|endoftext|>"], block_size=block, task_size=100).as_dict()
        assert got == want


def test_input_forms_agree(tmp_path):
    text = CORPUS_EN.read_text(encoding="utf-8")
    p = tmp_path / "c.txt"
    p.write_text(text, encoding="utf-8")
    ref = nbtok.train_bpe(CORPUS_EN, 400, progress=False).merges
    assert nbtok.train_bpe(str(CORPUS_EN), 400, progress=False).merges == ref
    with pytest.raises(FileNotFoundError, match="a list is a list of file paths"):
        nbtok.train_bpe([text], 400, progress=False)  # a list is never guessed to hold texts
    assert nbtok.train_bpe(iter([text]), 400, progress=False).merges == ref
    assert nbtok.train_bpe((t for t in [text]), 400, progress=False).merges == ref
    # a list of paths: each file its own document (same text twice = doubled counts)
    two = nbtok.train_bpe([p, CORPUS_EN], 400, progress=False)
    assert two.merges == nbtok.train_bpe(iter([text, text]), 400, progress=False).merges
    assert nbtok.train_bpe([str(p), str(CORPUS_EN)], 400, progress=False).merges == two.merges
    # a small block size streams the file through many safe cuts: same result
    assert nbtok.train_bpe(CORPUS_EN, 400, progress=False, block_size=4096).merges == ref


def test_progress_goes_to_stderr(capsys):
    nbtok.train_bpe(iter([CORPUS_EN.read_text(encoding="utf-8")]), 300, progress=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert "counting" in err and "MB/s" in err and "merging" in err
    nbtok.train_bpe(iter(["abc abc abd abd"]), 259, progress=False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_tiny_and_empty_inputs(tmp_path):
    with pytest.raises(ValueError, match="no text to train on"):
        nbtok.train_bpe(iter([""]), 300, special_tokens=["<|endoftext|>"], progress=False)
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(ValueError, match="empty.txt is empty"):
        nbtok.train_bpe(tmp_path / "empty.txt", 300, progress=False)
    with pytest.raises(ValueError, match="empty list of files"):
        nbtok.train_bpe([], 300, progress=False)
    with pytest.warns(UserWarning, match="2 merges no pair of adjacent tokens is left"):
        tok = nbtok.train_bpe(iter(["aaaa"]), 300, progress=False)
    assert tok.merges == [(b"a", b"a"), (b"aa", b"aa")] or len(tok.merges) == 2  # then no pair is left
    tok = nbtok.train_bpe(iter(["hello"]), 256, progress=False)
    assert tok.merges == [] and tok.vocab_size == 256


def test_input_paths_are_checked(tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus_typo.txt"):
        nbtok.train_bpe(["corpus_typo.txt"], 32000, progress=False)
    with pytest.raises(FileNotFoundError):
        nbtok.train_bpe("corpus_typo.txt", 32000, progress=False)
    with pytest.raises(TypeError, match="list of file paths"):
        nbtok.train_bpe([b"abc"], 300, progress=False)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9 ol\u00e9 ".encode("latin-1") * 50)
    with pytest.raises(ValueError, match=r"latin1.txt is not UTF-8 \(invalid continuation byte at byte 3\)"):
        nbtok.train_bpe(bad, 300, progress=False)
    with pytest.warns(UserWarning):
        replaced = nbtok.train_bpe(bad, 300, progress=False, errors="replace")
    assert "\ufffd".encode() in replaced.vocab.values() or any(b"\xef\xbf\xbd" in v for v in replaced.vocab.values())
    with pytest.warns(UserWarning):
        ignored = nbtok.train_bpe(bad, 300, progress=False, errors="ignore")
    assert not any(b"\xe9" == v for v in ignored.vocab.values() if len(v) > 1)
    with pytest.raises(ValueError, match="errors must be one of"):
        nbtok.train_bpe(bad, 300, progress=False, errors="surrogateescape")


@pytest.mark.parametrize("args, kwargs, exc", [
    ((["abc"], 100), {}, ValueError),
    ((["abc"], 257), {"special_tokens": ["a", "b"]}, ValueError),
    ((["abc"], "500"), {}, TypeError),
    ((["abc"], 500.0), {}, TypeError),
    ((["abc"], 500), {"special_tokens": "<|endoftext|>"}, TypeError),
    ((["abc"], 500), {"special_tokens": [""]}, ValueError),
    ((["abc"], 500), {"special_tokens": ["x", "x"]}, ValueError),
    ((["abc"], 500), {"special_tokens": [b"x"]}, TypeError),
    ((["abc"], 500), {"tie_break": "smallest"}, ValueError),
    ((["abc"], 500), {"pattern": "(unclosed"}, ValueError),
    ((["abc"], 500), {"pattern": 5}, TypeError),
    ((["abc"], 500), {"num_threads": 0}, ValueError),
    ((123, 500), {}, TypeError),
    ((b"abc", 500), {}, TypeError),
    (("/no/such/file.txt", 500), {}, FileNotFoundError),
    (([b"abc"], 500), {}, TypeError),
    (([Path("/no/such/file.txt")], 500), {}, FileNotFoundError),
])
def test_bad_input(args, kwargs, exc):
    with pytest.raises(exc):
        nbtok.train_bpe(*args, progress=False, **kwargs)


# ---------------------------------------------------------------- 3. the trained tokenizer
@pytest.fixture(scope="module")
def trained():
    return nbtok.train_bpe(CORPUS_EN, 1000, special_tokens=["<|endoftext|>"], progress=False)


SAMPLES = ["", "s", "Hello, how are you?", "Héllò hôw <|endoftext|> are ü? 🙃<|endoftext|>",
           "the quick brown fox's  tail\n\n  123 4567"]


def test_trained_encode_matches_tiktoken(trained, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    path = tmp_path / "t.tiktoken"
    trained.save_tiktoken(path)
    enc = tiktoken.Encoding("trained", pat_str=GPT2_PAT, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens={"<|endoftext|>": 0})
    texts = SAMPLES + CORPUS_EN.read_text(encoding="utf-8").splitlines()[:300]
    for t in texts:
        ids = trained.encode(t, allowed_special="all")
        assert ids.tolist() == enc.encode(t, allowed_special="all"), t
        assert trained.decode(ids) == t
    # and a reloaded tiktoken file gives nbtok the same encodings
    again = nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2", special_tokens={"<|endoftext|>": 0})
    for t in texts[:50]:
        assert again.encode(t, allowed_special="all").tolist() == trained.encode(t, allowed_special="all").tolist()


def test_trained_save_gpt2_and_native(trained, tmp_path):
    vj, mt = tmp_path / "vocab.json", tmp_path / "merges.txt"
    trained.save_gpt2(vj, mt)
    lines = mt.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#version")
    enc = bytes_to_unicode()
    assert lines[1:] == [" ".join("".join(enc[x] for x in part) for part in m) for m in trained.merges]
    loaded = nbtok.Tokenizer.from_gpt2(vj, mt)
    trained.save(tmp_path / "native.nbtok")
    native = nbtok.Tokenizer.load(tmp_path / "native.nbtok")
    texts = SAMPLES + CORPUS_EN.read_text(encoding="utf-8").splitlines()[:100]
    for t in texts:
        want = trained.encode(t, allowed_special="all").tolist()
        assert native.encode(t, allowed_special="all").tolist() == want
        if "<|endoftext|>" not in t:  # vocab.json cannot mark <|endoftext|> as special
            assert loaded.encode(t).tolist() == want


def test_trained_pickles(trained):
    again = pickle.loads(pickle.dumps(trained))
    assert again.vocab == trained.vocab and again.merges == trained.merges
    assert again.encode("hello there").tolist() == trained.encode("hello there").tolist()


def test_trained_vocab_layout(trained):
    v = trained.vocab
    assert v[0] == b"<|endoftext|>"
    assert [v[1 + r] for r in range(256)] == [bytes([b]) for b in gpt2_byte_order()]
    for k, (a, b) in enumerate(trained.merges):
        assert v[257 + k] == a + b
    assert trained.vocab_size == len(v) == 1000


# ---------------------------------------------------------------- 4. HF tokenizers' BpeTrainer
def hf_train(docs, vocab_size, specials):
    """HF BpeTrainer with the ByteLevel pre-tokenizer (add_prefix_space=False, use_regex=True:
    the GPT-2 regex, no space prepended) and all 256 byte characters as initial alphabet, fed
    the same documents (split on special tokens first: HF's trainer does not split on them)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers
    import regex
    if specials:
        split = regex.compile("|".join(regex.escape(s) for s in specials))
        docs = [p for d in docs for p in split.split(d) if p]
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tr = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials), show_progress=False,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, tr)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(token_to_bytes(x, "merge") for x in (m.split(" ") if isinstance(m, str) else m))
              for m in model["merges"]]
    vocab = {i: (s.encode("utf-8") if s in specials else token_to_bytes(s, "vocab")) for s, i in model["vocab"].items()}
    return vocab, merges


def _lines(text):
    """A file's documents for HF's trainer: its lines, each with its "\\n" (only "\\n" ends a
    line, as Rust's ``read_line``; not "\\r", U+2028, ...)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def test_hf_tie_break_matches_bpetrainer_fixture():
    text = CORPUS_EN.read_text(encoding="utf-8")
    hv, hm = hf_train(_lines(text), 1500, ["<|endoftext|>"])
    tok = nbtok.train_bpe(CORPUS_EN, 1500, special_tokens=["<|endoftext|>"], tie_break="hf", progress=False)
    assert tok.merges == hm
    assert tok.vocab == hv
    # the two tie rules really differ on this corpus
    assert nbtok.train_bpe(CORPUS_EN, 1500, special_tokens=["<|endoftext|>"], progress=False).merges != hm


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=_docs, extra=st.integers(0, 60))
def test_hf_tie_break_matches_bpetrainer_random(docs, extra):
    pytest.importorskip("tokenizers")
    specials = ["<|endoftext|>"]
    if not "".join(docs):
        return  # no text: an error (test_tiny_and_empty_inputs)
    hv, hm = hf_train(docs, 257 + extra, specials)
    tok = nbtok.train_bpe(iter(docs), 257 + extra, special_tokens=specials, tie_break="hf", progress=False)
    assert tok.merges == hm
    assert tok.vocab == hv


HF_CORPORA = [("cs336/corpus.en", 3000), ("tinyshakespeare/input.txt", 3000), ("sentencepiece/botchan.txt", 3000),
              ("sentencepiece/wagahaiwa_nekodearu.txt", 6000), ("udhr", 6000)]


@pytest.mark.parametrize("name, vocab_size", HF_CORPORA)
def test_hf_tie_break_matches_bpetrainer_shared(shared_data, name, vocab_size):
    root = shared_data / "corpora" / name
    paths = sorted(root.glob("*.txt")) if root.is_dir() else [root]
    docs = [line for p in paths for line in _lines(p.read_bytes().decode("utf-8"))]  # keep CRLF as is
    hv, hm = hf_train(docs, vocab_size, ["<|endoftext|>"])
    tok = nbtok.train_bpe(paths, vocab_size, special_tokens=["<|endoftext|>"], tie_break="hf", progress=False)
    assert tok.merges == hm
    assert tok.vocab == hv


INDENTED = ("def f(x):\n    return x\n\n\n    \tindented  \n" * 40 + "class A:\r\n    pass\r\n  \r\n" * 30
            + "".join(f"{'  ' * (i % 5)}line {i} of text\n" for i in range(300)) + "no final newline")


def test_hf_tie_break_reads_files_line_by_line_as_hf(tmp_path):
    """HF's Tokenizer.train(files) reads a file line by line: no pre-token spans a newline and the
    next line's indentation. Files with indented lines, CRLF and blank lines, against HF's own
    file trainer; iterators keep each str one document."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers
    path = tmp_path / "indented.txt"
    path.write_bytes(INDENTED.encode("utf-8"))
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.train([str(path)], trainers.BpeTrainer(vocab_size=400, show_progress=False,
                                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    model = json.loads(tok.to_str())["model"]
    hm = [tuple(token_to_bytes(x, "merge") for x in (m.split(" ") if isinstance(m, str) else m)) for m in model["merges"]]
    ours = nbtok.train_bpe([path], 400, tie_break="hf", progress=False)
    assert ours.merges == hm
    assert hf_train(_lines(INDENTED), 400, [])[1] == hm   # the helper's line documents are HF's
    # an iterator of texts: each str is one document, as train_from_iterator
    docs = INDENTED.split("\n\n")
    assert nbtok.train_bpe(iter(docs), 400, tie_break="hf", progress=False).merges == hf_train(docs, 400, [])[1]
    # and a whole-file document differs: the test can fail
    assert nbtok.train_bpe(iter([INDENTED]), 400, tie_break="hf", progress=False).merges != hm
