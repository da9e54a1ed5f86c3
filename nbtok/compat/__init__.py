"""Drop-in modules: the reference libraries' APIs on nbtok's kernels.

``nbtok.compat.tiktoken``: tiktoken's ``Encoding`` / ``get_encoding`` / ``encoding_for_model``.
``nbtok.compat.sentencepiece``: sentencepiece's ``SentencePieceProcessor`` and ``SentencePieceTrainer``.
"""
