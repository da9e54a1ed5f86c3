"""Parity of the byte-level pre-tokenizer scanner with ``regex.findall`` (and tiktoken).

Every known pattern string is run by the Numba scanner and compared with ``regex.findall`` on
hand-written tricky cases, hypothesis-generated text, and (when ../shared/data exists) every line
of every corpus file.
"""

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nbtok.pre_tokenizers.bytelevel import (CL100K, GPT2_ORIGINAL, LLAMA3, NANOCHAT, O200K, PATTERNS, QWEN2, QWEN35,
                                            R50K, Pretokenizer, scanner_config)
from nbtok.pre_tokenizers.unicode_classes import load_table, versions

from conftest import corpus_files, regex_agrees

LLAMACPP_CONTR = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"  # llama.cpp's spelling: no 'ſ
TIKTOKEN_GPT2_COMMENT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?[\p{L}]+| ?[\p{N}]+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# (name, pattern string) -- every one must be recognised by the scanner
SCANNED = {
    "r50k": R50K,
    "gpt2_original": GPT2_ORIGINAL,
    "gpt2_comment": TIKTOKEN_GPT2_COMMENT,
    "cl100k": CL100K,
    "llama3": LLAMA3,
    "o200k": O200K,
    "qwen2": QWEN2,
    "nanochat": NANOCHAT,
    "qwen35": QWEN35,
    "qwen35_llamacpp": QWEN35.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", LLAMACPP_CONTR),
    "qwen2_llamacpp": QWEN2.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)", LLAMACPP_CONTR),
    "qwen35_literal_crlf": QWEN35.replace(r"\r", "\r").replace(r"\n", "\n"),  # as some tokenizer.json hold it
    "gpt2_marks": GPT2_ORIGINAL.replace(r" ?\p{L}+", r" ?[\p{L}\p{M}]+").replace(
        r"[^\s\p{L}\p{N}]", r"[^\s\p{L}\p{M}\p{N}]"),
    # variants: digit groups, with and without \s++$, attached contractions with cl100k letters
    "cl100k_digits2": CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,2}+"),
    "cl100k_digits_unbounded": CL100K.replace(r"\p{N}{1,3}+", r"\p{N}++"),
    "cl100k_no_end": CL100K.replace(r"\s++$|", ""),
    "o200k_digits1": O200K.replace(r"\p{N}{1,3}", r"\p{N}"),
    "o200k_end": O200K.replace(r"|\s*[\r\n]+", r"|\s++$|\s*[\r\n]+"),
    "o200k_no_contr": O200K.replace(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?", ""),
    "o200k_cl100k_ws": O200K.replace(r"[\r\n/]*", r"[\r\n]*"),
    "gpt2_digits3": R50K.replace(r" ?\p{N}++", r"\p{N}{1,3}"),
    "gpt2_icase": R50K.replace("'(?:[sdmt]", "'(?i:[sdmt]"),
    "llama3_attached": LLAMA3.replace("(?i:'s|'t|'re|'ve|'m|'ll|'d)|", "").replace(
        r"\p{L}+|", r"\p{L}+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"),
}
MAIN = ["r50k", "gpt2_original", "cl100k", "llama3", "o200k", "qwen2", "nanochat", "qwen35"]

TRICKY = [
    "", "a", " ", "\n", "Hello world", "Hello world's  123 \tfoo  \n\n bar   ",
    "'s 'S 'ſ 'ſt 'st 'LL 'Re 'rE x'sx 'll've'd'm't", "he's HE'S he'ſ don't I'LL we'VE 'sup",
    "''s '''", "  123", " 1234567 89", "\tfoo", "a  \n\n b", "trailing spaces   ", "trailing\n  ",
    "a\r\n\r\n  b\r\n", "\r\n\r\n", "x \r\n \r\n y", "HelloWorld", "HELLOworld", "HELLO", "helloWORLD",
    "ǅemal ǈubljana ǋ", "e\u0301t\u0301 \u0301x", "\u0301HELLO", "\u0301", "a\u0301\u0301",
    "Ça va? ÉCOLE école", "١٢٣٤٥ ४२ ๑๒๓ ①②③ Ⅻ ½", "a\u00a0b\u3000c \u00a0 x", "\u3000\u3000x",
    "😀👍🏽 x 🇫🇷 👨‍👩‍👧", " /\n/x", "...\n/.", "x/\n\n/y", "(hello) [world]!", "\"quoted\"",
    "\x0b\x0cx\x85y\u2028z\u2029", "a\x1cb\x1fc", "中文字符 テスト 한국어", "ʰʰA AᵃB aʰ",
    "snake_case_name CONSTANT_NAME camelCaseName", "$100.00, 3.14159 v2.0.1",
    "tab\tsep\t\tend\t", "   leading", "\n\n\nx", "x\n\n\n", "' s", "'\n", "'", " '", "  'x",
]

ALPHA = [" ", "  ", "\n", "\r", "\r\n", "\t", "'", "s", "S", "ſ", "t", "ll", "LL", "re", "Ve", "d",
         "M", "a", "B", "1", "٣", "23", ".", "/", "!", "-", "\u0301", "\u00a0", "\u3000", "é", "É",
         "ǅ", "ʰ", "中", "😀", "\u2028", "\x0b", "\x85", "x", "Hello", "WORLD", "ﬁ", "K", "İ", "्", "\u0903",
         "a\u0301", ".\u0301"]


def _compiled():
    return {k: (Pretokenizer(p), regex.compile(p)) for k, p in SCANNED.items()}


COMPILED = _compiled()


def check(key, text):
    """The scanner (pinned Unicode 17.0 table) against ``regex.findall``. Hypothesis leaves out
    text holding a code point the installed ``regex`` release classifies differently (it is the
    oracle's Unicode version that differs there, not the scanner's logic)."""
    pre, rx = COMPILED[key]
    assert pre.split(text) == rx.findall(text), (key, text)


def test_table_metadata():
    rx_version, ucd, tk_ucd, hf_ucd = versions()
    assert ucd == "17.0" and tk_ucd == "16.0" and hf_ucd == "16.0"
    assert np.array_equal(load_table("hf"), load_table("tiktoken"))
    t = load_table()
    assert t.shape == (0x110000,) and t.dtype == np.uint8
    assert np.count_nonzero(t & 4) == 25  # Unicode White_Space
    assert t[0x17F] & 16  # ſ is Ll
    assert not t[0x1C] & 4  # Python re's \s has U+001C..U+001F, regex/Rust do not


@pytest.mark.parametrize("key", list(SCANNED))
def test_all_known_strings_use_the_scanner(key):
    assert COMPILED[key][0].cfg is not None


def test_names():
    for name in ["gpt2", "r50k_base", "p50k_base", "cl100k", "cl100k_base", "o200k", "o200k_base",
                 "llama3", "qwen2", "nanochat", "gpt2_original", "o200k_harmony"]:
        cfg = scanner_config(name)
        assert cfg is not None and cfg.dtype == np.int64
        assert Pretokenizer(name).pattern == PATTERNS[name]
    assert np.array_equal(scanner_config("gpt2"), scanner_config(R50K))
    assert scanner_config(r"\w+|\s+") is None
    assert np.array_equal(scanner_config("gpt-4o"), scanner_config("o200k"))
    with pytest.raises(ValueError, match="unknown pre-tokenizer pattern name"):
        Pretokenizer("gpt3")


@pytest.mark.parametrize("key", list(SCANNED))
def test_tricky(key):
    for text in TRICKY:
        check(key, text)


def test_documented_cases():
    gpt2, cl, o2 = (Pretokenizer(n).split for n in ("gpt2", "cl100k", "o200k"))
    assert gpt2("'st") == ["'s", "t"] and cl("'ſt") == ["'ſ", "t"]
    assert gpt2("'S") == ["'", "S"] and cl("'S") == ["'S"]
    assert cl("  123") == [" ", " ", "123"]
    assert cl("\tfoo") == ["\tfoo"]
    assert o2("HelloWorld") == ["Hello", "World"] and o2("HELLOworld") == ["HELLOworld"]
    assert o2("don't") == ["don't"] and cl("don't") == ["don", "'t"]
    assert cl("x\n  ") == ["x", "\n  "] and o2("x\n  ") == ["x", "\n", "  "]  # \s++$ only in cl100k
    q35, q35cpp = Pretokenizer("qwen35").split, Pretokenizer(SCANNED["qwen35_llamacpp"]).split
    assert q35("'ſ .\u0301x") == ["'ſ", " .", "\u0301x"] and q35cpp("'ſ") == ["'ſ"]
    assert q35cpp("a'ſ") == ["a", "'ſ"] and q35("a'ſ") == ["a", "'ſ"] and q35cpp("'ſa") == ["'ſa"]


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hypothesis_any_unicode(text):
    assume(regex_agrees(text))
    for key in SCANNED:
        check(key, text)


@given(st.lists(st.sampled_from(ALPHA), max_size=25).map("".join))
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_hypothesis_biased(text):
    assume(regex_agrees(text))
    for key in SCANNED:
        check(key, text)


@given(st.text(st.sampled_from(" \t\n\r'sStT1.\u0301Aa"), max_size=30))
@settings(max_examples=800, deadline=None)
def test_hypothesis_small_alphabet(text):
    assume(regex_agrees(text))
    for key in SCANNED:
        check(key, text)


@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30), st.integers(0, 5))
@settings(max_examples=200, deadline=None)
def test_ends_are_absolute_and_contiguous(text, pad):
    assume(regex_agrees(text))
    pre = Pretokenizer("cl100k")
    body = text.encode("utf-8")
    buf = np.frombuffer(b"x" * pad + body + b"y" * pad, np.uint8)
    ends = pre.ends(buf, pad, pad + len(body))
    assert ends.dtype == np.int64
    if body:
        assert ends[-1] == pad + len(body) and np.all(np.diff(ends) > 0) and ends[0] > pad
    else:
        assert len(ends) == 0
    starts = np.concatenate([[pad], ends[:-1]])
    assert [bytes(buf[s:e]).decode() for s, e in zip(starts, ends)] == regex.findall(CL100K, text)


@pytest.mark.parametrize("name", ["gpt2", "o200k", r"\p{L}+| ?[0-9]+"])
def test_ends_batch(name):
    pre = Pretokenizer(name)
    docs = TRICKY[:30]
    raw = [d.encode("utf-8") for d in docs]
    buf = np.frombuffer(b"".join(raw), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in raw])]).astype(np.int64)
    ends, counts = pre.ends_batch(buf, offsets)
    assert counts.dtype == np.int64 and counts.shape == (len(docs),)
    k = 0
    for d in range(len(docs)):
        assert np.array_equal(ends[k:k + counts[d]], pre.ends(buf, offsets[d], offsets[d + 1]))
        k += counts[d]
    assert k == len(ends)


def test_fallback_drops_unmatched_text_like_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    pattern = r"\p{L}+| ?[0-9]+"
    pre = Pretokenizer(pattern)
    assert pre.cfg is None
    text = "héllo, wörld 42! ∑x 7"
    assert pre.split(text) == regex.findall(pattern, text)
    b = text.encode("utf-8")
    ends = pre.ends(b)
    assert np.any(ends < 0)
    s, e = pre.spans(b)
    assert [b[i:j].decode() for i, j in zip(s, e)] == regex.findall(pattern, text)
    enc = tiktoken.Encoding("probe", pat_str=pattern, special_tokens={},
                            mergeable_ranks={bytes([i]): i for i in range(256)})
    assert enc.decode_bytes(enc.encode_ordinary(text)) == "".join(pre.split(text)).encode()
    iso = Pretokenizer(pattern, unmatched="isolate")
    assert "".join(iso.split(text)) == text and np.all(iso.ends(b) > 0)


# letters, digits and symbols assigned after Unicode 16.0 (by the installed ``regex``, when it is newer)
NEWER_THAN_16 = "ab\u0558cd \U0001FAEA\u0558!x \U00011DE0z9 \U0001FAEA"


def test_regex_fallback_matches_with_the_references_unicode():
    """A pattern the scanner does not know runs on ``regex``; a ``regex`` newer than Unicode 16.0
    would give the characters assigned since then classes that HF tokenizers' Oniguruma and
    tiktoken do not, so they are matched as unassigned code points (``PinnedUnicodeRegex``)."""
    tokenizers = pytest.importorskip("tokenizers")
    tiktoken = pytest.importorskip("tiktoken")
    from nbtok.compat import tokenizers as compat
    pattern = r"[^\s\p{L}\p{N}]+|\p{L}+|\p{N}|\s+"
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), "isolated")
    ours = compat.pre_tokenizers.Split(compat.Regex(pattern), "isolated")
    assert ours.pre_tokenize_str(NEWER_THAN_16) == split.pre_tokenize_str(NEWER_THAN_16)
    # every substring of the text is a token, so each of tiktoken's pre-tokens becomes one token
    b = NEWER_THAN_16.encode("utf-8")
    subs = sorted({b[i:j] for i in range(len(b)) for j in range(i + 2, len(b) + 1)}, key=lambda t: (len(t), t))
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({t: 256 + r for r, t in enumerate(subs)})
    enc = tiktoken.Encoding("probe", pat_str=pattern, special_tokens={}, mergeable_ranks=ranks)
    pre = Pretokenizer(pattern)
    assert pre.cfg is None
    assert [p.encode("utf-8") for p in pre.split(NEWER_THAN_16)] == [
        enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(NEWER_THAN_16)]


def test_lone_surrogates_become_replacement_char():
    pre = Pretokenizer("cl100k")
    assert pre.split("a\ud800b") == regex.findall(CL100K, "a\ufffdb")


# ---------------------------------------------------------------------------------------------
# whole corpora


def _compare_file(pre, rx, lines):
    """Compare every line; returns (lines compared, mismatching lines)."""
    raw = [ln.encode("utf-8") for ln in lines]
    buf = np.frombuffer(b"".join(raw), np.uint8)
    lens = np.array([len(r) for r in raw], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    ends, counts = pre.ends_batch(buf, offsets)
    flat = b"".join(raw)
    if b"\x00" in flat or b"\x01" in flat:
        bad = [ln for ln in lines if pre.split(ln) != rx.findall(ln)]
        return len(lines), bad
    # ours: \x00 between the pieces of a line, \x01 after each non-empty line
    last = np.cumsum(counts)[counts > 0] - 1
    sep = np.zeros(len(ends), np.uint8)
    sep[last] = 1
    ours = np.insert(buf, ends, sep).tobytes()
    f = rx.findall
    theirs = "\x01".join("\x00".join(f(ln)) for ln in lines if ln).encode("utf-8")
    theirs = theirs + b"\x01" if theirs else theirs
    if ours == theirs:
        return len(lines), []
    return len(lines), [ln for ln in lines if pre.split(ln) != f(ln)]


@pytest.mark.parametrize("key", MAIN)
def test_corpus_lines(shared_data, key):
    pre, rx = COMPILED[key]
    full = key in ("r50k", "cl100k", "o200k")  # the variants skip the 56 MB bench corpus
    total, mismatches = 0, []
    for path in corpus_files(shared_data):
        if not full and "bench" in path.parts:
            continue
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        n, bad = _compare_file(pre, rx, lines)
        total += n
        mismatches += [(path.name, ln) for ln in bad[:3]]
    print(f"\n{key}: {total} lines compared, {len(mismatches)} mismatching")
    assert total > 100_000
    assert mismatches == []


@pytest.mark.parametrize("name,model", [("cl100k", "tiktoken/cl100k_base.tiktoken"), ("gpt2", "gpt2/gpt2.tiktoken")])
def test_tiktoken_split_parity(shared_data, name, model):
    """tiktoken's own regex split agrees: its ids equal BPE over our pieces one by one."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    ranks = load_tiktoken_bpe(str(shared_data / "models" / model))
    enc = tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})
    pre = Pretokenizer(name, unicode="tiktoken")
    total = 0
    for path in corpus_files(shared_data):
        if "bench" in path.parts or "udhr" in path.parts and path.name > "udhr_c":
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        for line in text.splitlines()[:600]:
            ids = [i for piece in pre.split(line) for i in enc._encode_single_piece(piece)]
            assert ids == enc.encode_ordinary(line), (path.name, line)
            total += 1
    print(f"\n{name}: {total} lines identical to tiktoken")
    assert total > 5_000


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_tiktoken_unicode_table(shared_data, name):
    """regex is Unicode 17.0, tiktoken 16.0: the "tiktoken" table follows tiktoken where they differ."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe
    ranks = load_tiktoken_bpe(str(shared_data / "models" / "tiktoken" / "cl100k_base.tiktoken"))
    enc = tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})
    # U+0295 is Ll in 16.0 and Lo in 17.0; U+1E6C0 is unassigned in 16.0 and Lo in 17.0
    texts = ["\u0295Ab", "x\U0001E6C0y", " \U0001E6C0\U0001E6C0 abc", "\u0295\u0295B c"]
    for text in texts:
        ids = enc.encode_ordinary(text)
        ours = Pretokenizer(name, unicode="tiktoken").split(text)
        assert [i for p in ours for i in enc._encode_single_piece(p)] == ids, text
        assert Pretokenizer(name).split(text) == regex.findall(PATTERNS[name], text)
    assert any(Pretokenizer(name).split(t) != Pretokenizer(name, unicode="tiktoken").split(t) for t in texts)


def _hf_sequence(patterns):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers
    return pre_tokenizers.Sequence([pre_tokenizers.Split(tokenizers.Regex(p), behavior="isolated", invert=False)
                                    for p in patterns])


def test_deepseek_sequence_tricky():
    hf = _hf_sequence(PATTERNS["deepseek_v3"])
    pre = Pretokenizer("deepseek_v3")
    assert pre.cfg is None and pre.unmatched == "isolate"
    for text in TRICKY + ["中文123456字符 テスト、かな。(abc)_var .x", "a1b22c333d4444", "\x1b\x1bab"]:
        assert pre.split(text) == [p for p, _ in hf.pre_tokenize_str(text)], text
        ends = pre.ends(text.encode("utf-8"))
        assert np.all(ends > 0) and (len(ends) == 0 or ends[-1] == len(text.encode("utf-8")))


@pytest.mark.parametrize("name", ["deepseek_v3", "llama3", "qwen2", "qwen35", "o200k"])
def test_hf_split_parity(shared_data, name):
    """HF tokenizers (Oniguruma, Unicode 16.0) gives the same pieces with the "hf" table.

    DeepSeek runs on the ``regex`` module (Unicode 17.0): emoji new in 17.0 differ, so it skips
    emoji-test.txt.
    """
    pattern = PATTERNS[name]
    hf = _hf_sequence(pattern if isinstance(pattern, tuple) else (pattern,))
    pre = Pretokenizer(name, unicode="hf", unmatched="isolate")
    total = 0
    files = [p for p in corpus_files(shared_data)
             if "bench" not in p.parts and (p.name != "emoji-test.txt" or pre.cfg is not None)]
    for k, path in enumerate(files):
        if "udhr" in path.parts and k % 6:
            continue  # a sixth of the UDHR translations
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        for line in lines if path.name == "emoji-test.txt" else lines[:400]:
            assert pre.split(line) == [p for p, _ in hf.pre_tokenize_str(line)], (path.name, line)
            total += 1
    print(f"\n{name}: {total} lines identical to HF tokenizers")


def _unbyte_level():
    """Inverse of GPT-2's bytes_to_unicode: byte-level alphabet char -> byte."""
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def test_hf_bytelevel_gpt2_parity(shared_data):
    """HF ``ByteLevel(use_regex=True)`` (GPT-2's pattern on Oniguruma) splits like "gpt2_original"."""
    pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers
    bl = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    inv = _unbyte_level()
    pre = Pretokenizer("gpt2_original", unicode="hf")
    total = 0
    files = [p for p in corpus_files(shared_data) if "bench" not in p.parts]
    for k, path in enumerate(files):
        if "udhr" in path.parts and k % 6:
            continue
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        lines = lines if path.name == "emoji-test.txt" else lines[:400]
        for line in (TRICKY if k == 0 else []) + lines:
            theirs = [bytes(inv[c] for c in p).decode("utf-8") for p, _ in bl.pre_tokenize_str(line)]
            assert pre.split(line) == theirs, (path.name, line)
            total += 1
    print(f"\ngpt2 ByteLevel: {total} lines identical to HF tokenizers")
