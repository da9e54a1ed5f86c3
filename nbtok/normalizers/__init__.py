"""The normalizer stage: SentencePiece's charsmap normalizer (with the alignment offsets need) and the tokenizer.json normalizer components, each beside its kernels."""
