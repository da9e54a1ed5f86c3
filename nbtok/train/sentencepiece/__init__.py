"""SentencePiece training: ``train_sentencepiece(input, vocab_size, model_type)``.

The BPE trainer follows sentencepiece's ``bpe_model_trainer.cc`` (tests/test_train_sentencepiece.py
compares every piece, in order, with sentencepiece 0.2.3), the Unigram trainer its
``unigram_model_trainer.cc`` (``unigram.py``; the tests compare pieces, likelihood and
encodings with sentencepiece's own model); char and word training and the options listed in
``options.py`` as unsupported raise ``NotImplementedError``.

Examples:
    >>> tok = train_sentencepiece(iter(["a b c ab ab abc"] * 10), 12, model_type="bpe")  # doctest: +SKIP
"""
from ...formats import sentencepiece_model as smp
from .model_writer import build_tokenizer
from .options import meta_pieces, resolve
from .sentences import line_chunks, normalized_lines, normalized_sentences, required_chars, sentencepiece_order
from .whitespace import default_whitespace


def train_sentencepiece(input, vocab_size, model_type="unigram", **options):
    if model_type not in ("unigram", "bpe", "char", "word"):
        raise ValueError(f"model_type must be unigram, bpe, char or word, not {model_type!r}")
    if model_type not in ("unigram", "bpe"):
        raise NotImplementedError(f"model_type={model_type!r} training is not implemented by nbtok yet "
                                  "(only 'unigram' and 'bpe')")
    spec = resolve(options)
    vocab_size = int(vocab_size)
    meta = meta_pieces(spec, vocab_size)
    n_meta = len(meta)
    if model_type == "unigram":
        from .unigram import train_unigram, train_unigram_sentences
        metas = [p for p, _ in meta.values()]
        if default_whitespace(spec):
            # the sentences are never held: each chunk of lines is counted into words and characters
            lines = normalized_lines(input, spec, metas)
            pieces = train_unigram(line_chunks(lines), vocab_size, n_meta, spec)
        else:
            sentences = sentencepiece_order(list(normalized_lines(input, spec, metas, keep_empty=True)))
            pieces = train_unigram_sentences(sentences, vocab_size, n_meta, spec)
        return build_tokenizer(pieces, meta, spec, smp.UNIGRAM)
    counts = normalized_sentences(input, spec, [p for p, _ in meta.values()])
    req = required_chars(counts, float(spec["character_coverage"]), spec["required_chars"])
    from .bpe import train_bpe_pieces
    n = vocab_size - n_meta - len(req)
    if n < 0:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {n_meta + len(req)} required pieces")
    pieces = train_bpe_pieces(counts, req, n, spec)
    chars = [c for c, _ in sorted(req.items(), key=lambda kv: (-kv[1], kv[0]))]
    return build_tokenizer([(p, -float(i)) for i, p in enumerate(pieces + chars)], meta, spec, smp.BPE)
