"""``tokenizers.trainers`` on nbtok: ``BpeTrainer``, trained by nbtok's byte-level BPE trainer
(``nbtok.train_bpe`` with HF's tie rule, ``tie_break="hf"``), for the pipeline HF's byte-level
recipes build: a ``BPE`` model and a ``ByteLevel`` pre-tokenizer (GPT-2's regex, no prefix
space), no normalizer. The vocabulary and merges are HF's own: its alphabet (the byte-level
characters the text holds, plus ``initial_alphabet``), its ids (special tokens, then the alphabet
sorted, then one id per new token), its merge order and ``min_frequency`` stop. Another pipeline
or option raises ``NotImplementedError`` naming it; the other trainers (WordPiece, WordLevel,
Unigram) are not provided.

Examples:
    >>> from nbtok.compat.tokenizers import Tokenizer, models, pre_tokenizers, trainers
    >>> tok = Tokenizer(models.BPE())
    >>> tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    >>> trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<s>"], show_progress=False)
    >>> tok.train_from_iterator(["low lower lowest"] * 10, trainer)
    >>> tok.encode("lowest").tokens, tok.get_vocab_size()
    (['low', 'e', 'st'], 16)
"""
import json
import warnings

import numpy as np

from ._added import AddedToken

__all__ = ["Trainer", "BpeTrainer"]


class Trainer:
    """Base class of the trainers."""

    def __init__(self, *a, **k):
        if type(self) is Trainer:
            raise TypeError("cannot create 'Trainer' instances")


class BpeTrainer(Trainer):
    """HF's ``BpeTrainer``, with its arguments, defaults and attributes."""

    _FIELDS = ("min_frequency", "vocab_size", "show_progress", "special_tokens", "limit_alphabet",
               "initial_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "max_token_length")

    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True, special_tokens=(),
                 limit_alphabet=None, initial_alphabet=(), continuing_subword_prefix=None,
                 end_of_word_suffix=None, max_token_length=None):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = special_tokens
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = initial_alphabet
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.max_token_length = max_token_length

    def __setattr__(self, name, value):
        if name == "special_tokens":
            value = [t if isinstance(t, AddedToken) else AddedToken(_text(t, "special token"), special=True)
                     for t in value]
            for t in value:
                t.special = True
        elif name == "initial_alphabet":
            value = sorted({_text(c, "initial_alphabet entry")[:1] for c in value} - {""})
        elif name in ("vocab_size", "min_frequency"):
            value = _count(name, value)
        elif name in ("limit_alphabet", "max_token_length"):
            value = None if value is None else _count(name, value)
        elif name == "show_progress":
            value = bool(value)
        elif name in ("continuing_subword_prefix", "end_of_word_suffix"):
            value = None if value is None else _text(value, name)
        elif name not in self._FIELDS:
            raise AttributeError(f"'BpeTrainer' object has no attribute {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return "BpeTrainer(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS) + ")"

    def __getstate__(self):
        """HF's serialisation of the trainer (``{"BpeTrainer": {...}}`` as JSON bytes)."""
        js = {"min_frequency": self.min_frequency, "vocab_size": self.vocab_size, "show_progress": self.show_progress,
              "progress_format": "Indicatif",
              "special_tokens": [{k: v for k, v in t._json(0).items() if k != "id"} for t in self.special_tokens],
              "limit_alphabet": self.limit_alphabet, "initial_alphabet": self.initial_alphabet,
              "continuing_subword_prefix": self.continuing_subword_prefix,
              "end_of_word_suffix": self.end_of_word_suffix, "max_token_length": self.max_token_length, "words": {}}
        return json.dumps({"BpeTrainer": js}, separators=(",", ":")).encode()

    def __setstate__(self, state):
        js = json.loads(state)["BpeTrainer"]
        self.__init__(js["vocab_size"], js["min_frequency"], js["show_progress"],
                      [AddedToken._from_json(t) for t in js["special_tokens"]], js["limit_alphabet"],
                      js["initial_alphabet"], js["continuing_subword_prefix"], js["end_of_word_suffix"],
                      js["max_token_length"])

    def __reduce__(self):
        return (BpeTrainer, (), self.__getstate__())

    # ------------------------------------------------------------------ training
    def _train(self, tokenizer, texts, line_documents):
        """Train ``tokenizer``'s model on ``texts`` (paths read line by line, as HF's ``train``,
        or an iterable of documents) and add the special tokens; see the module docstring."""
        import nbtok
        from ...formats.gpt2 import bytes_to_unicode
        _check_pipeline(tokenizer._cfg, self)
        b2u = bytes_to_unicode()
        alphabet = set(self.initial_alphabet)
        outside = sorted(alphabet - set(b2u.values()))
        if outside:
            raise NotImplementedError(f"BpeTrainer: initial_alphabet {outside[:5]} holds characters outside the "
                                      "byte-level alphabet; nbtok trains byte-level BPE only")
        if not line_documents:
            texts = [t if isinstance(t, str) else _text(t, "a training text") for t in texts]
        seen = _bytes_seen(texts, line_documents)
        alphabet |= {b2u[b] for b in seen}
        specials = [t.content for t in self.special_tokens]
        n_alphabet = len(alphabet)
        # nbtok's trainer holds all 256 bytes; HF's alphabet is the bytes seen: the merges are the
        # same (ids keep their order), so train for as many merges as HF's vocabulary leaves room for
        room = self.vocab_size - len(specials) - n_alphabet
        trained = None
        if room > 0:
            with warnings.catch_warnings():  # (a smaller vocabulary than asked for is no warning in HF)
                warnings.simplefilter("ignore", UserWarning)
                trained = nbtok.train_bpe(list(texts) if line_documents else iter(texts), 256 + room,
                                          tie_break="hf", progress=self.show_progress)
        merges = [] if trained is None else [(_chars(a, b2u), _chars(b, b2u)) for a, b in trained.merges]
        counts = [] if trained is None else list(trained.merge_counts)
        vocab = {}
        for s in specials:
            vocab.setdefault(s, len(vocab))
        for c in sorted(alphabet):
            vocab.setdefault(c, len(vocab))
        kept = []
        for (a, b), count in zip(merges, counts):
            if count < self.min_frequency or len(vocab) >= self.vocab_size:
                break
            kept.append((a, b))
            vocab.setdefault(a + b, len(vocab))
        model = tokenizer._cfg["model"]
        model["vocab"], model["merges"] = vocab, [[a, b] for a, b in kept]
        tokenizer._changed()
        tokenizer.add_special_tokens(list(self.special_tokens))


def _chars(b, b2u):
    return "".join(b2u[x] for x in b)


def _bytes_seen(texts, line_documents):
    """The distinct byte values of the training text (files: all their bytes, as HF's lines keep
    their line ends; else the texts')."""
    seen = np.zeros(256, bool)
    for t in texts:
        if line_documents:
            with open(t, "rb") as f:
                while True:
                    block = f.read(1 << 24)
                    if not block:
                        break
                    seen[np.frombuffer(block, np.uint8)] = True
        else:
            seen[np.frombuffer(t.encode("utf-8", "surrogatepass"), np.uint8)] = True
    return np.flatnonzero(seen).tolist()


def _check_pipeline(cfg, trainer):
    """NotImplementedError unless the pipeline and the trainer are the byte-level recipe."""
    model, pre = cfg.get("model") or {}, cfg.get("pre_tokenizer")
    if model.get("type") != "BPE":
        raise NotImplementedError(f"BpeTrainer can only train a BPE model, not {model.get('type')}")
    for key, default in (("dropout", None), ("continuing_subword_prefix", None), ("end_of_word_suffix", None)):
        if model.get(key, default) not in (default, 0.0):
            raise NotImplementedError(f"BpeTrainer: the BPE model's {key} is not supported by nbtok's trainer")
    if not (isinstance(pre, dict) and pre.get("type") == "ByteLevel" and pre.get("use_regex", True)
            and not pre.get("add_prefix_space", True)):
        raise NotImplementedError("BpeTrainer: nbtok trains the byte-level recipe only: the pre-tokenizer must be "
                                  "ByteLevel(add_prefix_space=False) with its regex")
    if cfg.get("normalizer") is not None:
        raise NotImplementedError("BpeTrainer: a normalizer before training is not supported by nbtok's trainer")
    if cfg.get("added_tokens"):
        raise NotImplementedError("BpeTrainer: training a tokenizer that already has added tokens is not supported "
                                  "by nbtok's trainer")
    for name in ("limit_alphabet", "continuing_subword_prefix", "end_of_word_suffix", "max_token_length"):
        if getattr(trainer, name) is not None:
            raise NotImplementedError(f"BpeTrainer: {name} is not supported by nbtok's trainer")


def _text(v, what):
    if not isinstance(v, str):
        raise TypeError(f"{what} must be a str, not {type(v).__name__}")
    return v


def _count(name, v):
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise TypeError(f"{name} must be a non-negative int, not {v!r}")
    return v
