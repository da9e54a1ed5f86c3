"""``tokenizers`` (HF) on nbtok: ``import nbtok.compat.tokenizers as tokenizers``.

``Tokenizer`` holds a ``tokenizer.json`` object (HF's schema); its components (``models``,
``normalizers``, ``pre_tokenizers``, ``processors``, ``decoders``) are Python objects holding
their fragment of it. Encoding builds nbtok's pipeline from that object
(``nbtok.models.huggingface``), takes each sequence's tokens from it
(``nbtok.pipeline.encodings``) and runs HF's truncation, post-processor and padding on the
``Encoding`` objects (``nbtok.post_processors.pairs``). The shim itself only maps names.

Training: ``trainers.BpeTrainer`` for the byte-level BPE recipe (``train`` / ``train_from_iterator``
with a ``BPE`` model and a ``ByteLevel`` pre-tokenizer; see ``trainers``). Not supported
(NotImplementedError or not exported): the other trainers and pipelines (use ``nbtok.train_bpe``
/ ``nbtok.train_sentencepiece``), downloads
(``from_pretrained`` takes a local folder), BPE dropout, ``NormalizedString`` /
``PreTokenizedString`` and custom Python components (``Normalizer.custom`` ...).

Examples:
    >>> import nbtok.compat.tokenizers as tokenizers
    >>> from nbtok.compat.tokenizers.models import WordLevel
    >>> from nbtok.compat.tokenizers.pre_tokenizers import Whitespace
    >>> tok = tokenizers.Tokenizer(WordLevel({"hello": 0, "world": 1, "[UNK]": 2}, unk_token="[UNK]"))
    >>> tok.pre_tokenizer = Whitespace()
    >>> enc = tok.encode("hello big world")
    >>> enc.ids, enc.tokens, enc.offsets
    ([0, 2, 1], ['hello', '[UNK]', 'world'], [(0, 5), (6, 9), (10, 15)])
"""
import json
import os

from . import decoders, models, normalizers, pre_tokenizers, processors, trainers
from ._added import AddedToken, add_to_vocabulary
from ._component import EDITS, Regex
from ...post_processors.encoding import Encoding

__all__ = ["Tokenizer", "Encoding", "AddedToken", "Regex", "models", "normalizers", "pre_tokenizers",
           "processors", "decoders", "trainers", "implementations", "BertWordPieceTokenizer", "ByteLevelBPETokenizer",
           "CharBPETokenizer", "SentencePieceBPETokenizer", "__version__"]
__version__ = "0.23.3"

_KEYS = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
         "post_processor", "decoder", "model")
_STRATEGIES = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
_DIRECTIONS = {"right": "Right", "left": "Left"}


def _rev(d, v):
    return next(k for k, x in d.items() if x == v)


class Tokenizer:
    """HF's ``Tokenizer``; see the module docstring."""

    def __init__(self, model):
        if not isinstance(model, models.Model):
            raise TypeError("Tokenizer takes a Model")
        self._cfg = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                     "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
                     "model": model._json}
        self._built = self._built_key = None
        self.encode_special_tokens = False

    # ------------------------------------------------------------------ loading / saving
    @classmethod
    def _from_cfg(cls, cfg):
        if not isinstance(cfg, dict) or not isinstance(cfg.get("model"), dict):
            raise ValueError("not a tokenizer.json object (no 'model' object)")
        tok = cls.__new__(cls)
        tok._cfg = {k: cfg.get(k, "1.0" if k == "version" else ([] if k == "added_tokens" else None)) for k in _KEYS}
        tok._built = tok._built_key = None
        tok.encode_special_tokens = False
        try:
            tok._pipeline()   # a file nbtok cannot run fails here, not at the first encode
        except ValueError:
            # (a vocabulary without its unk token / the post-processor's ids: HF loads it and fails
            # when it encodes, and transformers 5 loads such a file, the tokenizer.json with its
            # vocabulary left out, to read its post-processor; the first encode raises this again)
            tok._built = tok._built_key = None
        return tok

    @classmethod
    def from_str(cls, json_str):
        """A tokenizer from the text of a ``tokenizer.json``."""
        from ...formats.huggingface import JsonFloat
        if not isinstance(json_str, str):
            raise TypeError("from_str takes a str")
        try:
            cfg = json.loads(json_str, parse_float=JsonFloat.parse)
        except json.JSONDecodeError as e:
            raise ValueError(f"invalid tokenizer.json: {e}") from None
        return cls._from_cfg(cfg)

    @classmethod
    def from_file(cls, path):
        """A tokenizer from a ``tokenizer.json`` file."""
        from ...formats.huggingface import read_json
        if not os.path.isfile(path):
            raise FileNotFoundError(f"No such file: {path}")
        return cls._from_cfg(read_json(path))

    @classmethod
    def from_buffer(cls, buffer):
        """A tokenizer from the bytes of a ``tokenizer.json``."""
        if not isinstance(buffer, (bytes, bytearray, memoryview)):
            raise TypeError("from_buffer takes bytes")
        return cls.from_str(bytes(buffer).decode("utf-8"))

    @classmethod
    def from_pretrained(cls, identifier, revision="main", token=None):
        """A tokenizer from a local model folder holding ``tokenizer.json``, or from the local
        Hugging Face cache (``HF_HUB_CACHE``; a model downloaded before). nbtok downloads nothing."""
        path = os.path.join(identifier, "tokenizer.json") if os.path.isdir(identifier) else None
        if path is None or not os.path.isfile(path):
            path = _hub_cache_file(identifier, revision)
        if path is None:
            raise FileNotFoundError(f"{identifier!r}: no local tokenizer.json (a folder, or the Hugging Face cache "
                                    "of a model downloaded before); nbtok does not download from the Hub")
        return cls.from_file(path)

    def to_str(self, pretty=False):
        """The ``tokenizer.json`` text."""
        if pretty:
            return json.dumps(self._cfg, ensure_ascii=False, indent=2)
        return json.dumps(self._cfg, ensure_ascii=False, separators=(",", ":"))

    def save(self, path, pretty=True):
        from ...formats._atomic import write_atomic
        write_atomic(path, self.to_str(pretty))

    def __getstate__(self):
        return {"json": self.to_str(), "encode_special_tokens": self.encode_special_tokens}

    def __setstate__(self, st):
        self.__dict__.update(Tokenizer.from_str(st["json"]).__dict__)
        self.encode_special_tokens = st["encode_special_tokens"]

    def __repr__(self):
        from ._component import repr_json
        return "Tokenizer(" + ", ".join(f"{k}={repr_json(v)}" for k, v in self._cfg.items()) + ")"

    # ------------------------------------------------------------------ components
    def _changed(self):
        self._built_key = None

    def _component(key, family):
        def get(self):
            return family._wrap(self._cfg[key])

        def put(self, value):
            if value is not None and not isinstance(value, family):
                value = _foreign_component(value, family, key)
            if key == "model" and value is None:
                raise TypeError("model must be a Model")
            self._cfg[key] = None if value is None else value._json
            self._changed()
        return property(get, put)

    model = _component("model", models.Model)
    normalizer = _component("normalizer", normalizers.Normalizer)
    pre_tokenizer = _component("pre_tokenizer", pre_tokenizers.PreTokenizer)
    post_processor = _component("post_processor", processors.PostProcessor)
    decoder = _component("decoder", decoders.Decoder)
    del _component

    def _pipeline(self):
        """nbtok's pipeline for the current configuration (rebuilt after a change)."""
        key = EDITS[0]
        if self._built is None or self._built_key != key:
            from ...models.huggingface import HuggingFaceModel
            self._built = HuggingFaceModel(dict(self._cfg, truncation=None, padding=None))
            self._built_key = key
        return self._built

    # ------------------------------------------------------------------ padding / truncation
    def enable_padding(self, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]", length=None,
                       pad_to_multiple_of=None):
        if direction not in _DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`")
        self._cfg["padding"] = {"strategy": "BatchLongest" if length is None else {"Fixed": int(length)},
                                "direction": _DIRECTIONS[direction], "pad_to_multiple_of": pad_to_multiple_of,
                                "pad_id": int(pad_id), "pad_type_id": int(pad_type_id), "pad_token": pad_token}

    def no_padding(self):
        self._cfg["padding"] = None

    @property
    def padding(self):
        p = self._cfg["padding"]
        if p is None:
            return None
        s = p.get("strategy", "BatchLongest")
        return {"length": s["Fixed"] if isinstance(s, dict) else None,
                "pad_to_multiple_of": p.get("pad_to_multiple_of"), "pad_id": p.get("pad_id", 0),
                "pad_token": p.get("pad_token", "[PAD]"), "pad_type_id": p.get("pad_type_id", 0),
                "direction": _rev(_DIRECTIONS, p.get("direction", "Right"))}

    def enable_truncation(self, max_length, stride=0, strategy="longest_first", direction="right"):
        if strategy not in _STRATEGIES:
            raise ValueError(f"Unknown `strategy`: `{strategy}`. Use one of `longest_first`, `only_first`, "
                             "or `only_second`")
        if direction not in _DIRECTIONS:
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`.")
        n_added = self.num_special_tokens_to_add(True)
        if stride >= max_length - n_added:
            raise ValueError(f"tokenizer stride set to {stride}, which is greater than or equal to its "
                             f"effective max length of {max_length - n_added} (= {max_length} original max "
                             f"length - {n_added} added special tokens), ")
        self._cfg["truncation"] = {"direction": _DIRECTIONS[direction], "max_length": int(max_length),
                                   "strategy": _STRATEGIES[strategy], "stride": int(stride)}

    def no_truncation(self):
        self._cfg["truncation"] = None

    @property
    def truncation(self):
        t = self._cfg["truncation"]
        if t is None:
            return None
        return {"max_length": t["max_length"], "stride": t.get("stride", 0),
                "strategy": _rev(_STRATEGIES, t.get("strategy", "LongestFirst")),
                "direction": _rev(_DIRECTIONS, t.get("direction", "Right"))}

    # ------------------------------------------------------------------ encoding
    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        """The ``Encoding`` of one sequence or a pair."""
        _check_input(sequence, is_pretokenized)
        if pair is not None:
            _check_input(pair, is_pretokenized)
        return self._encode([(sequence, pair)], is_pretokenized, add_special_tokens)[0]

    def encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
        """The ``Encoding`` of each input (a sequence, or a pair as a tuple / list of two)."""
        items = []
        for x in input:
            if _is_pair(x, is_pretokenized):
                a, b = x
                _check_input(a, is_pretokenized)
                _check_input(b, is_pretokenized)
                items.append((a, b))
            else:
                _check_input(x, is_pretokenized)
                items.append((x, None))
        encs = self._encode(items, is_pretokenized, add_special_tokens)
        p = self.padding
        if p is not None:
            from ...post_processors.pairs import pad_encodings
            pad_encodings(encs, **p)
        return encs

    encode_batch_fast = encode_batch

    async def async_encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        return self.encode(sequence, pair, is_pretokenized, add_special_tokens)

    async def async_encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    async def async_decode_batch(self, sequences, skip_special_tokens=True):
        return self.decode_batch(sequences, skip_special_tokens)

    def _encode(self, items, is_pretokenized, add_special_tokens):
        from ...pipeline.encodings import collector_paused
        with collector_paused():
            return self._encode_items(items, is_pretokenized, add_special_tokens)

    def _encode_items(self, items, is_pretokenized, add_special_tokens):
        from ...pipeline.encodings import sequence_encodings
        texts, spans = [], []
        for a, b in items:
            for seq in (a, b):
                if seq is None:
                    spans.append(None)
                    continue
                words = [str(w) for w in seq] if is_pretokenized else [seq]
                spans.append((len(texts), len(words)))
                texts.extend(words)
        encs = sequence_encodings(self._pipeline(), texts, 0, bool(self.encode_special_tokens))
        out = []
        for k in range(len(items)):
            seqs = []
            for type_id, span in enumerate(spans[2 * k:2 * k + 2]):
                if span is None:
                    seqs.append(None)
                    continue
                parts = encs[span[0]:span[0] + span[1]]
                if is_pretokenized:
                    for i, e in enumerate(parts):
                        e._words = [i] * len(e)
                    e = Encoding.merge(parts, False) if len(parts) != 1 else parts[0]
                else:
                    e = parts[0]
                e.type_ids = [type_id] * len(e)
                seqs.append(e)
            out.append(self._post_process(seqs[0], seqs[1], add_special_tokens))
        return out

    def _post_process(self, encoding, pair, add_special_tokens):
        from ...post_processors.pairs import added_tokens, pad_encodings, process, truncate_encodings
        post = self._cfg["post_processor"]
        t = self.truncation
        if t is not None:
            n_added = added_tokens(post, pair is not None) if add_special_tokens else 0
            if t["max_length"] < n_added:
                raise ValueError(f"truncation max_length {t['max_length']} is shorter than the {n_added} "
                                 "special tokens the post-processor adds")
            truncate_encodings(encoding, pair, t["max_length"] - n_added, t["stride"], t["strategy"], t["direction"])
        final = process(post, encoding, pair, add_special_tokens)
        p = self.padding
        if p is not None:
            pad_encodings([final], **p)
        return final

    def post_process(self, encoding, pair=None, add_special_tokens=True):
        """Truncation, post-processor and padding on already encoded sequences."""
        return self._post_process(encoding.copy(), None if pair is None else pair.copy(), add_special_tokens)

    def num_special_tokens_to_add(self, is_pair):
        from ...post_processors.pairs import added_tokens
        return added_tokens(self._cfg["post_processor"], bool(is_pair))

    # ------------------------------------------------------------------ decoding
    def decode(self, ids, skip_special_tokens=True):
        """The text of ``ids`` (ids outside the vocabulary are skipped, as HF does)."""
        p = self._pipeline()
        if not isinstance(ids, (list, tuple)):
            try:
                ids = list(ids)
            except TypeError:
                raise TypeError("decode takes a list of ids") from None
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) and not hasattr(i, "__index__"):
                raise TypeError("token ids must be integers")
        n = len(p.tokens)
        keep = [int(i) for i in ids if 0 <= i < n and p.tokens[i] is not None]
        return p.decode(keep, skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences, skip_special_tokens=True):
        return [self.decode(s, skip_special_tokens) for s in sequences]

    # ------------------------------------------------------------------ vocabulary
    def token_to_id(self, token):
        i = self._pipeline().piece_to_id(token)
        return None if i < 0 else i

    def id_to_token(self, id):
        p = self._pipeline()
        return p.tokens[id] if 0 <= id < len(p.tokens) else None

    def get_vocab(self, with_added_tokens=True):
        p = self._pipeline()
        if with_added_tokens:
            return p.get_vocab()
        return {t: i for i, t in enumerate(p.model_tokens) if t is not None}

    def get_vocab_size(self, with_added_tokens=True):
        p = self._pipeline()
        if with_added_tokens:
            return len(p.get_vocab())
        return len(p.model_tokens)

    def get_added_tokens_decoder(self):
        return {a["id"]: AddedToken._from_json(a) for a in self._cfg["added_tokens"]}

    def _add(self, tokens, special):
        if not isinstance(tokens, (list, tuple)):
            raise TypeError("Input must be a List[Union[str, AddedToken]]")
        m = self._cfg["model"]
        vocab = m.get("vocab") or {}
        if isinstance(vocab, list):
            vocab = {p: i for i, (p, _) in reversed(list(enumerate(vocab)))}
        before = [dict(a) for a in self._cfg["added_tokens"]]
        n = add_to_vocabulary(self._cfg["added_tokens"], tokens, vocab, len(vocab), special)
        if self._cfg["added_tokens"] != before:   # (tokens added again as they were: the pipeline stands)
            self._changed()
        return n

    def add_tokens(self, tokens):
        """Add tokens matched before the model; returns how many were new."""
        return self._add(tokens, False)

    def add_special_tokens(self, tokens):
        """Add special tokens (skipped by ``decode(skip_special_tokens=True)``)."""
        return self._add(tokens, True)

    # ------------------------------------------------------------------ training
    def train(self, files, trainer=None):
        """Train the model on text files read line by line, as HF's ``train``: the byte-level BPE
        recipe (``trainers``' module docstring says which pipelines)."""
        if isinstance(files, str):
            files = [files]
        for f in files:
            if not isinstance(f, str):
                raise TypeError(f"files must be a list of paths (str), not {type(f).__name__}")
            if not os.path.isfile(f):
                raise FileNotFoundError(f)
        self._trainer(trainer)._train(self, list(files), True)

    def train_from_iterator(self, iterator, trainer=None, length=None):
        """Train the model on an iterator of texts (or of lists of texts), as HF's."""
        def texts():
            for item in iterator:
                if isinstance(item, (list, tuple)):
                    yield from item
                else:
                    yield item
        self._trainer(trainer)._train(self, texts(), False)

    def _trainer(self, trainer):
        from .trainers import BpeTrainer
        if trainer is None:
            if (self._cfg.get("model") or {}).get("type") != "BPE":
                raise NotImplementedError("nbtok.compat.tokenizers trains BPE models only (trainers.BpeTrainer)")
            return BpeTrainer()
        if not isinstance(trainer, BpeTrainer):
            raise TypeError(f"trainer must be a trainers.BpeTrainer, not {type(trainer).__name__}")
        return trainer


def _foreign_component(value, family, key):
    """Another library's component object (HF ``tokenizers``' own, which transformers sets) as
    ours, through its JSON state; a TypeError for anything else."""
    state = getattr(value, "__getstate__", None)
    try:
        js = json.loads(state()) if state is not None else None
    except (TypeError, ValueError):
        js = None
    if not isinstance(js, dict) or "type" not in js:
        raise TypeError(f"{key} must be a {family.__name__} or None")
    return family._wrap(js)


def _hub_cache_file(identifier, revision):
    """``tokenizer.json`` of ``identifier`` at ``revision`` in the local Hugging Face cache, or None."""
    if not isinstance(identifier, str) or not isinstance(revision, str):
        return None
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface"), "hub")
    folder = os.path.join(hub, "models--" + identifier.replace("/", "--"))
    ref = os.path.join(folder, "refs", revision)
    commit = revision
    if os.path.isfile(ref):
        with open(ref, encoding="utf-8") as f:
            commit = f.read().strip()
    path = os.path.join(folder, "snapshots", commit, "tokenizer.json")
    return path if os.path.isfile(path) else None


def _is_pair(x, is_pretokenized):
    import numpy as np
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if not isinstance(x, (list, tuple)) or len(x) != 2:
        return False
    if is_pretokenized:
        return all(isinstance(s, (list, tuple)) or hasattr(s, "tolist") for s in x)
    return True


def _check_input(seq, is_pretokenized):
    import numpy as np
    if is_pretokenized:
        if isinstance(seq, np.ndarray):
            seq = seq.tolist()
        if not isinstance(seq, (list, tuple)) or any(not isinstance(w, str) for w in seq):
            raise TypeError("InputSequence must be Union[List[str], Tuple[str]]")
    elif not isinstance(seq, str):
        raise TypeError("TextInputSequence must be str")


from . import implementations  # noqa: E402  (it builds on Tokenizer)
from .implementations import (BertWordPieceTokenizer, ByteLevelBPETokenizer, CharBPETokenizer,  # noqa: E402
                              SentencePieceBPETokenizer)
