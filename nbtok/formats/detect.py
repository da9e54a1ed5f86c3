"""Which tokenizer format a file holds, read from its content (never from its name), and the
loaders ``Tokenizer.from_file`` / ``Tokenizer.from_pretrained`` build on it.

Formats recognised: nbtok's native npz; ``tokenizer.json``; GPT-2 ``vocab.json`` /
``merges.txt`` (the other half is looked up beside it); tiktoken rank files, also gzipped or
under another name (Meta's Llama 3 ``tokenizer.model``); sentencepiece ``.model`` protobufs;
WordPiece ``vocab.txt``; OpenAI CLIP's files (its gzipped merges list, a ``vocab.json`` whose
tokens end in ``</w>``); GGUF files (their vocabulary); and, to refuse them by name, transformers' side files
(``tokenizer_config.json``, ``special_tokens_map.json``).
"""
import gzip
import json
import re
import zlib
from pathlib import Path

from . import clip

_TIKTOKEN_LINE = re.compile(rb"[A-Za-z0-9+/]*={0,2} \d+")
_CONFIG_KEYS = {"tokenizer_class", "model_max_length", "max_len", "do_lower_case", "added_tokens_decoder",
                "bos_token", "eos_token", "unk_token", "pad_token", "cls_token", "mask_token",
                "additional_special_tokens"}


def detect(path):
    """The format of the file at ``path``: one of "native", "tokenizer.json", "gpt2-vocab",
    "gpt2-merges", "tiktoken", "sentencepiece", "wordpiece-vocab", "gguf", "clip-merges",
    "hf-config". ``FileNotFoundError`` for a missing file, ``ValueError`` for none of these."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    with open(path, "rb") as f:
        if f.read(4) == b"GGUF":  # a model file can be gigabytes: not read whole
            return "gguf"
    data = path.read_bytes()
    if data[:2] == b"PK":
        return "native"
    if data[:2] == b"\x1f\x8b":
        try:
            head = gzip.decompress(data)[:65536]
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"{path}: a broken gzip file ({e})") from None
        return "tiktoken" if _is_tiktoken(head) else "clip-merges" if _is_merges(head) else _unknown(path)
    if data.lstrip()[:1] == b"{":
        return _json_kind(path, data)
    if _is_tiktoken(data[:65536]):
        return "tiktoken"
    if _is_merges(data[:65536]):
        return "gpt2-merges"
    if _is_sentencepiece(data):
        return "sentencepiece"
    if _is_wordpiece(data):
        return "wordpiece-vocab"
    return _unknown(path)


def _unknown(path):
    raise ValueError(f"{path}: not a tokenizer file nbtok knows (tokenizer.json, .model, .tiktoken, "
                     "vocab.json + merges.txt, vocab.txt, nbtok native)")


def _lines(head):
    lines = head.split(b"\n")
    return [line.rstrip(b"\r") for line in (lines[:-1] if len(lines) > 1 else lines)[:200] if line.strip()]


def _is_tiktoken(head):
    lines = _lines(head)
    return bool(lines) and all(_TIKTOKEN_LINE.fullmatch(line) for line in lines)


def _is_merges(head):
    lines = _lines(head)
    if lines and lines[0].startswith(b"#version"):
        return True
    return len(lines) > 10 and all(len(line.split(b" ")) == 2 for line in lines)


def _is_sentencepiece(data):
    from .sentencepiece_model import read_model_proto
    try:
        return read_model_proto(data).types.size > 0
    except (ValueError, TypeError):
        return False


def _is_wordpiece(data):
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return False
    return "[UNK]" in lines and all(" " not in t.strip() for t in lines[:1000])


def _json_kind(path, data):
    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: invalid JSON ({e})") from None
    if not isinstance(obj, dict):
        return _unknown(path)
    if "model" in obj and isinstance(obj["model"], dict):
        return "tokenizer.json"
    if _CONFIG_KEYS & set(obj):
        return "hf-config"
    if obj and all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values()):
        from .gpt2 import alphabet_bytes
        if all(alphabet_bytes(t) is not None for t in obj):
            return "gpt2-vocab"
        raise ValueError(f"{path}: a token -> id table that is not GPT-2's byte-level vocab.json (a "
                         "Marian or WordLevel vocabulary?): load the model file beside it")
    return _unknown(path)


def _sibling(path, want):
    """The other half of a GPT-2 pair beside ``path``: ``merges.txt`` for ``vocab.json`` (also
    ``x-vocab.json`` -> ``x-merges.txt``, OpenAI's ``encoder.json`` -> ``vocab.bpe``) and back."""
    path = Path(path)
    pairs = [("vocab.json", "merges.txt"), ("encoder.json", "vocab.bpe")]
    if want == "gpt2-vocab":
        pairs = [(b, a) for a, b in pairs]
    names = [path.name.replace(mine, other) for mine, other in pairs if path.name.endswith(mine)]
    names += [other for _, other in pairs]
    for name in names:
        if (path.parent / name).is_file() and name != path.name:
            return path.parent / name
    raise FileNotFoundError(f"{path} is one half of a GPT-2 vocab.json + merges.txt pair; the other half "
                            f"is not beside it (looked for {', '.join(dict.fromkeys(names))})")


def load_file(path, **options):
    """The model object for the file at ``path`` (see ``Tokenizer.from_file``)."""
    from ..tokenizer import Tokenizer
    kind = detect(path)
    if kind == "native":
        return Tokenizer.load(path)
    if kind == "tokenizer.json":
        return Tokenizer.from_huggingface(path)
    if kind == "sentencepiece":
        return Tokenizer.from_sentencepiece(path)
    if kind == "tiktoken":
        return Tokenizer.from_tiktoken(path, **options)
    if kind in ("gpt2-vocab", "gpt2-merges"):
        vocab, merges = (path, _sibling(path, "gpt2-merges")) if kind == "gpt2-vocab" else (_sibling(path, "gpt2-vocab"), path)
        if _is_clip_pair(vocab):
            return _clip(*clip.read_pair(vocab, merges))
        return Tokenizer.from_gpt2(vocab, merges, **options)
    if kind == "clip-merges":
        return _clip(*clip.read_merges_gz(path))
    if kind == "wordpiece-vocab":
        return Tokenizer.from_wordpiece(path, **options)
    if kind == "gguf":
        return Tokenizer.from_gguf(path)
    if kind == "hf-config":
        raise ValueError(f"{path} is a transformers configuration file, not a tokenizer: pass its folder "
                         "to Tokenizer.from_pretrained")
    raise NotImplementedError(f"{path}: {kind} files are not supported by nbtok yet")


def _is_clip_pair(vocab_json_path):
    try:
        return clip.is_clip_vocab(json.loads(Path(vocab_json_path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def _clip(vocab, merges):
    from .huggingface import tokenizer_from_config
    return tokenizer_from_config(clip.clip_config(vocab, merges))


#: the files ``from_pretrained`` looks for, in transformers' order of preference
PRETRAINED_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model",
                    "vocab.json", "vocab.txt")


def load_pretrained(folder, **options):
    """The tokenizer of a model folder (see ``Tokenizer.from_pretrained``): a tokenizer.json with
    the folder's ``tokenizer_config.json`` / ``special_tokens_map.json`` applied as transformers
    applies them (``nbtok/formats/hf_config.py``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"no such folder: {folder}")
    for name in PRETRAINED_FILES:
        path = folder / name
        if path.is_file():
            kind = detect(path)
            if kind in ("tokenizer.json", "sentencepiece"):  # with transformers' side files
                from . import hf_config
                cfg = hf_config.pipeline_for(path, kind, hf_config.read_tokenizer_config(folder))
                if cfg is not None:
                    from .huggingface import tokenizer_from_config
                    return tokenizer_from_config(cfg)
            return load_file(path, **options)
    found = sorted(p.name for p in folder.iterdir())
    raise FileNotFoundError(f"{folder} has none of {', '.join(PRETRAINED_FILES)} (it has: {', '.join(found[:12])})")
