"""The BPE model's kernels: one merge loop (``merge``) and its byte-level and SentencePiece lookups."""
