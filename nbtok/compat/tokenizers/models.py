"""``tokenizers.models`` on nbtok: BPE, Unigram, WordPiece and WordLevel as Python objects
holding their ``tokenizer.json`` fragment (HF's schema), with HF's file readers.

Examples:
    >>> from nbtok.compat.tokenizers import models
    >>> m = models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]")
    >>> m.token_to_id("b"), m.id_to_token(2)
    (1, '[UNK]')
"""
import json

from ._component import Component
from ...formats.huggingface import ExactFloat

__all__ = ["Model", "BPE", "Unigram", "WordPiece", "WordLevel"]


class Model(Component):
    """Base class of the models."""

    _registry = {}

    def __init__(self, *a, **k):
        if type(self) is Model:
            raise TypeError("cannot create 'Model' instances")
        super().__init__(*a, **k)

    def _vocab(self):
        v = self._json.get("vocab")
        if isinstance(v, list):
            return {p: i for i, (p, _) in reversed(list(enumerate(v)))}
        return v or {}

    def token_to_id(self, token):
        """The id of ``token``, or None."""
        return self._vocab().get(token)

    def id_to_token(self, id):
        """The token of ``id``, or None."""
        v = self._json.get("vocab")
        if isinstance(v, list):
            return v[id][0] if 0 <= id < len(v) else None
        for t, i in (v or {}).items():
            if i == id:
                return t
        return None

    def get_trainer(self):
        raise NotImplementedError("nbtok.compat.tokenizers has no trainers: train with nbtok.train_bpe / "
                                  "nbtok.train_sentencepiece")


def _read_json_vocab(path):
    with open(path, encoding="utf-8") as f:
        vocab = json.load(f)
    if not isinstance(vocab, dict):
        raise ValueError(f"{path}: expected a JSON object token -> id")
    return vocab


def _read_merges(path):
    merges = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            line = line.rstrip("\r\n")
            if line.startswith("#version") or not line:
                continue
            parts = line.split(" ")
            if len(parts) != 2:
                raise ValueError(f"{path}:{n + 1}: a merge must be 'left right', got {line!r}")
            merges.append((parts[0], parts[1]))
    return merges


class BPE(Model):
    """HF's ``BPE`` model. ``dropout`` other than None / 0 is kept in the JSON but an encode
    raises NotImplementedError (nbtok's tokenizer.json pipeline has no BPE-dropout)."""

    _type = "BPE"
    _fields = (("dropout", "dropout", None), ("unk_token", "unk_token", None),
               ("continuing_subword_prefix", "continuing_subword_prefix", None),
               ("end_of_word_suffix", "end_of_word_suffix", None), ("fuse_unk", "fuse_unk", False),
               ("byte_fallback", "byte_fallback", False), ("ignore_merges", "ignore_merges", False))

    def __init__(self, vocab=None, merges=None, cache_capacity=None, **kwargs):
        if isinstance(vocab, str) or isinstance(merges, str):
            if not (isinstance(vocab, str) and isinstance(merges, str)):
                raise ValueError("`vocab` and `merges` must be both be from memory or both filenames")
            vocab, merges = BPE.read_file(vocab, merges)
        if (vocab is None) != (merges is None):
            raise ValueError("`vocab` and `merges` must be both specified")
        if kwargs.get("fuse_unk") is None:
            kwargs.pop("fuse_unk", None)
        super().__init__(**kwargs)
        self._json["vocab"] = dict(vocab or {})
        self._json["merges"] = [[a, b] for a, b in (merges or [])]

    @staticmethod
    def read_file(vocab, merges):
        """``(vocab dict, merges list)`` of a ``vocab.json`` and a ``merges.txt``."""
        return _read_json_vocab(vocab), _read_merges(merges)

    @classmethod
    def from_file(cls, vocab, merges, **kwargs):
        v, m = cls.read_file(vocab, merges)
        return cls(v, m, **kwargs)


class Unigram(Model):
    """HF's ``Unigram`` model: ``vocab`` a list of ``(piece, score)``. As HF's, the scores are
    kept exactly as given (a tokenizer.json's are read as HF's JSON parser reads them, which can
    differ in the last bit and so break a tie of two segmentations the other way)."""

    _type = "Unigram"
    _fields = (("unk_id", "unk_id", None), ("byte_fallback", "byte_fallback", False))

    def __init__(self, vocab=None, unk_id=None, byte_fallback=None, alpha=None, nbest_size=None):
        if vocab is None:
            vocab, unk_id = [("<unk>", 0.0)], 0
        js = {"type": "Unigram", "unk_id": unk_id,
              "vocab": [[p, ExactFloat(s)] for p, s in vocab], "byte_fallback": bool(byte_fallback)}
        if unk_id is not None and not 0 <= unk_id < len(js["vocab"]):
            raise ValueError("Unigram: unk_id is outside the vocabulary")
        object.__setattr__(self, "_json", js)
        object.__setattr__(self, "_sampling", {"alpha": alpha, "nbest_size": nbest_size})

    # HF keeps the sampling parameters on the Python object only (they are not in the JSON)
    def __getattr__(self, name):
        if name in ("alpha", "nbest_size"):
            return self.__dict__.get("_sampling", {}).get(name)
        return super().__getattr__(name)

    def __setattr__(self, name, value):
        if name in ("alpha", "nbest_size"):
            self.__dict__.setdefault("_sampling", {})[name] = value
            return
        super().__setattr__(name, value)


class WordPiece(Model):
    _type = "WordPiece"
    _fields = (("unk_token", "unk_token", "[UNK]"), ("continuing_subword_prefix", "continuing_subword_prefix", "##"),
               ("max_input_chars_per_word", "max_input_chars_per_word", 100))

    def __init__(self, vocab=None, unk_token="[UNK]", max_input_chars_per_word=100, continuing_subword_prefix="##"):
        if isinstance(vocab, str):
            vocab = WordPiece.read_file(vocab)
        super().__init__(unk_token=unk_token, continuing_subword_prefix=continuing_subword_prefix,
                         max_input_chars_per_word=max_input_chars_per_word)
        self._json["vocab"] = dict(vocab or {})

    @staticmethod
    def read_file(vocab):
        """The vocabulary of a ``vocab.txt`` (one token a line; its id is its line)."""
        out = {}
        with open(vocab, encoding="utf-8") as f:
            for i, line in enumerate(f):
                out[line.rstrip("\r\n")] = i
        return out

    @classmethod
    def from_file(cls, vocab, **kwargs):
        return cls(cls.read_file(vocab), **kwargs)


class WordLevel(Model):
    _type = "WordLevel"
    _fields = (("unk_token", "unk_token", None),)

    def __init__(self, vocab=None, unk_token=None):
        if isinstance(vocab, str):
            vocab = WordLevel.read_file(vocab)
        object.__setattr__(self, "_json", {"type": "WordLevel", "vocab": dict(vocab or {}),
                                           "unk_token": "<unk>" if unk_token is None else unk_token})

    @staticmethod
    def read_file(vocab):
        return _read_json_vocab(vocab)

    @classmethod
    def from_file(cls, vocab, unk_token=None):
        return cls(cls.read_file(vocab), unk_token)
