"""Trainers: byte-level BPE (``bpe.train_bpe``) and the shared pre-token counting."""
from .bpe import TrainedTokenizer, train_bpe

__all__ = ["train_bpe", "TrainedTokenizer"]
