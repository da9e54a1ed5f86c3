"""SentencePiece training: ``train_sentencepiece(input, vocab_size, model_type, **options)``.

The BPE trainer follows sentencepiece's ``bpe_model_trainer.cc`` (tests/test_train_sentencepiece.py
compares every piece, in order, with sentencepiece 0.2.3), the Unigram trainer its
``unigram_model_trainer.cc`` (``unigram.py``; the tests compare pieces, likelihood and
encodings with sentencepiece's own model). The options are sentencepiece's TrainerSpec /
NormalizerSpec fields by name (``options.DEFAULTS``), the whitespace ones
(``treat_whitespace_as_suffix``, ``allow_whitespace_only_pieces``, ``split_by_whitespace``:
``whitespace.py``), ``required_chars``, ``input_sentence_size`` with ``shuffle_input_sentence``
(sentencepiece's reservoir sampler on nbtok's ``seed``: ``sentences.sample_lines``) and
``normalization_rule_tsv`` (``rules.py``) included. CHAR and WORD models: ``char_word.py``.

Memory: with sentencepiece's default whitespace handling Unigram never holds the sentences (each
chunk of lines is counted); with other whitespace options it holds them, as its seeds come
from whole sentences. BPE holds the distinct sentences; ``input_sentence_size`` with
shuffling holds the sample.

Examples:
    >>> tok = train_sentencepiece(iter(["a b c ab ab abc"] * 10), 12, model_type="bpe")  # doctest: +SKIP
"""
from ...formats import sentencepiece_model as smp
from .model_writer import build_tokenizer
from .options import meta_pieces, resolve
from .sentences import (covering_chars, line_chunks, normalized_lines, normalized_sentences, required_chars,
                        sentencepiece_order)
from .whitespace import default_whitespace
from .char_word import char_pieces, word_pieces


def train_sentencepiece(input, vocab_size, model_type="unigram", **options):
    if model_type not in ("unigram", "bpe", "char", "word"):
        raise ValueError(f"model_type must be unigram, bpe, char or word, not {model_type!r}")
    spec = resolve(options)
    vocab_size = int(vocab_size)
    meta = meta_pieces(spec, vocab_size, model_type)
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
    metas = [p for p, _ in meta.values()]
    if model_type == "bpe" and default_whitespace(spec):
        from .bpe import counted_words, without_rare
        # the sentences are never held: each chunk of lines is counted into words and characters
        words, chars = counted_words(normalized_lines(input, spec, metas))
        req = covering_chars(chars, float(spec["character_coverage"]), spec["required_chars"])
        return _train_bpe(without_rare(words, req, chars), req, meta, spec, vocab_size)
    counts = normalized_sentences(input, spec, metas)
    req = required_chars(counts, float(spec["character_coverage"]), spec["required_chars"])
    if model_type == "word":
        pieces = word_pieces(counts, req, vocab_size - n_meta)
        if len(pieces) < vocab_size - n_meta and spec["hard_vocab_limit"]:
            raise ValueError(f"vocab_size is too high for this input: it has {len(pieces)} distinct words, which "
                             f"give {n_meta + len(pieces)} pieces, not {vocab_size}; lower vocab_size or pass "
                             "hard_vocab_limit=False")
        return build_tokenizer(pieces, meta, spec, smp.WORD)
    if model_type == "char":   # (sentencepiece keeps what there is, whatever hard_vocab_limit says)
        return build_tokenizer(char_pieces(req, vocab_size - n_meta), meta, spec, smp.CHAR)
    from .bpe import word_counts
    return _train_bpe(word_counts(counts, req, spec), req, meta, spec, vocab_size)


def _train_bpe(words, req, meta, spec, vocab_size):
    """The BPE model of ``words`` (the counted words merges run over) and the characters ``req``."""
    from .bpe import train_bpe_pieces
    n = vocab_size - len(meta) - len(req)
    if n < 0:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the {len(meta) + len(req)} required pieces")
    pieces = train_bpe_pieces(words, n, spec)
    if len(pieces) < n and spec["hard_vocab_limit"]:
        raise ValueError(f"vocab_size is too high for this input: it gives {len(meta) + len(req) + len(pieces)} "
                         f"pieces, not {vocab_size}; lower vocab_size or pass hard_vocab_limit=False")
    chars = [c for c, _ in sorted(req.items(), key=lambda kv: (-kv[1], kv[0]))]
    return build_tokenizer([(p, -float(i)) for i, p in enumerate(pieces + chars)], meta, spec, smp.BPE)
