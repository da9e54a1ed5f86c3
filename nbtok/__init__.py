"""nbtok: subword tokenizers whose hot paths are Numba kernels over flat NumPy arrays."""
from .tokenizer import Tokenizer

__version__ = "0.1.0"
__all__ = ["Tokenizer", "get_encoding", "train_bpe", "train_bpe_from_counts", "train_sentencepiece"]


def get_encoding(name="gpt2", cache=True):
    """A byte-level BPE encoding shipped with the package (only ``gpt2`` is bundled). Its
    arrays come from the array cache (``nbtok/arraycache.py``) unless ``cache=False``."""
    from .models.bytelevel import bundled_encoding
    return Tokenizer(bundled_encoding(name, cache))


def train_bpe(input, vocab_size, special_tokens=(), pattern="gpt2", **kwargs):
    from .train.bpe import train_bpe as _train
    return _train(input, vocab_size, special_tokens=special_tokens, pattern=pattern, **kwargs)


def train_bpe_from_counts(counts, vocab_size, special_tokens=None, pattern=None, **kwargs):
    """Byte-level BPE from ``nbtok.corpus.count`` output; the merges of ``train_bpe`` on the same text."""
    from .train.bpe import train_bpe_from_counts as _train
    return _train(counts, vocab_size, special_tokens=special_tokens, pattern=pattern, **kwargs)


def train_sentencepiece(input, vocab_size, model_type="unigram", **kwargs):
    from .train.sentencepiece import train_sentencepiece as _train
    return _train(input, vocab_size, model_type=model_type, **kwargs)
