"""BERT's WordPiece ``vocab.txt`` (one token per line, id = line number) as a tokenizer.json
pipeline, the one HF's ``BertWordPieceTokenizer`` and transformers' ``BertTokenizerFast`` build:
``BertNormalizer`` (clean text, Chinese characters isolated, lowercase and accents stripped
when uncased), ``BertPreTokenizer``, ``WordPiece`` (``[UNK]``, ``##``, 100 characters per word),
``[CLS] $A [SEP]``, the ``WordPiece`` decoder; the special tokens among ``[PAD] [UNK] [CLS]
[SEP] [MASK]`` that the vocabulary has are added tokens.
"""
from pathlib import Path

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def read_vocab(path):
    """``{token: id}`` of a vocab.txt; ValueError for a repeated token or a missing ``[UNK]``."""
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    if lines and lines[-1] == "":
        lines.pop()
    vocab = {}
    for i, line in enumerate(lines):
        token = line.rstrip("\r")
        if token in vocab:
            raise ValueError(f"{path}:{i + 1}: token {token!r} repeats line {vocab[token] + 1}")
        vocab[token] = i
    if "[UNK]" not in vocab:
        raise ValueError(f"{path}: a WordPiece vocabulary needs an [UNK] token")
    return vocab


def is_uncased(vocab):
    """True when no token but the bracketed specials has an upper-case letter: the vocabulary
    of an uncased model (a cased one has "The", "A", ...)."""
    return not any(t != t.lower() for t in vocab if not (t.startswith("[") and t.endswith("]")))


def wordpiece_config(vocab, lowercase=None):
    """The tokenizer.json dict for a WordPiece vocabulary; ``lowercase`` None: ``is_uncased``."""
    if lowercase is None:
        lowercase = is_uncased(vocab)
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in SPECIALS if t in vocab]
    post = None
    if "[CLS]" in vocab and "[SEP]" in vocab:
        post = {"type": "BertProcessing", "sep": ["[SEP]", vocab["[SEP]"]], "cls": ["[CLS]", vocab["[CLS]"]]}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": bool(lowercase)},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": post,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }
