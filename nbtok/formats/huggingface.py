"""HF ``tokenizers`` ``tokenizer.json``: reading, and writing nbtok models in that format.

``load_huggingface(path)`` returns a ``HuggingFaceModel`` (``nbtok.models.huggingface``), which
implements the pipeline with HF semantics. ``save_huggingface(model, path)`` writes:

* a ``HuggingFaceModel``: its configuration (what was loaded, unchanged);
* a ``ByteLevelBPE`` loaded from GPT-2 ``vocab.json`` + ``merges.txt`` (or any model with a
  merges list): BPE + ``ByteLevel`` (GPT-2 regex) or ``Split`` + ``ByteLevel(use_regex=false)`` for
  other patterns, with ``ignore_merges`` when the model emits whole pre-tokens (tiktoken);
* a ``SentencePieceModel`` if it provides ``to_huggingface_json()``.
"""
import json
from pathlib import Path

from ._atomic import write_atomic


# floats as ``tokenizers`` reads them

_POW10 = [float(f"1e{i}") for i in range(309)]
_U64 = (1 << 64) - 1


class JsonFloat(float):
    """A float that remembers its JSON text (``json.loads(..., parse_float=JsonFloat.parse)``)."""

    __slots__ = ("text",)

    @classmethod
    def parse(cls, text):
        f = cls(text)
        f.text = text
        return f


class ExactFloat(float):
    """A score given as a float, not as JSON text: a model built in Python (HF's
    ``models.Unigram(vocab)``, which transformers 5 calls) keeps the value exactly (no JSON parse);
    ``serde_f64`` returns it unchanged. Saved and loaded again, it is JSON text like any other."""

    __slots__ = ()


def serde_f64(x):
    """The f64 ``serde_json`` (without ``float_roundtrip``, as ``tokenizers`` builds it) reads for a
    JSON number: the decimal significand as a u64 (digits past 19-20 dropped), converted to f64,
    then ONE multiplication / division by a power of ten. That double rounding can differ from a
    correctly rounded parse in the last bit, which flips Unigram ties; HF's scores are these."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"expected a number, got {x!r}")
    if isinstance(x, (int, ExactFloat)):
        return float(x)
    text = getattr(x, "text", None) or repr(float(x))
    if text in ("inf", "-inf", "nan"):
        return float(x)
    s = text
    i, n, pos = 0, len(s), True
    if s[0] == "-":
        pos, i = False, 1
    sig = exp = 0
    while i < n and s[i].isdigit():
        d = ord(s[i]) - 48
        if sig * 10 + d > _U64:
            while i < n and s[i].isdigit():
                exp += 1
                i += 1
            break
        sig = sig * 10 + d
        i += 1
    if i < n and s[i] == ".":
        i += 1
        overflow = False
        while i < n and s[i].isdigit():
            d = ord(s[i]) - 48
            if overflow or sig * 10 + d > _U64:
                overflow = True
            else:
                sig = sig * 10 + d
                exp -= 1
            i += 1
    if i < n and s[i] in "eE":
        i += 1
        sign = 1
        if s[i] in "+-":
            sign = 1 if s[i] == "+" else -1
            i += 1
        exp += sign * int(s[i:])
    f = float(sig)
    while True:
        a = abs(exp)
        if a < len(_POW10):
            f = f * _POW10[a] if exp >= 0 else f / _POW10[a]
            break
        if f == 0.0:
            break
        f /= 1e308
        exp += 308
    return f if pos else -f


def read_json(path):
    """The JSON object of ``path``; floats keep their text (HF reads them its own way)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    try:
        return json.loads(text, parse_float=JsonFloat.parse)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None


def load_huggingface(path):
    from ..models.huggingface import HuggingFaceModel
    cfg = read_json(path)
    if not isinstance(cfg, dict) or "model" not in cfg:
        raise ValueError(f"{path}: not a tokenizer.json (no 'model' object)")
    return HuggingFaceModel(cfg)


def tokenizer_from_config(cfg):
    """A ``Tokenizer`` for a ``tokenizer.json`` object already parsed into a dict (HF's schema).
    Loaders of other formats (GGUF, WordPiece ``vocab.txt``, ...) translate into this schema and
    build through here."""
    from ..tokenizer import Tokenizer
    from ..models.huggingface import HuggingFaceModel
    if not isinstance(cfg, dict) or "model" not in cfg:
        raise ValueError("not a tokenizer.json object (no 'model' object)")
    return Tokenizer(HuggingFaceModel(cfg))


def to_huggingface_json(model):
    """The ``tokenizer.json`` dict for an nbtok model."""
    name = type(model).__name__
    if name == "HuggingFaceModel":
        return model.to_json()
    if name == "ByteLevelBPE":
        return _bytelevel_json(model)
    if hasattr(model, "to_huggingface_json"):
        return model.to_huggingface_json()
    raise TypeError(f"{name} cannot be saved as tokenizer.json")


def save_huggingface(model, path):
    write_json(to_huggingface_json(model), path)


def write_json(cfg, path):
    write_atomic(path, json.dumps(cfg, ensure_ascii=False, indent=2))


def _bytelevel_json(model):
    from ..pre_tokenizers.bytelevel import GPT2_ORIGINAL, R50K
    from .gpt2 import bytes_to_token
    from ..vocab import NORMAL
    kinds = model.vocab.kinds
    vocab = {}
    for i, p in enumerate(model.vocab.pieces()):
        if kinds[i] == NORMAL:
            vocab[bytes_to_token(p)] = i
    merges = [[bytes_to_token(a), bytes_to_token(b)] for a, b in model.merges]
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True}
             for t, i in sorted(model.special_tokens.items(), key=lambda kv: kv[1])]
    pattern = model.pre.pattern
    if pattern in (GPT2_ORIGINAL, R50K):
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    else:
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None, "pre_tokenizer": pre,
        "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": bool(model.whole_piece), "vocab": vocab, "merges": merges},
    }
