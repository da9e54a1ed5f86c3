"""nbtok.train_bpe: exact reproduction of the CS336 reference, agreement with a plain Python
reference trainer on random corpora, HF tokenizers' BpeTrainer with tie_break="hf", chunked
counting, the trained tokenizer's encode/save round trips, and bad input."""
import json
import os
import pickle
import time
from collections import Counter
from pathlib import Path

import numpy as np
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


def test_cs336_speed_warm(cs336):
    # warm JIT (the fixture compiled everything); upstream's bound is 1.5 s, ours is measured
    # by scripts/bench_train_bpe.py (target < 0.5 s); this bound is generous for slow CI
    t = time.perf_counter()
    nbtok.train_bpe(CORPUS_EN, 500, special_tokens=["<|endoftext|>"], progress=False)
    assert time.perf_counter() - t < 1.5
