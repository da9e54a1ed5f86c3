"""nbtok: subword tokenizers whose hot paths are Numba kernels over flat NumPy arrays."""
from .tokenizer import Tokenizer

__version__ = "0.1.0"
__all__ = ["Tokenizer", "get_encoding", "train_bpe", "train_bpe_from_counts", "train_sentencepiece"]


def get_encoding(name="gpt2", cache=True):
    """A byte-level BPE encoding shipped with the package (only ``gpt2`` is bundled). Its
    arrays come from the array cache (``nbtok/arraycache.py``) unless ``cache=False``.

    Examples:
        >>> import nbtok
        >>> tok = nbtok.get_encoding("gpt2")
        >>> tok.encode("Hello world").tolist()
        [15496, 995]
    """
    from .models.bytelevel import bundled_encoding
    return Tokenizer(bundled_encoding(name, cache))


def train_bpe(input, vocab_size, special_tokens=(), pattern="gpt2", **kwargs):
    """Train a byte-level BPE tokenizer (GPT-2 style) and return it.

    ``input`` is a path, a list or tuple of paths, or any other iterable of str (each str one
    document, e.g. ``iter(texts)``). Ids: the special tokens first, then the 256 bytes in GPT-2's
    order, then one token per merge. Options (``tie_break``, ``progress``, ``num_threads``,
    ``errors``, ...): ``nbtok.train.bpe.train_bpe``.

    Examples:
        >>> import nbtok
        >>> tok = nbtok.train_bpe(iter(["low lower lowest"] * 10), 260, progress=False)
        >>> tok.merges[:2]
        [(b'o', b'w'), (b'l', b'ow')]
        >>> tok.decode(tok.encode("lower"))
        'lower'
    """
    from .train.bpe import train_bpe as _train
    return _train(input, vocab_size, special_tokens=special_tokens, pattern=pattern, **kwargs)


def train_bpe_from_counts(counts, vocab_size, special_tokens=None, pattern=None, **kwargs):
    """Byte-level BPE from ``nbtok.corpus.count`` output; the merges of ``train_bpe`` on the same text."""
    from .train.bpe import train_bpe_from_counts as _train
    return _train(counts, vocab_size, special_tokens=special_tokens, pattern=pattern, **kwargs)


def train_sentencepiece(input, vocab_size, model_type="unigram", **kwargs):
    """Train a SentencePiece model as sentencepiece 0.2.3 trains it: ``model_type`` "unigram"
    (the pieces sentencepiece's trainer picks) or "bpe" (sentencepiece's pieces, in its order);
    "char" and "word" raise ``NotImplementedError``. ``input`` is a path, a list of paths or an
    iterator of str (one sentence per line). Options are sentencepiece's ``TrainerSpec`` /
    ``NormalizerSpec`` fields under their own names (``character_coverage``, ``byte_fallback``,
    ``control_symbols``, ``user_defined_symbols``, ``split_digits``, ``unk_id`` .. ``pad_id``,
    ``normalization_rule_name``, ``seed_sentencepiece_size``, ``shrinking_factor``,
    ``num_sub_iterations``, ``hard_vocab_limit``, ...); one nbtok does not implement raises
    ``NotImplementedError`` naming it. The result saves as a ``.model`` that ``sentencepiece`` loads.

    Examples:
        >>> import nbtok
        >>> lines = ["the cat sat on the mat", "the dog sat on the log"] * 20
        >>> sp = nbtok.train_sentencepiece(iter(lines), 18, model_type="unigram")
        >>> [sp.id_to_piece(i) for i in range(3, 8)]
        ['▁', 't', 'e', 'h', 'at']
        >>> sp.save_sentencepiece("mine.model")  # doctest: +SKIP
    """
    from .train.sentencepiece import train_sentencepiece as _train
    return _train(input, vocab_size, model_type=model_type, **kwargs)
