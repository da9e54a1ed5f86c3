"""Generate nbtok/data/unicode_classes.npz: the pinned per-code-point class table.

Run once (``python scripts/gen_unicode_table.py``); the output is committed and shipped.

Why the ``regex`` module is the source: the pre-tokenizer patterns (GPT-2, cl100k, o200k, ...)
are defined by what ``regex.findall`` / tiktoken return, not by ``unicodedata`` (Python 3.11's
``unicodedata`` is Unicode 14.0, ``regex`` 2026.x is Unicode 17.0: 13,916 more letters). So every
code point is probed against the very classes the patterns use -- ``\\p{L}``, ``\\p{Lu}``,
``\\p{Lt}``, ``\\p{Ll}``, ``\\p{Lm}``, ``\\p{Lo}``, ``\\p{M}``, ``\\p{N}``, ``\\s`` -- with the
``regex`` module itself, so the scanner's classes equal ``regex.findall``'s by construction.

tiktoken runs the same patterns with Rust ``fancy-regex`` over ``regex-syntax``, whose Unicode
tables are older: tiktoken 0.14 (fancy-regex 0.19, regex-syntax 0.8.11) is Unicode 16.0, and 4,700
code points get different classes (characters new in 17.0, and property changes such as U+0295
Ll -> Lo). Letters new in 17.0 are rare in real text, so regex.findall and tiktoken agree on all
the shared corpora; the table still pins both. If tiktoken is installed, this script probes tiktoken too
(an ``Encoding`` whose pattern is one class and whose ranks are the 256 bytes: tiktoken drops
unmatched text, so the decoded output is exactly the members of the class) and stores the code
points where the two engines disagree, so ``nbtok.pre_tokenizers.unicode_classes.load_table("tiktoken")`` can
give a table that follows tiktoken exactly. HF ``tokenizers`` (Oniguruma through the onig crate) is
probed the same way (``load_table("hf")``); it is Unicode 16.0 too, and equal to tiktoken's table.

Bits of the table (uint8 per code point, 0x110000 entries; surrogates are 0):

    1  L   \\p{L}
    2  N   \\p{N}
    4  WS  \\s  (Unicode White_Space, 25 code points, NOT Python re's 29)
    8  UP  \\p{Lu} | \\p{Lt}             (o200k's "upper" class A)
    16 LOW \\p{Ll}                       (o200k's "lower" class B)
    32 OTH \\p{Lm} | \\p{Lo} | \\p{M}     (o200k's class C, in both its upper and lower sets)
    64 M   \\p{M}                        (Qwen3.5's ``[\\p{L}\\p{M}]+`` words)

Case-insensitive contraction letters ``(?i:[sdmt]|ll|ve|re)`` are probed too: the script asserts
that the only non-ASCII code point that matches any of them is U+017F (LATIN SMALL LETTER LONG S,
which folds to ``s``); the scanner hard-codes that.
"""
import sys
from pathlib import Path

import numpy as np
import regex

L, N, WS, UP, LOW, OTH, M = 1, 2, 4, 8, 16, 32, 64
OUT = Path(__file__).resolve().parent.parent / "nbtok" / "data" / "unicode_classes.npz"

CLASSES = {  # bit -> list of regex classes OR-ed together
    L: [r"\p{L}"], N: [r"\p{N}"], WS: [r"\s"],
    UP: [r"\p{Lu}", r"\p{Lt}"], LOW: [r"\p{Ll}"], OTH: [r"\p{Lm}", r"\p{Lo}", r"\p{M}"],
    M: [r"\p{M}"],
}

# first code point assigned in each Unicode version (newest first), to name the UCD version
VERSION_MARKERS = [("17.0", 0x1E6C0), ("16.0", 0x1E5D0), ("15.1", 0x2EBF0), ("15.0", 0x1E030),
                   ("14.0", 0x1E290), ("13.0", 0x1FAD0)]


def all_text():
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)


def unicode_version(assigned):
    for name, cp in VERSION_MARKERS:
        if assigned(cp):
            return name
    return "older than 13.0"


def regex_table(text):
    table = np.zeros(0x110000, np.uint8)
    for bit, pats in CLASSES.items():
        for p in pats:
            idx = np.array([ord(m) for m in regex.findall(p, text)], np.int64)
            table[idx] |= bit
    return table


def tiktoken_table(text):
    try:
        import tiktoken
    except ImportError:
        return None, None
    ranks = {bytes([i]): i for i in range(256)}
    table = np.zeros(0x110000, np.uint8)
    for bit, pats in CLASSES.items():
        for p in pats:
            enc = tiktoken.Encoding("probe", pat_str=p, mergeable_ranks=ranks, special_tokens={})
            got = enc.decode_bytes(enc.encode_ordinary(text)).decode("utf-8")
            idx = np.array([ord(c) for c in got], np.int64)
            table[idx] |= bit
    enc = tiktoken.Encoding("probe", pat_str=r"\P{Cn}", mergeable_ranks=ranks, special_tokens={})
    assigned = set(enc.decode_bytes(enc.encode_ordinary(text)).decode("utf-8"))
    return table, unicode_version(lambda cp: chr(cp) in assigned)


def hf_table(text):
    """The classes of HF ``tokenizers`` (Oniguruma via the onig crate), probed the same way: a
    ``Split(behavior="removed")`` pre-tokenizer leaves exactly the characters outside the class."""
    try:
        from tokenizers import Regex, pre_tokenizers
    except ImportError:
        return None, None
    everything = set(text)

    def members(p):
        split = pre_tokenizers.Split(Regex(p), behavior="removed", invert=False)
        return everything - set("".join(piece for piece, _ in split.pre_tokenize_str(text)))

    table = np.zeros(0x110000, np.uint8)
    for bit, pats in CLASSES.items():
        for p in pats:
            idx = np.array([ord(c) for c in members(p)], np.int64)
            table[idx] |= bit
    assigned = members(r"\P{Cn}")
    return table, unicode_version(lambda cp: chr(cp) in assigned)


def check_folds(text):
    for letter in "sdmtlvre":
        got = set(regex.findall(f"(?i:{letter})", text))
        extra = got - {letter, letter.upper()}
        assert extra == ({"\u017f"} if letter == "s" else set()), (letter, extra)


def main():
    text = all_text()
    table = regex_table(text)
    check_folds(text)
    rx_version = unicode_version(lambda cp: regex.match(r"\P{Cn}", chr(cp)) is not None)
    # invariants the scanner relies on
    t = table
    assert not np.any((t & L) & ((t & (N | WS)) != 0))
    assert np.array_equal((t & L) != 0, ((t & (UP | LOW)) != 0) | (((t & OTH) != 0) & [
        regex.match(r"\p{M}", chr(c)) is None if (0xD800 > c or c >= 0xE000) and t[c] & OTH else False
        for c in range(0x110000)]))
    assert [c for c in range(0x110000) if t[c] & WS] == [c for c in range(0x110000)
                                                        if not 0xD800 <= c < 0xE000 and regex.match(r"\s", chr(c))]
    assert t[ord("\r")] & WS and t[ord("\n")] & WS
    tk, tk_version = tiktoken_table(text)
    if tk is None:
        diff_cp = np.zeros(0, np.int32)
        diff_val = np.zeros(0, np.uint8)
        tk_version = "unknown (tiktoken not installed)"
    else:
        diff_cp = np.nonzero(tk != table)[0].astype(np.int32)
        diff_val = tk[diff_cp]
    hf, hf_version = hf_table(text)
    if hf is None:
        hf_cp = np.zeros(0, np.int32)
        hf_val = np.zeros(0, np.uint8)
        hf_version = "unknown (tokenizers not installed)"
    else:
        hf_cp = np.nonzero(hf != table)[0].astype(np.int32)
        hf_val = hf[hf_cp]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        OUT, table=table, tiktoken_diff_cp=diff_cp, tiktoken_diff_val=diff_val,
        regex_version=np.array(regex.__version__), unicode_version=np.array(rx_version),
        tiktoken_unicode_version=np.array(tk_version),
        hf_diff_cp=hf_cp, hf_diff_val=hf_val, hf_unicode_version=np.array(hf_version))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): regex {regex.__version__} = Unicode {rx_version}; "
          f"tiktoken = Unicode {tk_version}; {len(diff_cp)} code points differ; "
          f"HF tokenizers (Oniguruma) = Unicode {hf_version}; {len(hf_cp)} differ")
    if tk is not None and hf is not None:
        print("tiktoken vs HF tables differ at", int(np.count_nonzero(tk != hf)), "code points")
    counts = {name: int(np.count_nonzero(table & bit)) for name, bit in
              [("L", L), ("N", N), ("WS", WS), ("UP", UP), ("LOW", LOW), ("OTH", OTH), ("M", M)]}
    print(counts)
    if len(diff_cp):
        print("first differing code points:", [hex(c) for c in diff_cp[:20]])


if __name__ == "__main__":
    sys.exit(main())
