"""GGUF vocabularies (llama.cpp, Ollama, LM Studio): nbtok's own reader of the GGUF container and
the translation of its ``tokenizer.ggml.*`` keys into an nbtok tokenizer.

The container (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), little-endian: magic
``GGUF``, a uint32 version (1, 2 or 3), the tensor count and the key/value count (uint64; uint32
in version 1), then the key/value pairs: a string key, a uint32 value type, the value. Strings are
a length (uint64; uint32 in version 1) and UTF-8 bytes; an array is an element type, a count and
the elements. Only the metadata is read, never the tensors. Every length and count is checked
against the bytes left in the file before anything is allocated, so a truncated or corrupt file
is a ``ValueError``.

``tokenizer.ggml.model`` says which tokenizer the vocabulary is for:

* ``gpt2``: byte-level BPE (tokens in GPT-2's byte alphabet, ``tokenizer.ggml.merges``); the
  pre-tokenizer comes from ``tokenizer.ggml.pre`` (``PRE_TOKENIZERS``: the regex passes of the
  model's own tokenizer.json, which llama.cpp's ``llama-vocab.cpp`` copies). Built as a
  tokenizer.json pipeline (``nbtok.formats.huggingface``).
* ``llama``: SentencePiece BPE over the pieces' scores, with byte fallback (``<0xXX>`` pieces)
  and a dummy-prefix ``▁``; built as a sentencepiece ``ModelProto``
  (``nbtok.formats.sentencepiece_model``), so it encodes exactly as sentencepiece.
* ``t5``: SentencePiece Unigram with the ``precompiled_charsmap``; built the same way.
* ``bert``: WordPiece. llama.cpp's converter writes word-initial tokens with a ``▁`` and
  continuation tokens without their ``##``; both are undone (``nbtok.formats.wordpiece``).

Token types (``tokenizer.ggml.token_type``) follow sentencepiece's numbering: 1 normal, 2 unknown,
3 control, 4 user-defined, 5 unused, 6 byte. Control tokens are special tokens, user-defined ones
added tokens matched in the raw text, as in llama.cpp. Special ids come from
``tokenizer.ggml.{bos,eos,unknown,padding,seperator,cls,mask}_token_id`` with llama.cpp's
defaults, ``add_bos_token`` / ``add_eos_token`` from the file. A model type or pre-tokenizer nbtok
cannot map is a ``NotImplementedError`` naming it.

``encode(text)`` of a ``gpt2`` / ``bert`` GGUF adds what llama.cpp adds with ``add_special=True``
(BOS / EOS as the file asks; BERT's ``[CLS] ... [SEP]``), ``add_special_tokens=False`` leaves them
out; a ``llama`` / ``t5`` GGUF keeps sentencepiece's convention (``encode(text, add_bos=True)``).
``GGUFVocab.add_bos`` / ``add_eos`` say what the file asks for. One known difference from
llama.cpp: in a ``llama`` vocabulary, text after a user-defined token found in the input (Phi-3's
``</s>``) gets no new dummy-prefix ``▁`` (sentencepiece's rule; llama.cpp and HF's legacy Llama
tokenizer give each such segment its own).

Examples:
    >>> import nbtok
    >>> tok = nbtok.Tokenizer.from_gguf("ggml-vocab-gpt-2.gguf")  # doctest: +SKIP
    >>> tok.encode("Hello world").tolist()  # doctest: +SKIP
    [15496, 995]
    >>> read_gguf("ggml-vocab-gpt-2.gguf").metadata["tokenizer.ggml.pre"]  # doctest: +SKIP
    'gpt-2'
"""
import mmap
import struct
from pathlib import Path

import numpy as np

MAGIC = b"GGUF"

# value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_SCALARS = {UINT8: "<u1", INT8: "<i1", UINT16: "<u2", INT16: "<i2", UINT32: "<u4", INT32: "<i4",
            FLOAT32: "<f4", BOOL: "<u1", UINT64: "<u8", INT64: "<i8", FLOAT64: "<f8"}
_STRUCT = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
           FLOAT32: "<f", BOOL: "<B", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
_MAX_DEPTH = 4  # arrays of arrays: the format allows them; nothing real nests deeper than 2

# token types (llama.cpp's LLAMA_TOKEN_TYPE_*, sentencepiece's numbering)
UNDEFINED, NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = range(7)


# ------------------------------------------------------------------ the container
class _Reader:
    """Bounds-checked little-endian reads over the file's bytes."""

    def __init__(self, data, where, wide):
        self.data = data
        self.pos = 0
        self.where = where
        self.wide = wide  # lengths and counts are uint64 (versions 2, 3) or uint32 (version 1)

    def fail(self, what):
        raise ValueError(f"{self.where}: corrupt GGUF file: {what} (at byte {self.pos} of {len(self.data)})")

    def need(self, n, what):
        if n < 0 or n > len(self.data) - self.pos:
            self.fail(f"{what} needs {n} bytes, {len(self.data) - self.pos} are left")

    def unpack(self, fmt, what):
        size = struct.calcsize(fmt)
        self.need(size, what)
        value = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += size
        return value

    def count(self, what):
        return self.unpack("<Q" if self.wide else "<I", what)

    def string(self, what):
        n = self.count(f"the length of {what}")
        self.need(n, what)
        raw = self.data[self.pos:self.pos + n]
        self.pos += n
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            self.fail(f"{what} is not UTF-8")

    def value(self, vtype, what, depth=0):
        if vtype in _SCALARS:
            v = self.unpack(_STRUCT[vtype], what)
            if vtype == BOOL:
                if v > 1:
                    self.fail(f"{what} is a bool holding {v}")
                return bool(v)
            return v
        if vtype == STRING:
            return self.string(what)
        if vtype == ARRAY:
            return self.array(what, depth)
        self.fail(f"{what} has unknown value type {vtype}")

    def array(self, what, depth):
        if depth >= _MAX_DEPTH:
            self.fail(f"{what}: arrays nested deeper than {_MAX_DEPTH}")
        etype = self.unpack("<I", f"the element type of {what}")
        n = self.count(f"the length of {what}")
        if etype in _SCALARS:
            dtype = np.dtype(_SCALARS[etype])
            self.need(n * dtype.itemsize, f"{what} ({n} elements)")
            arr = np.frombuffer(self.data, dtype, n, self.pos).copy()
            self.pos += n * dtype.itemsize
            if etype == BOOL:
                if arr.size and arr.max() > 1:
                    self.fail(f"{what} holds a bool that is not 0 or 1")
                arr = arr.astype(bool)
            return arr
        if etype == STRING:
            self.need(n * (8 if self.wide else 4), f"{what} ({n} strings)")  # every string has a length
            return [self.string(f"{what}[{i}]") for i in range(n)]
        if etype == ARRAY:
            self.need(n * (12 if self.wide else 8), f"{what} ({n} arrays)")
            return [self.array(f"{what}[{i}]", depth + 1) for i in range(n)]
        self.fail(f"{what} has unknown element type {etype}")


class GGUFFile:
    """A GGUF file's header and metadata: ``version``, ``tensor_count``, ``metadata``
    (``{key: value}``; arrays of numbers as NumPy arrays, of strings as lists) and ``types``
    (``{key: value type}``, arrays as ``(ARRAY, element type)``)."""

    def __init__(self, version, tensor_count, metadata, types):
        self.version = version
        self.tensor_count = tensor_count
        self.metadata = metadata
        self.types = types

    def __repr__(self):
        return f"<GGUFFile version={self.version} tensors={self.tensor_count} keys={len(self.metadata)}>"


def parse_gguf(data, where="<bytes>"):
    """The ``GGUFFile`` of a GGUF file's bytes (or a memory map of the file); ``ValueError`` if
    it is not one or is corrupt, ``NotImplementedError`` for a big-endian file."""
    if not isinstance(data, (bytes, bytearray, memoryview, mmap.mmap)):
        raise TypeError(f"expected bytes, not {type(data).__name__}")
    if bytes(data[:4]) != MAGIC:
        raise ValueError(f"{where}: not a GGUF file (it does not start with b'GGUF')")
    r = _Reader(data, where, True)
    r.pos = 4
    version = r.unpack("<I", "the version")
    if version not in (1, 2, 3):
        if version & 0xFFFF == 0 and (version >> 24) in (1, 2, 3):
            raise NotImplementedError(f"{where}: a big-endian GGUF file; nbtok reads little-endian GGUF only")
        r.fail(f"unknown version {version}")
    r.wide = version >= 2
    tensor_count = r.count("the tensor count")
    n_kv = r.count("the key/value count")
    r.need(n_kv * (8 + 4 if r.wide else 4 + 4), f"{n_kv} key/value pairs")
    metadata, types = {}, {}
    for i in range(n_kv):
        key = r.string(f"key {i}")
        vtype = r.unpack("<I", f"the type of {key!r}")
        if key in metadata:
            r.fail(f"key {key!r} appears twice")
        if vtype == ARRAY:
            start = r.pos
            etype = r.unpack("<I", f"the element type of {key!r}")
            r.pos = start
            types[key] = (ARRAY, etype)
        else:
            types[key] = vtype
        metadata[key] = r.value(vtype, repr(key))
    return GGUFFile(version, tensor_count, metadata, types)


def read_gguf(path):
    """``parse_gguf`` of the file at ``path``, read through a memory map: of a model file of many
    gigabytes only the metadata at its start is touched."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    try:
        with open(path, "rb") as f:
            if path.stat().st_size == 0:
                return parse_gguf(b"", str(path))
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return parse_gguf(data, str(path))
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e}") from None


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


_TYPE_NAMES = {UINT8: "uint8", INT8: "int8", UINT16: "uint16", INT16: "int16", UINT32: "uint32", INT32: "int32",
               FLOAT32: "float32", BOOL: "bool", STRING: "string", ARRAY: "array", UINT64: "uint64",
               INT64: "int64", FLOAT64: "float64"}


# ------------------------------------------------------------------ gpt2: byte-level BPE
_GPT2_RE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
# DeepSeek LLM's letters (its tokenizer.json; llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM): the
# cased letters (Lu, Ll, Lt) of Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, Glagolitic,
# Coptic, Deseret, Osage, Old Hungarian, Warang Citi and Adlam; escaped, since Unicode
# normalization of a source file would change some of them (U+1F7D, U+2126, U+212A, ...)
_DEEPSEEK_LLM_LETTERS = "\\s?[" + (
    "A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf"
    "\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d"
    "\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-"
    "\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113"
    "\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149"
    "\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b"
    "\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
    "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-"
    "\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943"
) + "]+"


def _pre_tokenizers():
    """``{tokenizer.ggml.pre: (regex passes, ByteLevel with GPT-2's regex, ignore_merges)}``.

    Each regex pass splits every piece of the one before into its matches and the text between
    them (HF's ``Split(behavior="Isolated")``, llama.cpp's ``unicode_regex_split``); then the
    bytes go to GPT-2's alphabet, with GPT-2's own regex where the middle value is True. The
    patterns are the ones of each model's tokenizer.json (where llama.cpp spells a
    case-insensitive group ``'[sS]|...``, the tokenizer.json's ``(?i:...)`` is used); the pre
    types and their groups follow llama.cpp's ``llama-vocab.cpp``."""
    from ..pre_tokenizers.bytelevel import DEEPSEEK_V3, LLAMA3, O200K, QWEN2, QWEN35  # the tokenizer.json spellings
    gpt2 = ((), True, False)
    digits_gpt2 = ((r"\p{N}",), True, False)
    llama3 = ((LLAMA3,), False, True)
    qwen2 = ((QWEN2,), False, False)
    table = {}
    for names, spec in [
        (("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
          "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4", "jina-v1-en",
          "jina-v2-code", "roberta-bpe"), gpt2),
        (("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"), digits_gpt2),
        (("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
          "jina-v5-nano"), llama3),
        (("dbrx", "smaug-bpe", "chatglm-bpe", "glm4"), ((LLAMA3,), False, False)),
        (("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "solar-open", "megrez",
          "grok-2"), qwen2),
        (("qwen35",), ((QWEN35,), False, False)),
        (("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"), (tuple(DEEPSEEK_V3), False, False)),
        (("deepseek-coder",), ((r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"), False, False)),
        (("falcon",), ((r"[\p{P}\$\+<=>\^~\|`]+", _GPT2_RE, r"[0-9][0-9][0-9]"), False, False)),
        (("default",), ((r"[\p{P}\$\+<=>\^~\|]+", _GPT2_RE, r"\p{N}+", r"[0-9][0-9][0-9]"), False, False)),
        (("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"), ((O200K,), False, False)),
        (("poro-chat", "bloom", "gpt3-finnish"), ((r" ?[^(\s|.,!?…。，、।۔،)]+",), False, False)),
        (("viking",), ((r" ?[^(\s|.,!?…。，、।۔،)]+", r"\p{N}"), False, False)),
        (("tekken",), ((r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
                        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
                        r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",), False, True)),
        (("bailingmoe", "bailingmoe2", "llada-moe"),
         ((r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]"
           r"|\s+(?!\S)|\s+",), False, False)),
        (("seed-coder",), ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}"
                            r"| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",), False, False)),
        (("deepseek-llm",), ((r"[\r\n]", _DEEPSEEK_LLM_LETTERS, r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$",
                              r"[一-龥ࠀ-一가-퟿]+", r"\p{N}+"), False, False)),
        (("minicpm5",), ((r"\p{N}{1,3}", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+"
                          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"), False, True)),
        (("ufakzeka",), ((r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
                         False, False)),
        (("laguna",), ((r"[^\n]+|[\n]+", QWEN2), False, False)),
        (("jais-2",), ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                        r"|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)"
                        r"|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}",), False, False)),
        (("exaone-moe",), ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                            r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",), False, False)),
        (("tiny_aya", "cohere2moe"), ((r"\d{1,3}(?=(?:\d{3})*\b)", O200K), False, False)),
        (("spark2_5",), ((r"\p{N}{1,3}", r"[一-龥぀-ゟ゠-ヿ]+",
                          r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
                          r"""| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+""", r"\p{N}"), False, False)),
        (("youtu",), ((r"[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
                       O200K.replace(r"\p{N}{1,3}", r"\p{N}")), False, True)),
    ]:
        for name in names:
            table[name] = spec
    return table


PRE_TOKENIZERS = _pre_tokenizers()


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
def sentencepiece_proto(v):
    """The serialized sentencepiece ``ModelProto`` of a ``llama`` (BPE) or ``t5`` (Unigram) GGUF
    vocabulary: its pieces, scores and types; the unknown id's piece is the one UNKNOWN piece
    (sentencepiece has exactly one; other pieces a converter marked unknown become UNUSED)."""
    from . import sentencepiece_model as spm
    if v.unk_id < 0:
        raise ValueError(f"{v.where}: a {v.model} GGUF vocabulary needs an unknown token")
    types = v.types.astype(np.int8)
    types[(types == UNKNOWN) | (types == UNDEFINED) | (types > BYTE) | (types < 0)] = UNUSED
    types[v.unk_id] = UNKNOWN
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
    normalizer = {"name": "identity" if not v.precompiled_charsmap else "user_defined",
                  "precompiled_charsmap": v.precompiled_charsmap, "add_dummy_prefix": v.add_space_prefix,
                  "remove_extra_whitespaces": v.remove_extra_whitespaces, "escape_whitespaces": True}
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
    """The ``Tokenizer`` of a ``GGUFVocab``."""
    if v.model in ("gpt2", "bert"):
        from .huggingface import tokenizer_from_config
        return tokenizer_from_config(gpt2_config(v) if v.model == "gpt2" else bert_config(v))
    from .sentencepiece_model import tokenizer_from_proto
    return tokenizer_from_proto(sentencepiece_proto(v))
