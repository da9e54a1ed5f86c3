"""Byte-level BPE (issue 2): exact parity with tiktoken, special tokens, formats, errors."""
import pickle
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nbtok
from nbtok.formats.gpt2 import save_gpt2
from nbtok.formats.tiktoken import save_tiktoken_ranks

from conftest import FIXTURES, corpus_files
from reference import gpt2_ranks, tiktoken_gpt2_ranks_with, tiktoken_pattern

PATTERNS = ["gpt2", "cl100k_base", "o200k_base"]
SAMPLES = ["", "s", "🙃", "Hello, how are you?", "Héllò hôw are ü? 🙃", "  123  4567 ",
           "I'm here, they'll go; it's 'S' 'ſ", "\tfoo\n\n  bar \r\n\r\n baz   ", "HelloWorld HELLOworld",
           "a" * 3000, " " * 500 + "x", "日本語のテキスト、句読点。", "x\u0301\u0302y", "\u00a0\u3000 z"]


@pytest.fixture(scope="module")
def gpt2():
    return nbtok.get_encoding("gpt2")


@lru_cache(maxsize=None)
def nbtok_with(pattern_name):
    return nbtok.Tokenizer.from_tiktoken(_ranks_file(), pattern=tiktoken_pattern(pattern_name),
                                         special_tokens={"<|endoftext|>": 50256})


_RANKS_FILE = {}


def _ranks_file():
    if "path" not in _RANKS_FILE:
        import tempfile, os
        path = os.path.join(tempfile.mkdtemp(), "gpt2.tiktoken")
        save_tiktoken_ranks(gpt2_ranks(), path)
        _RANKS_FILE["path"] = path
    return _RANKS_FILE["path"]


def fixture_texts():
    return {p.name: p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "text").glob("*.txt"))}


def assert_same_batch(tok, ref, lines):
    ids, offsets = tok.encode_batch_ragged(lines, disallowed_special=())
    expected = ref.encode_ordinary_batch(lines, num_threads=2)
    flat = np.fromiter((t for doc in expected for t in doc), np.int32)
    exp_offsets = np.zeros(len(lines) + 1, np.int64)
    np.cumsum([len(d) for d in expected], out=exp_offsets[1:])
    if not (np.array_equal(offsets, exp_offsets) and np.array_equal(ids, flat)):
        bad = [i for i in range(len(lines)) if list(ids[offsets[i]:offsets[i + 1]]) != expected[i]]
        raise AssertionError(f"{len(bad)} of {len(lines)} documents differ, first: {lines[bad[0]]!r}")
    return len(lines)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_samples_match_tiktoken(pattern):
    tok, ref = nbtok_with(pattern), tiktoken_gpt2_ranks_with(pattern)
    for s in SAMPLES:
        assert tok.encode(s).tolist() == ref.encode(s), s
        assert tok.decode(tok.encode(s)) == s


@pytest.mark.parametrize("pattern", PATTERNS)
def test_fixture_texts_match_tiktoken(pattern):
    tok, ref = nbtok_with(pattern), tiktoken_gpt2_ranks_with(pattern)
    for name, text in fixture_texts().items():
        assert tok.encode_ordinary(text).tolist() == ref.encode_ordinary(text), name
        assert_same_batch(tok, ref, text.splitlines())


def test_bundled_gpt2_is_tiktoken_gpt2(gpt2):
    ref = tiktoken_gpt2_ranks_with("gpt2")
    assert gpt2.vocab_size == 50257
    text = fixture_texts()["tinystories_sample.txt"]
    assert gpt2.encode(text, allowed_special="all").tolist() == ref.encode(text, allowed_special="all")
    # CS336's per-token check
    ids = gpt2.encode("Hello, how are you?")
    assert [gpt2.decode([i]) for i in ids] == ["Hello", ",", " how", " are", " you", "?"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_hypothesis_unicode_matches_tiktoken(text):
    for pattern in PATTERNS:
        tok, ref = nbtok_with(pattern), tiktoken_gpt2_ranks_with(pattern)
        ids = tok.encode_ordinary(text)
        assert ids.tolist() == ref.encode_ordinary(text)
        assert tok.decode(ids) == text


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(" \t\n\r'sStTlLdDmMvVeEr0123456789aZé日。!?/\u00a0\u2028ſ")), max_size=80))
def test_hypothesis_tricky_alphabet_matches_tiktoken(text):
    for pattern in PATTERNS:
        tok, ref = nbtok_with(pattern), tiktoken_gpt2_ranks_with(pattern)
        assert tok.encode_ordinary(text).tolist() == ref.encode_ordinary(text)


def test_batch_equals_single(gpt2):
    lines = fixture_texts()["udhr_rus.txt"].splitlines() + ["", "<|endoftext|>x"]
    batch = gpt2.encode_batch(lines, allowed_special="all")
    assert [b.tolist() for b in batch] == [gpt2.encode(s, allowed_special="all").tolist() for s in lines]
    for threads in (1, 2):
        ids, offsets = gpt2.encode_batch_ragged(lines, allowed_special="all", num_threads=threads)
        assert np.array_equal(ids, np.concatenate(batch))
    assert gpt2.decode_batch(batch) == lines
    assert gpt2.encode_batch([]) == []


# ---------------------------------------------------------------- special tokens
def test_special_tokens_follow_tiktoken(gpt2):
    ref = tiktoken_gpt2_ranks_with("gpt2")
    text = "Héllò hôw <|endoftext|><|endoftext|> are ü? 🙃<|endoftext|>"
    assert gpt2.encode(text, allowed_special="all").tolist() == ref.encode(text, allowed_special="all")
    assert (gpt2.encode(text, allowed_special={"<|endoftext|>"}) == 50256).sum() == 3
    assert gpt2.encode(text, disallowed_special=()).tolist() == ref.encode(text, disallowed_special=())
    with pytest.raises(ValueError, match="disallowed special token"):
        gpt2.encode(text)
    with pytest.raises(ValueError, match="disallowed special token"):
        gpt2.encode_batch(["fine", text])
    assert gpt2.encode_ordinary(text).tolist() == ref.encode_ordinary(text)
    with pytest.raises(ValueError, match="unknown special"):
        gpt2.encode("x", allowed_special={"<|nope|>"})


def test_overlapping_special_tokens_longest_wins():
    specials = {"<|endoftext|>": 50256, "<|endoftext|><|endoftext|>": 50257}
    tok = nbtok.Tokenizer.from_tiktoken(_ranks_file(), pattern="gpt2", special_tokens=specials)
    ids = tok.encode("Hello<|endoftext|><|endoftext|> x<|endoftext|>", allowed_special="all").tolist()
    assert ids.count(50257) == 1 and ids.count(50256) == 1
    assert tok.decode(ids) == "Hello<|endoftext|><|endoftext|> x<|endoftext|>"


def test_special_token_inside_regex_piece_splits_it(gpt2):
    ref = tiktoken_gpt2_ranks_with("gpt2")
    for text in ["abc<|endoftext|>def", "  <|endoftext|>  ", "1<|endoftext|>2", "<|endoftext|>"]:
        assert gpt2.encode(text, allowed_special="all").tolist() == ref.encode(text, allowed_special="all")


def test_batch_disallowed_special_is_found_per_document(gpt2):
    ref = tiktoken_gpt2_ranks_with("gpt2")
    texts = ["plain", "x <|endoftext|>", "ascii only"]
    with pytest.raises(ValueError, match="disallowed special token"):
        gpt2.encode_batch(texts)
    straddling = ["ends with <|endof", "text|> starts the next"]  # no document holds the token
    got = [x.tolist() for x in gpt2.encode_batch(straddling)]
    assert got == ref.encode_batch(straddling)
    mixed = ["héllo", "ok", "日本"]  # the non-ASCII packing path
    assert [x.tolist() for x in gpt2.encode_batch(mixed)] == ref.encode_batch(mixed)


def test_lone_surrogates_behave_like_tiktoken(gpt2):
    ref = tiktoken_gpt2_ranks_with("gpt2")
    for text in ["a\ud800b", "\udfff", "x\ud83d\ude43y", "\ud83d"]:
        assert gpt2.encode(text).tolist() == ref.encode(text)
    assert [a.tolist() for a in gpt2.encode_batch(["a\ud800b", "ok"])] == [ref.encode("a\ud800b"), ref.encode("ok")]


# ---------------------------------------------------------------- worst cases
@pytest.mark.parametrize("kind", ["letter", "english_letters", "base64", "chinese", "spaces"])
def test_no_whitespace_inputs_match_tiktoken(gpt2, kind):
    """One piece of up to 100,000 symbols: the merge loop runs on its run queue."""
    rng = np.random.default_rng(0)
    n = 100_000
    if kind == "letter":
        text = "a" * n
    elif kind == "english_letters":  # real subwords, whose ranks are not monotone in length
        text = re.sub(r"[^A-Za-z]+", "", (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8"))
    elif kind == "base64":
        import base64
        text = base64.b64encode(rng.bytes(n * 3 // 4)).decode()
    elif kind == "chinese":
        text = "".join(chr(c) for c in rng.integers(0x4E00, 0x9FA5, n // 3))
    else:
        text = " " * n + "a"
    ref = tiktoken_gpt2_ranks_with("gpt2")
    ids = gpt2.encode(text)
    assert ids.tolist() == ref.encode(text)
    assert gpt2.decode(ids) == text


# ---------------------------------------------------------------- formats
def test_gpt2_files_round_trip(tmp_path, gpt2):
    vocab_json, merges_txt = tmp_path / "vocab.json", tmp_path / "merges.txt"
    gpt2.save_gpt2(vocab_json, merges_txt)
    again = nbtok.Tokenizer.from_gpt2(vocab_json, merges_txt)
    text = fixture_texts()["german.txt"] + fixture_texts()["udhr_hin.txt"]
    assert again.encode(text).tolist() == gpt2.encode(text).tolist()
    assert again.vocab_size == gpt2.vocab_size
    assert again.encode("<|endoftext|>", allowed_special="all").tolist() == [50256]


def test_tiktoken_file_round_trip(tmp_path, gpt2):
    path = tmp_path / "r.tiktoken"
    gpt2.save_tiktoken(path)
    assert path.read_bytes().splitlines()[:300] == _gz_lines()[:300]


def _gz_lines():
    import gzip
    from importlib import resources
    return gzip.decompress((resources.files("nbtok") / "data" / "gpt2.tiktoken.gz").read_bytes()).splitlines()


def test_native_and_pickle_round_trip(tmp_path, gpt2):
    path = tmp_path / "gpt2.nbtok"
    gpt2.save(path)
    text = fixture_texts()["udhr_jpn.txt"]
    assert nbtok.Tokenizer.load(path).encode(text).tolist() == gpt2.encode(text).tolist()
    assert pickle.loads(pickle.dumps(gpt2)).encode(text).tolist() == gpt2.encode(text).tolist()


@pytest.mark.parametrize("content, where", [
    (b"aGVsbG8= 0\nnot-base64!! 1\n", ":2: bad base64"),
    (b"aGVsbG8= 0\naGk= x\n", ":2: bad rank"),
    (b"aGVsbG8= 0\naGk= -1\n", ":2: bad rank"),
    (b"aGVsbG8= 0\naGk= 2147483648\n", ":2: bad rank"),
    (b"aGVsbG8=\n", ":1: expected"),
    (b"aGVsbG8= 0 1\n", ":1: expected"),
    (b"aGVsbG8= 0\naGVsbG8= 1\n", ":2: duplicate token"),
    (b"aGVsbG8= 0\r\n\r\naGk= 0\n", ":3: duplicate rank"),
    (b"aGVsbG8 0\n", ":1: bad base64"),
    (b"aG=sbG8= 0\n", ":1: bad base64"),
    (b"aGk== 0\n", ":1: bad base64"),
    (b"==== 0\n", ":1: bad base64"),
    (b"", "no ranks"),
    (b"\x1f\x8b\x08\x00garbage", "corrupt gzip"),
])
def test_bad_tiktoken_files_raise(tmp_path, content, where):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=where):
        nbtok.Tokenizer.from_tiktoken(path)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.binary(min_size=1, max_size=40), st.integers(0, 2**31 - 1), max_size=50),
       st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_tiktoken_ranks_parse_like_tiktoken(tmp_path_factory, ranks, eol):
    """nbtok's rank-file kernel reads what tiktoken's loader reads (any bytes, any line end)."""
    from tiktoken.load import load_tiktoken_bpe
    from nbtok.formats.tiktoken import load_tiktoken_ranks
    ranks = {tok: r for r, tok in {r: tok for tok, r in ranks.items()}.items()}  # distinct ranks
    path = tmp_path_factory.mktemp("ranks") / "r.tiktoken"
    save_tiktoken_ranks(ranks, path)
    path.write_bytes(b"\n" + path.read_bytes().replace(b"\n", eol) + b"\n")  # with blank lines
    if ranks:
        assert load_tiktoken_ranks(path) == load_tiktoken_bpe(str(path)) == ranks
    else:
        with pytest.raises(ValueError, match="no ranks"):
            load_tiktoken_ranks(path)


def test_bundled_ranks_parse_like_tiktoken(tmp_path):
    import gzip
    from importlib import resources
    from tiktoken.load import load_tiktoken_bpe
    from nbtok.formats.tiktoken import load_tiktoken_ranks
    path = tmp_path / "gpt2.tiktoken"
    path.write_bytes(gzip.decompress((resources.files("nbtok") / "data" / "gpt2.tiktoken.gz").read_bytes()))
    assert load_tiktoken_ranks(path) == load_tiktoken_bpe(str(path))


def test_ranks_missing_a_byte_raise(tmp_path):
    path = tmp_path / "small.tiktoken"
    save_tiktoken_ranks({bytes([b]): b for b in range(255)}, path)
    with pytest.raises(ValueError, match="0xff"):
        nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2")


def test_bad_gpt2_files_raise(tmp_path):
    vocab, merges = tmp_path / "v.json", tmp_path / "m.txt"
    vocab.write_text('{"a": 0, "b": ')
    merges.write_text("#version: 0.2\na b\n")
    with pytest.raises(ValueError, match="v.json:1"):
        nbtok.Tokenizer.from_gpt2(vocab, merges)
    save_gpt2({bytes([b]): b for b in range(256)}, [], {}, vocab, merges)
    merges.write_text("#version: 0.2\na b c\n")
    with pytest.raises(ValueError, match="m.txt:2"):
        nbtok.Tokenizer.from_gpt2(vocab, merges)
    merges.write_text("#version: 0.2\na b\n")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        nbtok.Tokenizer.from_gpt2(vocab, merges)
    with pytest.raises(ValueError, match="cannot read"):
        nbtok.Tokenizer.from_gpt2(tmp_path / "missing.json", merges)


def test_bad_ids_and_types(gpt2):
    with pytest.raises(ValueError):
        gpt2.decode([50257])
    with pytest.raises(ValueError):
        gpt2.decode([-1])
    assert gpt2.encode(b"bytes").tolist() == gpt2.encode("bytes").tolist()  # UTF-8 bytes, as every model
    with pytest.raises(TypeError):
        gpt2.encode(None)
    with pytest.raises(TypeError):
        gpt2.decode([1.5])
    assert gpt2.decode([]) == ""
    ids = gpt2.encode("🙃")
    assert len(ids) > 1 and b"".join(gpt2.decode_bytes([i]) for i in ids) == "🙃".encode()
    assert gpt2.decode(ids[:1]) == "\ufffd"


def test_vocabulary_accessors(gpt2):
    assert gpt2.id_to_piece(gpt2.piece_to_id("Ġthe")) == "Ġthe"
    assert gpt2.piece_to_id("<|endoftext|>") == 50256
    assert gpt2.piece_to_id("no such piece at all!!!") == -1
    assert gpt2.encode_as_pieces("Hello world") == ["Hello", "Ġworld"]


# ---------------------------------------------------------------- the shared corpora
@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_corpus_line_matches_tiktoken(shared_data, pattern):
    tok, ref = nbtok_with(pattern), tiktoken_gpt2_ranks_with(pattern)
    docs = 0
    for path in corpus_files(shared_data):
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        for i in range(0, len(lines), 50_000):
            docs += assert_same_batch(tok, ref, lines[i:i + 50_000])
    print(f"{pattern}: {docs} documents compared, 0 mismatches")
    assert docs > 100_000


def test_custom_regex_falls_back_to_regex_module_like_tiktoken():
    """A pattern nbtok has no scanner for runs on the regex module; text it does not match is
    dropped, as tiktoken drops it."""
    import tiktoken
    from nbtok.models.bytelevel import ByteLevelBPE
    pattern = r"""\p{L}+|\p{N}|[^\p{L}\p{N}\s]+"""
    tok = nbtok.Tokenizer(ByteLevelBPE.from_ranks(gpt2_ranks(), pattern, {"<|endoftext|>": 50256}))
    ref = tiktoken.Encoding("custom", pat_str=pattern, mergeable_ranks=gpt2_ranks(),
                            special_tokens={"<|endoftext|>": 50256})
    assert tok.model.pre.cfg is None
    lines = fixture_texts()["udhr_rus.txt"].splitlines() + ["a <|endoftext|> b", "  ", ""]
    assert_same_batch(tok, ref, lines)
    for allowed in ("all", set()):
        got = tok.encode_batch(lines, allowed_special=allowed, disallowed_special=())
        assert [g.tolist() for g in got] == [ref.encode(l, allowed_special=allowed, disallowed_special=()) for l in lines]


def test_native_file_with_bad_offsets_is_rejected(tmp_path, gpt2):
    import zipfile
    path = tmp_path / "gpt2.nbtok"
    gpt2.save(path)
    bad = tmp_path / "bad.nbtok"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "state/vocab/piece_offsets.npy":
                import io
                offs = np.load(io.BytesIO(data))
                offs[5] = 10 ** 9
                buf = io.BytesIO()
                np.save(buf, offs)
                data = buf.getvalue()
            dst.writestr(item, data)
    with pytest.raises(ValueError, match="piece_offsets"):
        nbtok.Tokenizer.load(bad)


def test_pre_tokens_that_are_tokens_bpe_does_not_reach_like_tiktoken():
    """tiktoken returns a pre-token that is a token as that token, even where its merges never
    build it: pre-tokens of up to 16 bytes are looked up before BPE, longer ones after
    (``encode_miss``, ``encode_uncached``); the first time and again from the pre-token cache."""
    import tiktoken
    from nbtok.models.bytelevel import ByteLevelBPE
    ranks = {bytes([b]): b for b in range(256)}
    unreachable = [b"xyz", b" " + b"q" * 15, b" " + b"s" * 20, b" " + b"r" * 40]  # no merge builds them
    for piece in [b"ab"] + unreachable:
        ranks[piece] = len(ranks)
    tok = nbtok.Tokenizer(ByteLevelBPE.from_ranks(ranks, "gpt2", {}))
    ref = tiktoken.Encoding("unreachable", pat_str=tiktoken_pattern("gpt2"), mergeable_ranks=ranks,
                            special_tokens={})
    once = "xyz " + "q" * 15 + " " + "s" * 20 + " " + "r" * 40 + " ab xyzz " + "q" * 16
    text = once + " " + once
    expected = ref.encode_ordinary(text)
    assert [expected.count(ranks[p]) for p in unreachable] == [1, 2, 2, 2]
    assert tok.encode(text).tolist() == expected
    assert [x.tolist() for x in tok.encode_batch([text, once], disallowed_special=())] == [
        expected, ref.encode_ordinary(once)]


def test_openai_rank_files_are_recognised_by_content(tmp_path):
    import gzip
    bundled = Path(nbtok.__file__).parent / "data" / "gpt2.tiktoken.gz"
    plain = tmp_path / "some_name.tiktoken"
    plain.write_bytes(gzip.decompress(bundled.read_bytes()))
    for path in (plain, bundled):  # r50k_base, plain or gzipped, under any name
        tok = nbtok.Tokenizer.from_tiktoken(path)
        assert tok.special_tokens == {"<|endoftext|>": 50256}
        assert tok.encode("DON'T hello").tolist() == nbtok.get_encoding("gpt2").encode("DON'T hello").tolist()
    edited = tmp_path / "edited.tiktoken"
    edited.write_bytes(plain.read_bytes().replace(b"\n", b"\r\n", 1))  # same ranks, other bytes
    with pytest.raises(ValueError, match="pre-tokenizer must be given"):
        nbtok.Tokenizer.from_tiktoken(edited)
    assert nbtok.Tokenizer.from_tiktoken(edited, pattern="gpt2").special_tokens == {}


def test_whisper_empty_token_line_loads(tmp_path):
    import gzip
    bundled = Path(nbtok.__file__).parent / "data" / "gpt2.tiktoken.gz"
    lines = gzip.decompress(bundled.read_bytes()).split(b"\n")
    path = tmp_path / "multilingual.tiktoken"
    path.write_bytes(b"\n".join([line for line in lines if line] + [b"= 50257"]) + b"\n")  # as Whisper writes it
    tok = nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2", special_tokens={"<|endoftext|>": 50258})
    assert tok.encode("Hello world").tolist() == [15496, 995]
    assert tok.encode("<|endoftext|>", allowed_special="all").tolist() == [50258]
    with pytest.raises(ValueError, match="token id 50257 is not in the vocabulary"):
        tok.decode([50257])


ZOO_OPENAI = Path(__file__).resolve().parents[2] / "shared" / "data" / "zoo" / "openai-tiktoken"


@pytest.mark.skipif(not ZOO_OPENAI.is_dir(), reason="../shared/data/zoo is absent (the real OpenAI rank files)")
@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_real_openai_files_without_a_pattern_match_tiktoken(name):
    import hashlib
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    from nbtok.formats.tiktoken import OPENAI_ENCODINGS
    path = ZOO_OPENAI / f"{name}.tiktoken"
    _, _, specials = OPENAI_ENCODINGS[hashlib.sha256(path.read_bytes()).hexdigest()]
    ref = tiktoken.Encoding(name, pat_str=tiktoken_pattern(name), mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=specials)
    tok = nbtok.Tokenizer.from_tiktoken(path)
    assert tok.special_tokens == specials
    for text in ["DON'T stop", "Hello world 1234567", "  spaces\n\nand lines", "日本語 émoji 🙂"]:
        assert tok.encode(text).tolist() == ref.encode(text), text
    assert tok.encode("<|endoftext|>", allowed_special="all").tolist() == [specials["<|endoftext|>"]]
