"""The decoder stage: SentencePiece's ids-to-bytes kernels and the tokenizer.json decoder components."""
