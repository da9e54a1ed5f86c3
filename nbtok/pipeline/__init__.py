"""The stages of a tokenizer.json pipeline, one module each, in HF tokenizers' order:

``normalizers`` -> ``pre_tokenizers`` -> (the model: ``nbtok.models``) -> ``post_processors``;
``decoders`` for the way back. ``units`` holds the batch state the stages share (the text as
code points with their alignments to the original text, and the rows of text units), and
``unicode`` the character classes and maps they read. The kernels are ``nbtok.kernels.hf_text``.
"""
