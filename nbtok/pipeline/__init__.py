"""The tokenizer.json pipeline around its stages, in HF tokenizers' order:

``nbtok.normalizers`` -> ``nbtok.pre_tokenizers`` -> the model (``nbtok.models``) ->
``nbtok.post_processors``; ``nbtok.decoders`` for the way back. Here: ``units``, the batch state
the stages share (the text as code points with their alignments to the original text, and the
rows of text units), with its kernels in ``unit_kernels``; ``unicode``, the character classes and
maps the stages read; ``added_tokens``; ``lengths`` (the file's truncation and padding).
"""
