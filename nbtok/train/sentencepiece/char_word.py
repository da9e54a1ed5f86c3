"""sentencepiece's CHAR and WORD trainers (``char_model_trainer.cc`` / ``word_model_trainer.cc``
of 0.2.3): the most frequent characters (those ``character_coverage`` keeps) or words, each
scored by its float32 log probability, ``logf(count) - logf(total)``, as sentencepiece computes it.

Examples:
    >>> pieces = word_pieces({"▁a▁b": 2, "▁a": 1}, {"▁": 3, "a": 3, "b": 2}, 2)
    >>> [p for p, _ in pieces]
    ['▁a', '▁b']
"""
import math
from collections import Counter

import numpy as np

from .whitespace import split_into_words

UNK_CHAR = "\u2585"   # sentencepiece's kUNKStr: a word holding it is never a piece


def _logf(x):
    """``std::log(static_cast<float>(x))``: float32 in, float32 out."""
    x = np.float32(x)
    return np.float32(-np.inf) if x == 0 else np.float32(math.log(x))


def _scored(ordered, total, n):
    logsum = _logf(total)
    return [(p, float(_logf(c) - logsum)) for p, c in ordered[:n]]


def char_pieces(required, n):
    """The ``n`` most frequent of the characters ``character_coverage`` keeps (``required``:
    char -> count, ``sentences.required_chars``), by count then code point."""
    total = sum(required.values())
    if total <= 0:
        raise ValueError("train_sentencepiece: the input has no character to train a CHAR model on")
    return _scored(sorted(required.items(), key=lambda kv: (-kv[1], kv[0])), total, n)


def word_pieces(sentences, required, n):
    """The ``n`` most frequent words (``SplitIntoWords``: each starts at a sentence start or a
    U+2581) of the normalized ``sentences`` (sentence -> count), by count then bytes. A word
    with a character ``character_coverage`` drops (not in ``required``) is never a piece:
    sentencepiece replaces such characters by ``UNK_CHAR`` before counting."""
    freq = Counter()
    for s, c in sentences.items():
        if not required.keys() >= set(s):
            s = "".join(ch if ch in required else UNK_CHAR for ch in s)
        for w in split_into_words(s):
            freq[w] += c
    total = sum(freq.values())
    if total <= 0:
        raise ValueError("train_sentencepiece: the input has no word to train a WORD model on")
    ordered = [kv for kv in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0])) if UNK_CHAR not in kv[0]]
    return _scored(ordered, total, n)
