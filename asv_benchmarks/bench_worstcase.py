"""Worst-case growth: inputs with no whitespace, so the whole input is one BPE piece.

Inputs of 10 KB, 100 KB and 1 MB:

    repeat_a   "aaaa..." (tiktoken issue #195: quadratic in tiktoken < 0.13)
    letters    English text (corpora/bench/en_gutenberg.txt) with everything but A-Z a-z
               removed: one long run of real subwords
    base64     random bytes in base64: many short letter / digit / punctuation pre-tokens that
               never repeat (no help from the pre-token cache)
    chinese    random CJK ideographs (U+4E00..U+9FA5) without spaces: one long letter run
    spaces     all spaces, then one letter

Tokenizers, each side by side with its peers:

    nbtok_gpt2, tiktoken_gpt2, tokenizers_gpt2     byte-level BPE, GPT-2 ranks
    nbtok_sp_bpe, sentencepiece_bpe                SentencePiece BPE (BPEmb en, 100k pieces)

A linear (or n log n) encoder shows a flat MB/s across the three sizes; a quadratic one
loses 10x per step. ``time_encode`` is the wall time of one encode call; the charts plot it
against the input size on log-log axes.
"""
import re

from . import _common as common

KINDS = ["repeat_a", "letters", "base64", "chinese", "spaces"]
SIZES = [10_000, 100_000, 1_000_000]
LIBRARIES = ["nbtok_gpt2", "tiktoken_gpt2", "tokenizers_gpt2", "nbtok_sp_bpe", "sentencepiece_bpe"]


def worstcase_input(kind, size):
    if kind == "repeat_a":
        return "a" * size
    if kind == "letters":
        text = re.sub(r"[^A-Za-z]+", "", common.read_corpus("en_gutenberg", 4 * size + 100_000))
        if len(text) < size:
            common.skip("en_gutenberg is too short for this size")
        return text[:size]
    if kind in ("base64", "chinese", "spaces"):  # as scripts/bench_bytelevel.py (issue inputs)
        import base64
        import random
        rnd = random.Random(0)
        if kind == "base64":
            return base64.b64encode(rnd.randbytes(size * 3 // 4)).decode()[:size]
        if kind == "chinese":
            return "".join(chr(rnd.randint(0x4E00, 0x9FA5)) for _ in range(size // 3))
        return " " * (size - 1) + "a"
    raise ValueError(kind)


def encoder(library):
    """A callable(str) -> ids for one library, or skip."""
    if library == "nbtok_gpt2":
        return common.nbtok_gpt2().encode
    if library == "tiktoken_gpt2":
        return common.tiktoken_gpt2().encode_ordinary
    if library == "tokenizers_gpt2":
        tok = common.tokenizers_gpt2()
        return lambda s: tok.encode(s, add_special_tokens=False).ids
    if library == "nbtok_sp_bpe":
        return common.nbtok_sentencepiece("sp_bpe_bpemb_en").encode
    if library == "sentencepiece_bpe":
        return common.sentencepiece_processor("sp_bpe_bpemb_en").encode
    raise ValueError(library)


class WorstCase:
    params = (LIBRARIES, KINDS, SIZES)
    param_names = ["library", "input", "bytes"]
    timeout = 600
    repeat = (1, 5, 20.0)
    number = 1

    def setup(self, library, kind, size):
        if library == "tiktoken_gpt2" and kind == "spaces" and size >= 1_000_000:
            common.skip("tiktoken panics (regex stack overflow) on a megabyte of spaces")
        self.text = worstcase_input(kind, size)
        self.encode = encoder(library)
        self.encode("warm up: compile or load the kernels " + self.text[:100])

    def time_encode(self, library, kind, size):
        self.encode(self.text)
