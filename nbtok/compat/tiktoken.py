"""tiktoken's API on nbtok's kernels: ``import nbtok.compat.tiktoken as tiktoken``.

The same names, arguments, return types (lists of ints, bytes, str) and exceptions as tiktoken
0.14's ``Encoding``, ``get_encoding``, ``encoding_for_model``. Rank files are never
downloaded: ``gpt2`` and ``r50k_base`` are bundled; the other encodings read their file from
``$NBTOK_TIKTOKEN_DIR`` (under the name OpenAI publishes, ``cl100k_base.tiktoken``) or from
tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or the system temp
folder's ``data-gym-cache``), checked against tiktoken's published sha256.

Examples:
    >>> import nbtok.compat.tiktoken as tiktoken
    >>> enc = tiktoken.get_encoding("gpt2")
    >>> enc.encode("hello world")
    [31373, 995]
    >>> enc.decode([31373, 995])
    'hello world'
    >>> enc.encode("<|endoftext|>", allowed_special="all")
    [50256]
"""
import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from ..pre_tokenizers.bytelevel import PATTERNS
from ..tokenizer import Tokenizer

__all__ = ["Encoding", "get_encoding", "encoding_for_model", "encoding_name_for_model", "list_encoding_names"]

_URL = "https://openaipublic.blob.core.windows.net/encodings/"
ENDOFTEXT, FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX, ENDOFPROMPT = (
    "<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>")


def _harmony_specials():
    named = {"<|startoftext|>": 199998, ENDOFTEXT: 199999, "<|return|>": 200002, "<|constrain|>": 200003,
             "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008,
             "<|call|>": 200012, ENDOFPROMPT: 200018}
    # as tiktoken's table: 200018 is both <|endofprompt|> and <|reserved_200018|> (decoded as the latter)
    reserved = {f"<|reserved_{i}|>": i for i in [200000, 200001, 200004, 200009, 200010, 200011]
                + list(range(200013, 201088))}
    return {**named, **reserved}


def _registry():
    """name: (rank file, its sha256, pattern name, special tokens). OpenAI's published files come
    from ``formats.tiktoken.OPENAI_ENCODINGS`` (which ``from_tiktoken`` recognises them by);
    ``gpt2`` is the bundled ranks, ``p50k_edit`` / ``o200k_harmony`` add special tokens to a
    published file (the harmony table is built on first use)."""
    from ..formats.tiktoken import OPENAI_ENCODINGS
    published = {name: (f"{name}.tiktoken", sha, pattern, specials)
                 for sha, (name, pattern, specials) in OPENAI_ENCODINGS.items()}
    p50k, o200k = published["p50k_base"], published["o200k_base"]
    return {
        "gpt2": (None, None, "gpt2", {ENDOFTEXT: 50256}),
        **published,
        "p50k_edit": p50k[:3] + ({**p50k[3], FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},),
        "o200k_harmony": o200k[:3] + (None,),
    }


REGISTRY = _registry()

#: tiktoken's model tables (``tiktoken/model.py``): exact names, then name prefixes
MODEL_TO_ENCODING = {
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], "o200k_base"),
    **dict.fromkeys(["gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
                     "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"], "cl100k_base"),
    **dict.fromkeys(["text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
                     "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex"], "p50k_base"),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(["text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001", "davinci",
                     "curie", "babbage", "ada", "text-similarity-davinci-001", "text-similarity-curie-001",
                     "text-similarity-babbage-001", "text-similarity-ada-001", "text-search-davinci-doc-001",
                     "text-search-curie-doc-001", "text-search-babbage-doc-001", "text-search-ada-doc-001",
                     "code-search-babbage-code-001", "code-search-ada-code-001"], "r50k_base"),
    "gpt2": "gpt2", "gpt-2": "gpt2",
}
MODEL_PREFIX_TO_ENCODING = {
    **dict.fromkeys(["o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-",
                     "ft:gpt-4o"], "o200k_base"),
    **dict.fromkeys(["gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-", "ft:gpt-4", "ft:gpt-3.5-turbo",
                     "ft:davinci-002", "ft:babbage-002"], "cl100k_base"),
    "gpt-oss-": "o200k_harmony",
}


class Encoding:
    """tiktoken's ``Encoding``: ``Encoding(name, pat_str=..., mergeable_ranks=..., special_tokens=...)``
    or one from ``get_encoding``. Encodes with nbtok's byte-level kernels."""

    def __init__(self, name, *, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab=None):
        from ..models.bytelevel import ByteLevelBPE
        if explicit_n_vocab is not None:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
                raise ValueError(f"explicit_n_vocab {explicit_n_vocab} != {len(mergeable_ranks)} ranks "
                                 f"+ {len(special_tokens)} special tokens")
        self._setup(name, pat_str, dict(special_tokens),
                    Tokenizer(ByteLevelBPE.from_ranks(dict(mergeable_ranks), pat_str, dict(special_tokens))))

    def _setup(self, name, pat_str, special_tokens, tokenizer):
        self.name = name
        self._pat_str = pat_str
        self._special_tokens = special_tokens
        self._tok = tokenizer
        self._model = tokenizer.model
        self.max_token_value = max([tokenizer.vocab_size - 1] + list(special_tokens.values()))
        self._special_ids = frozenset(special_tokens.values())

    @classmethod
    def _from_tokenizer(cls, name, pat_str, special_tokens, tokenizer):
        enc = cls.__new__(cls)
        enc._setup(name, pat_str, dict(special_tokens), tokenizer)
        return enc

    def __repr__(self):
        return f"<Encoding {self.name!r}>"

    # ------------------------------------------------------------------ encoding
    def encode_ordinary(self, text):
        """The ids of ``text``, special tokens encoded as plain text."""
        return self._tok.encode_ordinary(text).tolist()

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """The ids of ``text``; a special token in it is a ``ValueError`` unless allowed
        (``allowed_special``) or treated as text (``disallowed_special=()``)."""
        return self._tok.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special).tolist()

    def encode_to_numpy(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        """``encode`` as a ``uint32`` NumPy array."""
        return self._tok.encode(text, allowed_special=allowed_special,
                                disallowed_special=disallowed_special).astype(np.uint32)

    def encode_ordinary_batch(self, text, *, num_threads=8):
        """``encode_ordinary`` of each text, in one parallel kernel call."""
        return self.encode_batch(text, num_threads=num_threads, disallowed_special=())

    def encode_batch(self, text, *, num_threads=8, allowed_special=frozenset(), disallowed_special="all"):
        """``encode`` of each text, in one parallel kernel call."""
        ids, offsets = self._tok.encode_batch_ragged(text, allowed_special=allowed_special,
                                                     disallowed_special=disallowed_special, num_threads=num_threads)
        flat, bounds = ids.tolist(), offsets.tolist()
        return [flat[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]

    def encode_with_unstable(self, text, *, allowed_special=frozenset(), disallowed_special="all"):
        raise NotImplementedError("encode_with_unstable (the completions of an unfinished last piece) is "
                                  "not implemented by nbtok")

    def encode_single_token(self, text_or_bytes):
        """The id of a text (or bytes) that is one token, special tokens included; else ``KeyError``."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        i = self._model.vocab.get(data)
        if i < 0:
            raise KeyError(data)
        return int(i)

    def _encode_single_piece(self, text_or_bytes):
        """BPE over the bytes as one piece: a mergeable token whole, else the merges (special
        tokens never)."""
        from ..models.bpe import bytelevel as K
        from ..vocab import NORMAL
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        if not data:
            return []
        i = self._model.vocab.get(data)
        if i >= 0 and self._model.vocab.kinds[i] == NORMAL:
            return [int(i)]
        M = self._model._M
        merges_only = M[:7] + (np.zeros(1, np.bool_),) + M[8:]   # no whole-piece lookup
        return K.encode_one_ends(np.frombuffer(data, np.uint8).copy(), np.array([len(data)], np.int64),
                                 merges_only).tolist()

    def _encode_only_native_bpe(self, text):
        """tiktoken's reference path (regex split in Python); the same ids as ``encode_ordinary``."""
        return self.encode_ordinary(text)

    def _encode_bytes(self, text):
        """Bytes that may not be UTF-8, as tiktoken encodes them: the UTF-8 prefix as text; then
        its last piece (with the whitespace-only tokens before it) and the invalid tail as one
        run of bytes, a token when it is one, else BPE over it."""
        data = bytes(text)
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            valid = e.start
        prefix = data[:valid]
        tokens = self.encode_ordinary(prefix.decode("utf-8"))
        unstable = data[valid:]
        if tokens:
            ends = self._model.pre.ends(np.frombuffer(prefix, np.uint8)).tolist()
            last = len(self._encode_single_piece(prefix[(ends[-2] if len(ends) > 1 else 0):ends[-1]]))

            def all_space(t):
                return all(b in b" \n\t" for b in self.decode_single_token_bytes(t))
            if last and all_space(tokens[-last]):
                while last < len(tokens) and all_space(tokens[-last - 1]):
                    last += 1
            if last:
                unstable = self.decode_bytes(tokens[-last:]) + unstable
                del tokens[-last:]
        if unstable:
            i = self._model.vocab.get(unstable)
            tokens.extend([int(i)] if i >= 0 and int(i) not in self._special_ids else self._encode_single_piece(unstable))
        return tokens

    # ------------------------------------------------------------------ decoding
    def decode_bytes(self, tokens):
        """The bytes of ``tokens``; an unknown id is a ``KeyError``."""
        try:
            return self._tok.decode_bytes(list(tokens))
        except ValueError as e:
            raise KeyError(str(e)) from None

    def decode(self, tokens, errors="replace"):
        """The text of ``tokens`` (``errors`` as ``bytes.decode``)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token):
        """The bytes of one token, special tokens included; an unknown id is a ``KeyError``."""
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, tokens):
        """The bytes of each token."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens):
        """``(text, offsets)``: each token's start in the text, as tiktoken counts it (the
        character its first byte belongs to). Invalid UTF-8 raises ``UnicodeDecodeError``."""
        token_bytes = self.decode_tokens_bytes(tokens)
        text_len, offsets = 0, []
        for token in token_bytes:
            offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
            text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
        return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch, *, errors="replace", num_threads=8):
        """``decode`` of each list of ids."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch, *, num_threads=8):
        """``decode_bytes`` of each list of ids."""
        return [self.decode_bytes(tokens) for tokens in batch]

    # ------------------------------------------------------------------ vocabulary
    def token_byte_values(self):
        """Every mergeable token's bytes, sorted (tiktoken's order)."""
        from ..vocab import NORMAL
        vocab = self._model.vocab
        return sorted(vocab.piece(i) for i in np.flatnonzero(vocab.kinds == NORMAL).tolist())

    @property
    def _mergeable_ranks(self):
        """``{token bytes: rank}`` (tiktoken's attribute, which its README uses to extend an
        encoding with new special tokens); built on first use."""
        ranks = self.__dict__.get("_ranks")
        if ranks is None:
            from ..vocab import NORMAL
            vocab = self._model.vocab
            ranks = {vocab.piece(i): i for i in np.flatnonzero(vocab.kinds == NORMAL).tolist()}
            self.__dict__["_ranks"] = ranks
        return ranks

    @property
    def eot_token(self):
        """The id of ``<|endoftext|>``."""
        return self._special_tokens[ENDOFTEXT]

    @property
    def special_tokens_set(self):
        """The special tokens' texts."""
        return set(self._special_tokens)

    def is_special_token(self, token):
        """Whether ``token`` is a special token's id."""
        assert isinstance(token, int)
        return token in self._special_ids

    @property
    def n_vocab(self):
        """``max_token_value + 1``."""
        return self.max_token_value + 1

    def __getstate__(self):
        if _ENCODINGS.get(self.name) is self:
            return self.name
        return {"name": self.name, "pat_str": self._pat_str, "special_tokens": self._special_tokens,
                "tokenizer": self._tok}

    def __setstate__(self, value):
        if isinstance(value, str):
            self.__dict__ = get_encoding(value).__dict__
            return
        self._setup(value["name"], value["pat_str"], value["special_tokens"], value["tokenizer"])


_ENCODINGS = {}


def _rank_file(name, filename, sha256):
    """The path of ``filename`` with this content hash, from nbtok's folder or tiktoken's cache."""
    url = _URL + filename
    places = []
    if os.environ.get("NBTOK_TIKTOKEN_DIR"):
        places.append(Path(os.environ["NBTOK_TIKTOKEN_DIR"]) / filename)
    cache = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") \
        or os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache:
        places.append(Path(cache) / hashlib.sha1(url.encode()).hexdigest())
    for path in places:
        if path.is_file():
            if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
                raise ValueError(f"{path}: not OpenAI's {filename} (sha256 differs from {sha256})")
            return path
    raise FileNotFoundError(
        f"{name} needs {filename} (sha256 {sha256}), published at {url}; nbtok does not download: "
        f"put it in $NBTOK_TIKTOKEN_DIR as {filename}, or in tiktoken's cache as "
        f"{places[-1] if places else '$TIKTOKEN_CACHE_DIR/<sha1 of the url>'}")


def get_encoding(encoding_name):
    """The named encoding (see ``list_encoding_names``), loaded once per process."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = _ENCODINGS.get(encoding_name)
    if enc is not None:
        return enc
    if encoding_name not in REGISTRY:
        raise ValueError(f"Unknown encoding {encoding_name}.\nPlugins found: []\ntiktoken version: nbtok compat")
    filename, sha256, pattern, specials = REGISTRY[encoding_name]
    specials = _harmony_specials() if specials is None else specials
    if filename is None or encoding_name == "r50k_base":
        from ..models.bytelevel import bundled_encoding
        tok = Tokenizer(bundled_encoding("gpt2"))
    else:
        path = _rank_file(encoding_name, filename, sha256)
        by_id = {i: t for t, i in specials.items()}   # one text per id in the vocabulary: the last
        tok = Tokenizer.from_tiktoken(path, pattern=pattern, special_tokens={t: i for i, t in by_id.items()})
        if len(by_id) < len(specials):                # every text still encodes to its id
            tok.model.match_special_tokens(specials)
    enc = Encoding._from_tokenizer(encoding_name, PATTERNS[pattern], specials, tok)
    _ENCODINGS[encoding_name] = enc
    return enc


def list_encoding_names():
    """The names ``get_encoding`` knows."""
    return list(REGISTRY)


def encoding_name_for_model(model_name):
    """The encoding name of an OpenAI model name (exact names, then prefixes); else ``KeyError``."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. "
                   "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect.") from None


def encoding_for_model(model_name):
    """``get_encoding(encoding_name_for_model(model_name))``."""
    return get_encoding(encoding_name_for_model(model_name))
