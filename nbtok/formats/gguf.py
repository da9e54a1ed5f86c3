"""GGUF vocabularies (llama.cpp, Ollama, LM Studio): nbtok's own reader of the GGUF container and
the translation of its ``tokenizer.ggml.*`` keys into an nbtok tokenizer.

The container is read by ``nbtok.formats.gguf_container`` (little- and big-endian files, every
length checked, a truncated or corrupt file a ``ValueError``); only the metadata is read, never
the tensors.

``tokenizer.ggml.model`` says which tokenizer the vocabulary is for:

* ``gpt2``: byte-level BPE (tokens in GPT-2's byte alphabet, ``tokenizer.ggml.merges``); the
  pre-tokenizer comes from ``tokenizer.ggml.pre`` (``nbtok.formats.gguf_pre.PRE_TOKENIZERS``: the
  regex passes of the model's own tokenizer.json, which llama.cpp's ``llama-vocab.cpp`` copies;
  the pre types llama.cpp handles with more than regexes, ``UNSUPPORTED_PRE``, are a
  ``NotImplementedError`` saying why). Built as a tokenizer.json pipeline
  (``nbtok.formats.huggingface``).
* ``llama``: SentencePiece BPE over the pieces' scores, with byte fallback (``<0xXX>`` pieces),
  built as a sentencepiece ``ModelProto`` (``nbtok.formats.sentencepiece_model``) and tokenized as
  llama.cpp does (``nbtok.formats.gguf_llama``): user-defined tokens (llama.cpp's own view of them:
  ``</s>``, ``<|end|>`` and other end-of-generation texts are control tokens to it) are cut out of
  the raw text longest first, and each text fragment gets its own space prefix; no
  normalization (llama.cpp ignores ``remove_extra_whitespaces`` and a charsmap here).
* ``t5``: SentencePiece Unigram with the ``precompiled_charsmap``; built the same way.
* ``bert``: WordPiece. llama.cpp's converter writes word-initial tokens with a ``▁`` and
  continuation tokens without their ``##``; both are undone (``nbtok.formats.wordpiece``).

Token types (``tokenizer.ggml.token_type``) follow sentencepiece's numbering: 1 normal, 2 unknown,
3 control, 4 user-defined, 5 unused, 6 byte. Control tokens are special tokens, user-defined ones
added tokens matched in the raw text, as in llama.cpp (a ``llama`` vocabulary: see above). Special ids come from
``tokenizer.ggml.{bos,eos,unknown,padding,seperator,cls,mask}_token_id`` with llama.cpp's
defaults, ``add_bos_token`` / ``add_eos_token`` from the file. A model type or pre-tokenizer nbtok
cannot map is a ``NotImplementedError`` naming it.

``encode(text)`` of a ``gpt2`` / ``bert`` GGUF adds what llama.cpp adds with ``add_special=True``
(BOS / EOS as the file asks; BERT's ``[CLS] ... [SEP]``), ``add_special_tokens=False`` leaves them
out; a ``llama`` / ``t5`` GGUF keeps sentencepiece's convention (``encode(text, add_bos=True)``).
``GGUFVocab.add_bos`` / ``add_eos`` say what the file asks for. A ``llama`` GGUF's ids are
llama.cpp's ``llama_tokenize(text, add_special, parse_special=false)``: control tokens spelled in
the text are text.

Examples:
    >>> import nbtok
    >>> tok = nbtok.Tokenizer.from_gguf("ggml-vocab-gpt-2.gguf")  # doctest: +SKIP
    >>> tok.encode("Hello world").tolist()  # doctest: +SKIP
    [15496, 995]
    >>> read_gguf("ggml-vocab-gpt-2.gguf").metadata["tokenizer.ggml.pre"]  # doctest: +SKIP
    'gpt-2'
"""
import numpy as np

from .gguf_container import (  # noqa: F401  (the container's names, re-exported)
    ARRAY, BOOL, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, MAGIC, STRING, TYPE_NAMES as _TYPE_NAMES, UINT8,
    UINT16, UINT32, UINT64, GGUFFile, byte_order, parse_gguf, read_gguf)
from .gguf_pre import PRE_TOKENIZERS, UNSUPPORTED_PRE  # noqa: F401

# token types (llama.cpp's LLAMA_TOKEN_TYPE_*, sentencepiece's numbering)
UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = range(7)


# ------------------------------------------------------------------ the vocabulary
def _key(md, name, default=None):
    return md.get(f"tokenizer.ggml.{name}", default)


class GGUFVocab:
    """The ``tokenizer.ggml.*`` keys of a GGUF file, checked: ``model``, ``pre``, ``tokens``
    (list of str), ``scores`` (float32), ``types`` (int32), ``merges`` (list of (str, str)),
    the special ids (``bos_id``, ``eos_id``, ``unk_id``, ``pad_id``, ``sep_id``, ``cls_id``,
    ``mask_id``: an id, or -1 when the file has none and llama.cpp has no default) and
    ``add_bos`` / ``add_eos`` / ``add_sep``, ``add_space_prefix``, ``remove_extra_whitespaces``,
    ``precompiled_charsmap`` (bytes).

    Examples:
        >>> v = GGUFVocab(read_gguf("ggml-vocab-llama-spm.gguf"))  # doctest: +SKIP
        >>> v.model, v.bos_id, v.add_bos  # doctest: +SKIP
        ('llama', 1, True)
    """

    #: llama.cpp's default special ids per model type (llama-vocab.cpp), used when a key is absent
    DEFAULTS = {
        "llama": dict(bos_id=1, eos_id=2, unk_id=0, add_bos=True, add_eos=False, add_space_prefix=True),
        "gpt2": dict(bos_id=11, eos_id=11, add_bos=False, add_eos=False, add_space_prefix=False),
        "bert": dict(bos_id=101, unk_id=100, sep_id=102, pad_id=0, mask_id=103, add_bos=True, add_eos=False,
                     add_sep=True, add_space_prefix=False),
        "t5": dict(eos_id=1, unk_id=2, pad_id=0, add_bos=False, add_eos=True, add_space_prefix=True),
    }
    #: gpt2 pre types after which llama.cpp adds BOS when the file does not say (Llama 3, Tekken)
    BOS_PRE_TYPES = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                     "jina-v5-nano", "tekken", "chameleon"}
    _ID_KEYS = {"bos_id": "bos_token_id", "eos_id": "eos_token_id", "unk_id": "unknown_token_id",
                "pad_id": "padding_token_id", "sep_id": "seperator_token_id", "cls_id": "cls_token_id",
                "mask_id": "mask_token_id"}

    def __init__(self, gguf, where="<gguf>"):
        md = gguf.metadata
        self.where = where
        self.metadata = md  # the whole file's (llama.cpp reads general.name, general.architecture too)
        model = _key(md, "model")
        if model is None:
            raise ValueError(f"{where}: a GGUF file without a vocabulary (no tokenizer.ggml.model key)")
        if not isinstance(model, str):
            raise ValueError(f"{where}: tokenizer.ggml.model must be a string")
        self.model = model
        if model not in self.DEFAULTS:
            raise NotImplementedError(f"{where}: GGUF tokenizer model {model!r} is not supported by nbtok "
                                      f"(supported: {', '.join(self.DEFAULTS)})")
        pre = _key(md, "pre")
        self.pre = pre if isinstance(pre, str) and pre else "default"
        tokens = _key(md, "tokens")
        if not isinstance(tokens, list) or gguf.types.get("tokenizer.ggml.tokens") != (ARRAY, STRING):
            raise ValueError(f"{where}: tokenizer.ggml.tokens must be an array of strings")
        if not tokens:
            raise ValueError(f"{where}: tokenizer.ggml.tokens is empty")
        n = len(tokens)
        # llama.cpp names an empty token "[EMPTY_<id>]" and refuses repeated tokens
        self.tokens = [t if t else f"[EMPTY_{i}]" for i, t in enumerate(tokens)]
        if len(set(self.tokens)) != n:
            seen = {}
            for i, t in enumerate(self.tokens):
                if t in seen:
                    raise ValueError(f"{where}: token {t!r} appears twice (ids {seen[t]} and {i})")
                seen[t] = i
        self.scores = self._numbers(md, gguf, "scores", n, (FLOAT32, INT32), np.float32, 0.0)
        self.types = self._numbers(md, gguf, "token_type", n, (INT32,), np.int32, NORMAL)
        merges = _key(md, "merges")
        if merges is not None and gguf.types.get("tokenizer.ggml.merges") != (ARRAY, STRING):
            raise ValueError(f"{where}: tokenizer.ggml.merges must be an array of strings")
        self.merges = []
        for i, m in enumerate(merges or []):
            cut = m.find(" ", 1)  # as llama.cpp: the first space after the first character
            if cut < 0 or cut == len(m) - 1:
                raise ValueError(f"{where}: merge {i} {m[:40]!r} is not 'left right'")
            self.merges.append((m[:cut], m[cut + 1:]))
        if model == "gpt2" and merges is None:
            raise ValueError(f"{where}: a gpt2 GGUF vocabulary without tokenizer.ggml.merges")
        defaults = dict(self.DEFAULTS[model])
        if model == "gpt2" and self.pre in self.BOS_PRE_TYPES:
            defaults["add_bos"] = True
        for attr, key in self._ID_KEYS.items():
            value = _key(md, key)
            if value is None:
                value = defaults.get(attr, -1)
            elif isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{where}: tokenizer.ggml.{key} must be an integer")
            setattr(self, attr, value if 0 <= value < n else -1)  # llama.cpp ignores an id outside the vocabulary
        for attr, key in (("add_bos", "add_bos_token"), ("add_eos", "add_eos_token"), ("add_sep", "add_sep_token"),
                          ("add_space_prefix", "add_space_prefix"),
                          ("remove_extra_whitespaces", "remove_extra_whitespaces")):
            value = _key(md, key)
            if value is None:
                value = defaults.get(attr, False)
            elif not isinstance(value, bool):
                raise ValueError(f"{where}: tokenizer.ggml.{key} must be a bool")
            setattr(self, attr, value)
        charsmap = _key(md, "precompiled_charsmap")
        if charsmap is not None and not (isinstance(charsmap, np.ndarray) and charsmap.dtype.itemsize == 1):
            raise ValueError(f"{where}: tokenizer.ggml.precompiled_charsmap must be an array of bytes")
        self.precompiled_charsmap = b"" if charsmap is None else charsmap.tobytes()

    def _numbers(self, md, gguf, name, n, etypes, dtype, default):
        value = _key(md, name)
        if value is None:
            return np.full(n, default, dtype)
        t = gguf.types.get(f"tokenizer.ggml.{name}")
        if not isinstance(t, tuple) or t[1] not in etypes:
            raise ValueError(f"{self.where}: tokenizer.ggml.{name} must be an array of "
                             + " or ".join(_TYPE_NAMES[e] for e in etypes))
        if value.size < n:
            raise ValueError(f"{self.where}: tokenizer.ggml.{name} has {value.size} entries for {n} tokens")
        return value[:n].astype(dtype)

    def special_ids(self):
        """``{name: id}`` of the special ids the file defines (or llama.cpp's defaults)."""
        return {k: getattr(self, k) for k in self._ID_KEYS if getattr(self, k) >= 0}


def _added(i, content, special):
    return {"id": i, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": not special, "special": special}


def _template(v, ids):
    """A TemplateProcessing that adds BOS / EOS as the file asks (None when it adds nothing)."""
    pre = [v.tokens[v.bos_id]] if v.add_bos and v.bos_id >= 0 else []
    post = [v.tokens[v.eos_id]] if v.add_eos and v.eos_id >= 0 else []
    if v.add_bos and v.bos_id < 0 or v.add_eos and v.eos_id < 0:
        raise ValueError(f"{v.where}: add_{'bos' if v.add_bos and v.bos_id < 0 else 'eos'}_token is true "
                         "but the file has no such token")
    if not pre and not post:
        return None

    def seq(name, tid):
        return [{"SpecialToken": {"id": t, "type_id": tid}} for t in pre] + [{"Sequence": {"id": name, "type_id": tid}}] \
            + [{"SpecialToken": {"id": t, "type_id": tid}} for t in post]
    return {"type": "TemplateProcessing", "single": seq("A", 0), "pair": seq("A", 0) + seq("B", 1),
            "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in pre + post}}


def gpt2_config(v):
    """The tokenizer.json dict of a ``gpt2`` GGUF vocabulary ``v`` (a ``GGUFVocab``)."""
    spec = PRE_TOKENIZERS.get(v.pre)
    if v.pre in UNSUPPORTED_PRE:
        raise NotImplementedError(f"{v.where}: GGUF pre-tokenizer {v.pre!r} is not supported by nbtok: "
                                  f"{UNSUPPORTED_PRE[v.pre]}")
    if spec is None:
        raise NotImplementedError(f"{v.where}: GGUF pre-tokenizer {v.pre!r} is not supported by nbtok "
                                  f"(supported: {', '.join(sorted(PRE_TOKENIZERS))})")
    passes, gpt2_regex, ignore_merges = spec
    # every token is in the model's vocabulary (an added token takes its id from there, as in HF's
    # files); control and user-defined tokens are also added tokens, matched in the raw text.
    # Normal tokens are in GPT-2's byte alphabet; one outside it only merges could reach.
    vocab = {t: i for i, t in enumerate(v.tokens)}
    added = [_added(i, t, kind != USER_DEFINED) for i, (t, kind) in enumerate(zip(v.tokens, v.types.tolist()))
             if kind in (CONTROL, USER_DEFINED, UNKNOWN)]
    pre = [{"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False} for p in passes]
    pre.append({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": gpt2_regex})
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": pre[0] if len(pre) == 1 else {"type": "Sequence", "pretokenizers": pre},
        "post_processor": _template(v, {t: i for i, t in enumerate(v.tokens)}),
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": [list(m) for m in v.merges]},
    }


# ------------------------------------------------------------------ bert: WordPiece
def bert_config(v):
    """The tokenizer.json dict of a ``bert`` GGUF vocabulary: llama.cpp's converter wrote a
    word-initial token as ``▁token`` and a continuation ``##token`` as ``token`` ([bracketed]
    tokens as they are); this undoes it and builds BERT's pipeline (``nbtok.formats.wordpiece``)."""
    from .wordpiece import wordpiece_config
    vocab = {}
    for i, t in enumerate(v.tokens):
        if t.startswith("\u2581"):
            word = t[1:]
        elif t.startswith("[") and t.endswith("]"):
            word = t
        else:
            word = "##" + t
        if word in vocab:
            raise ValueError(f"{v.where}: tokens {vocab[word]} and {i} are both WordPiece {word!r}")
        vocab[word] = i
    if "[UNK]" not in vocab:
        if v.unk_id < 0:
            raise ValueError(f"{v.where}: a bert GGUF vocabulary without an unknown token")
        raise NotImplementedError(f"{v.where}: the unknown token is {v.tokens[v.unk_id]!r}; nbtok's WordPiece "
                                  "from GGUF needs [UNK]")
    return wordpiece_config(vocab)  # [CLS] $A [SEP]: llama.cpp adds both whenever add_special is true


# ------------------------------------------------------------------ llama / t5: sentencepiece
def sentencepiece_proto(v, kinds=None):
    """The serialized sentencepiece ``ModelProto`` of a ``llama`` (BPE) or ``t5`` (Unigram) GGUF
    vocabulary: its pieces, scores and types; the unknown id's piece is the one UNKNOWN piece
    (sentencepiece has exactly one; other pieces a converter marked unknown become UNUSED).

    ``kinds`` (``gguf_llama.token_attributes``): llama.cpp's own view of the user-defined tokens;
    one it made control is a control piece (not found in the text), one it made user-defined a
    user-defined piece, one it made normal a normal piece. A ``llama`` vocabulary is not
    normalized (llama.cpp's SPM tokenizer ignores remove_extra_whitespaces and a charsmap)."""
    from . import sentencepiece_model as spm
    if v.unk_id < 0:
        raise ValueError(f"{v.where}: a {v.model} GGUF vocabulary needs an unknown token")
    types = v.types.astype(np.int8)
    types[(types == UNKNOWN) | (types == UNDEFINED) | (types > BYTE) | (types < 0)] = UNUSED
    types[v.unk_id] = UNKNOWN
    if kinds is not None:
        from .gguf_llama import CONTROL as C, NORMAL as N, USER_DEFINED as U
        for i, k in enumerate(kinds):
            if k == {U} or k == {N}:
                types[i] = U if k == {U} else N
            elif types[i] == USER_DEFINED and C in k:
                types[i] = CONTROL
    for name, i in (("bos", v.bos_id), ("eos", v.eos_id), ("pad", v.pad_id)):
        if i >= 0 and i != v.unk_id and types[i] == NORMAL:
            types[i] = CONTROL
    pieces = [t.encode("utf-8") for t in v.tokens]
    offsets = np.zeros(len(pieces) + 1, np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pieces])
    piece_bytes = np.frombuffer(b"".join(pieces), np.uint8).copy()
    trainer = {"model_type": spm.BPE if v.model == "llama" else spm.UNIGRAM,
               "vocab_size": len(pieces), "byte_fallback": bool(np.any(types == BYTE)),
               "unk_id": v.unk_id, "bos_id": v.bos_id, "eos_id": v.eos_id, "pad_id": v.pad_id,
               "unk_piece": v.tokens[v.unk_id]}
    for name in ("bos", "eos", "pad"):
        i = getattr(v, f"{name}_id")
        if i >= 0:
            trainer[f"{name}_piece"] = v.tokens[i]
    llama = v.model == "llama"
    charsmap = b"" if llama else v.precompiled_charsmap
    normalizer = {"name": "identity" if not charsmap else "user_defined",
                  "precompiled_charsmap": charsmap, "add_dummy_prefix": v.add_space_prefix,
                  "remove_extra_whitespaces": v.remove_extra_whitespaces and not llama, "escape_whitespaces": True}
    data = spm.ModelProtoData(piece_bytes, offsets, v.scores.astype(np.float32), types, None, None, None,
                              raw_trainer=spm.encode_spec(b"", spm.TRAINER_FIELDS, trainer),
                              raw_normalizer=spm.encode_spec(b"", spm.NORMALIZER_FIELDS, normalizer))
    return spm.write_model_proto(data)


# ------------------------------------------------------------------ entry point
def load_gguf(path):
    """A ``Tokenizer`` for the vocabulary of the GGUF file at ``path`` (see the module docstring).

    Examples:
        >>> tok = load_gguf("ggml-vocab-llama-spm.gguf")  # doctest: +SKIP
        >>> tok.encode("Hello world", add_bos=True).tolist()  # doctest: +SKIP
        [1, 15043, 3186]
    """
    v = GGUFVocab(read_gguf(path), str(path))
    return tokenizer_from_vocab(v)


def tokenizer_from_vocab(v):
    """The ``Tokenizer`` of a ``GGUFVocab``: a ``llama`` one tokenizes as llama.cpp
    (``gguf_llama``: user-defined tokens cut out of the raw text, a space prefix per fragment)."""
    if v.model in ("gpt2", "bert"):
        from .huggingface import tokenizer_from_config
        return tokenizer_from_config(gpt2_config(v) if v.model == "gpt2" else bert_config(v))
    from .sentencepiece_model import tokenizer_from_proto
    if v.model != "llama":
        return tokenizer_from_proto(sentencepiece_proto(v))
    from ..tokenizer import Tokenizer
    from .gguf_llama import LlamaCppSPM, partition_tokens, token_attributes
    kinds = token_attributes(v, v.metadata)[0]
    proto = sentencepiece_proto(v, kinds)
    tokens = partition_tokens(v, v.metadata)
    if not tokens:
        return tokenizer_from_proto(proto)
    return Tokenizer(LlamaCppSPM.from_proto_bytes(proto, tokens))
