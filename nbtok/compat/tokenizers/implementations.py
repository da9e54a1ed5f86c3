"""``tokenizers.implementations`` on nbtok: the ready-made pipelines (BERT WordPiece, byte-level
BPE, character BPE, SentencePiece-style BPE and Unigram), composed of this package's components.
They encode and decode; ``ByteLevelBPETokenizer`` also trains (``trainers.BpeTrainer``), the
others' ``train`` raises NotImplementedError, and so does ``save_model``.

Examples:
    >>> from nbtok.compat.tokenizers.implementations import BertWordPieceTokenizer
    >>> tok = BertWordPieceTokenizer({"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hi": 3})
    >>> tok.encode("Hi there").tokens
    ['[CLS]', 'hi', '[UNK]', '[SEP]']
"""
from . import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

__all__ = ["BaseTokenizer", "BertWordPieceTokenizer", "ByteLevelBPETokenizer", "CharBPETokenizer",
           "SentencePieceBPETokenizer", "SentencePieceUnigramTokenizer"]

_COMPONENTS = ("model", "normalizer", "pre_tokenizer", "post_processor", "decoder")
_NO_TRAIN = "nbtok.compat.tokenizers has no trainers: train with nbtok.train_bpe / nbtok.train_sentencepiece"


class BaseTokenizer:
    """A ``Tokenizer`` with the parameters it was made with; every call goes to the tokenizer."""

    def __init__(self, tokenizer, parameters=None):
        object.__setattr__(self, "_tokenizer", tokenizer)
        object.__setattr__(self, "_parameters", parameters if parameters is not None else {})

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._tokenizer, name)

    def __setattr__(self, name, value):
        if name in _COMPONENTS:
            setattr(self._tokenizer, name, value)
        else:
            object.__setattr__(self, name, value)

    def __repr__(self):
        params = ", ".join(f"{k}={v}" for k, v in self._parameters.items())
        return f"Tokenizer(vocabulary_size={self._tokenizer.get_vocab_size()}, {params})"

    def normalize(self, sequence):
        return self._tokenizer.normalizer.normalize_str(sequence)

    def enable_truncation(self, max_length, stride=0, strategy="longest_first"):
        return self._tokenizer.enable_truncation(max_length, stride=stride, strategy=strategy)

    def save_model(self, directory, prefix=None):
        raise NotImplementedError("save_model (vocab / merges files) is not supported by nbtok.compat.tokenizers: "
                                  "use save() for a tokenizer.json")

    def train(self, *args, **kwargs):
        raise NotImplementedError(_NO_TRAIN)

    def train_from_iterator(self, *args, **kwargs):
        raise NotImplementedError(_NO_TRAIN)


def _add_known_specials(tok, tokens):
    """Mark as special the given tokens that the vocabulary has."""
    for t in tokens:
        if tok.token_to_id(str(t)) is not None:
            tok.add_special_tokens([str(t)])


def _unicode_normalizer(name):
    forms = {"nfc": normalizers.NFC, "nfd": normalizers.NFD, "nfkc": normalizers.NFKC, "nfkd": normalizers.NFKD}
    if name not in forms:
        raise ValueError(f"{name} is not an known unicode normalizer. Available are {list(forms)}")
    return forms[name]()


def _set_normalizers(tok, items):
    if len(items) == 1:
        tok.normalizer = items[0]
    elif items:
        tok.normalizer = normalizers.Sequence(items)


class BertWordPieceTokenizer(BaseTokenizer):
    """BERT: BertNormalizer, BertPreTokenizer, WordPiece, ``[CLS] A [SEP] (B [SEP])``."""

    def __init__(self, vocab=None, unk_token="[UNK]", sep_token="[SEP]", cls_token="[CLS]", pad_token="[PAD]",
                 mask_token="[MASK]", clean_text=True, handle_chinese_chars=True, strip_accents=None,
                 lowercase=True, wordpieces_prefix="##"):
        tok = Tokenizer(models.WordPiece(vocab, unk_token=str(unk_token)) if vocab is not None
                        else models.WordPiece(unk_token=str(unk_token)))
        _add_known_specials(tok, (unk_token, sep_token, cls_token, pad_token, mask_token))
        tok.normalizer = normalizers.BertNormalizer(clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
                                                    strip_accents=strip_accents, lowercase=lowercase)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        if vocab is not None:
            sep, cls = tok.token_to_id(str(sep_token)), tok.token_to_id(str(cls_token))
            if sep is None:
                raise TypeError("sep_token not found in the vocabulary")
            if cls is None:
                raise TypeError("cls_token not found in the vocabulary")
            tok.post_processor = processors.BertProcessing((str(sep_token), sep), (str(cls_token), cls))
        tok.decoder = decoders.WordPiece(prefix=wordpieces_prefix)
        super().__init__(tok, {"model": "BertWordPiece", "unk_token": unk_token, "sep_token": sep_token,
                               "cls_token": cls_token, "pad_token": pad_token, "mask_token": mask_token,
                               "clean_text": clean_text, "handle_chinese_chars": handle_chinese_chars,
                               "strip_accents": strip_accents, "lowercase": lowercase,
                               "wordpieces_prefix": wordpieces_prefix})

    @staticmethod
    def from_file(vocab, **kwargs):
        return BertWordPieceTokenizer(models.WordPiece.read_file(vocab), **kwargs)


class ByteLevelBPETokenizer(BaseTokenizer):
    """GPT-2 style: byte-level pre-tokenizer, decoder and offset trimming around BPE."""

    def __init__(self, vocab=None, merges=None, add_prefix_space=False, lowercase=False, dropout=None,
                 unicode_normalizer=None, continuing_subword_prefix=None, end_of_word_suffix=None, trim_offsets=False):
        if vocab is not None and merges is not None:
            tok = Tokenizer(models.BPE(vocab, merges, dropout=dropout,
                                       continuing_subword_prefix=continuing_subword_prefix or "",
                                       end_of_word_suffix=end_of_word_suffix or ""))
        else:
            tok = Tokenizer(models.BPE())
        items = ([_unicode_normalizer(unicode_normalizer)] if unicode_normalizer else []) + \
            ([normalizers.Lowercase()] if lowercase else [])
        _set_normalizers(tok, items)
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
        super().__init__(tok, {"model": "ByteLevelBPE", "add_prefix_space": add_prefix_space, "lowercase": lowercase,
                               "dropout": dropout, "unicode_normalizer": unicode_normalizer,
                               "continuing_subword_prefix": continuing_subword_prefix,
                               "end_of_word_suffix": end_of_word_suffix, "trim_offsets": trim_offsets})

    @staticmethod
    def from_file(vocab_filename, merges_filename, **kwargs):
        vocab, merges = models.BPE.read_file(vocab_filename, merges_filename)
        return ByteLevelBPETokenizer(vocab, merges, **kwargs)

    def _trainer(self, vocab_size, min_frequency, show_progress, special_tokens):
        from .trainers import BpeTrainer
        return BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=show_progress,
                          special_tokens=special_tokens, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())

    def train(self, files, vocab_size=30000, min_frequency=2, show_progress=True, special_tokens=()):
        """Train on text files (HF's ``ByteLevelBPETokenizer.train``: all 256 byte-level characters
        in the alphabet; nbtok's trainer, ``trainers.BpeTrainer``)."""
        self._tokenizer.train([files] if isinstance(files, str) else files,
                              self._trainer(vocab_size, min_frequency, show_progress, special_tokens))

    def train_from_iterator(self, iterator, vocab_size=30000, min_frequency=2, show_progress=True,
                            special_tokens=(), length=None):
        """``train`` on an iterator of texts."""
        self._tokenizer.train_from_iterator(iterator, self._trainer(vocab_size, min_frequency, show_progress,
                                                                    special_tokens), length=length)


class CharBPETokenizer(BaseTokenizer):
    """The original BPE (Sennrich et al.): words split by BERT's rules, ``</w>`` ends a word."""

    def __init__(self, vocab=None, merges=None, unk_token="<unk>", suffix="</w>", dropout=None, lowercase=False,
                 unicode_normalizer=None, bert_normalizer=True, split_on_whitespace_only=False):
        if vocab is not None and merges is not None:
            tok = Tokenizer(models.BPE(vocab, merges, dropout=dropout, unk_token=str(unk_token), end_of_word_suffix=suffix))
        else:
            tok = Tokenizer(models.BPE(unk_token=str(unk_token), dropout=dropout, end_of_word_suffix=suffix))
        _add_known_specials(tok, (unk_token,))
        items = ([_unicode_normalizer(unicode_normalizer)] if unicode_normalizer else []) + \
            ([normalizers.BertNormalizer(lowercase=False)] if bert_normalizer else []) + \
            ([normalizers.Lowercase()] if lowercase else [])
        _set_normalizers(tok, items)
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit() if split_on_whitespace_only else pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.BPEDecoder(suffix=suffix)
        super().__init__(tok, {"model": "BPE", "unk_token": unk_token, "suffix": suffix, "dropout": dropout,
                               "lowercase": lowercase, "unicode_normalizer": unicode_normalizer,
                               "bert_normalizer": bert_normalizer, "split_on_whitespace_only": split_on_whitespace_only})

    @staticmethod
    def from_file(vocab_filename, merges_filename, **kwargs):
        vocab, merges = models.BPE.read_file(vocab_filename, merges_filename)
        return CharBPETokenizer(vocab, merges, **kwargs)


class SentencePieceBPETokenizer(BaseTokenizer):
    """SentencePiece-style BPE: NFKC, Metaspace pre-tokenizer and decoder."""

    def __init__(self, vocab=None, merges=None, unk_token="<unk>", replacement="\u2581", add_prefix_space=True,
                 dropout=None, fuse_unk=False):
        if vocab is not None and merges is not None:
            tok = Tokenizer(models.BPE(vocab, merges, dropout=dropout, unk_token=unk_token, fuse_unk=fuse_unk))
        else:
            tok = Tokenizer(models.BPE(dropout=dropout, unk_token=unk_token, fuse_unk=fuse_unk))
        _add_known_specials(tok, (unk_token,))
        tok.normalizer = normalizers.NFKC()
        scheme = "always" if add_prefix_space else "never"
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme)
        tok.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)
        super().__init__(tok, {"model": "SentencePieceBPE", "unk_token": unk_token, "replacement": replacement,
                               "add_prefix_space": add_prefix_space, "dropout": dropout})

    @staticmethod
    def from_file(vocab_filename, merges_filename, **kwargs):
        vocab, merges = models.BPE.read_file(vocab_filename, merges_filename)
        return SentencePieceBPETokenizer(vocab, merges, **kwargs)


class SentencePieceUnigramTokenizer(BaseTokenizer):
    """SentencePiece-style Unigram: Nmt, NFKC and runs of spaces as one, Metaspace pre-tokenizer
    and decoder; ``from_spm`` reads a sentencepiece Unigram ``.model`` (its charsmap as the
    normalizer) as HF does."""

    def __init__(self, vocab=None, replacement="\u2581", add_prefix_space=True):
        tok = Tokenizer(models.Unigram(vocab) if vocab is not None else models.Unigram())
        tok.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.NFKC(),
                                               normalizers.Replace(Regex(" {2,}"), " ")])
        _metaspace(tok, replacement, add_prefix_space)
        super().__init__(tok, {"model": "SentencePieceUnigram", "replacement": replacement,
                               "add_prefix_space": add_prefix_space})

    @staticmethod
    def from_spm(filename):
        """The tokenizer of a sentencepiece Unigram ``.model``: its pieces and scores, unknown id
        and byte fallback, its precompiled charsmap then runs of spaces as one, Metaspace."""
        from ...formats.sentencepiece_model import read_model_file
        m = read_model_file(filename)
        if int(m.trainer.get("model_type", 1)) != 1:
            raise ValueError(f"{filename}: not a Unigram model (model_type {m.trainer.get('model_type')}); "
                             "SentencePieceUnigramTokenizer reads Unigram models")
        data, off = m.piece_bytes.tobytes(), m.piece_offsets.tolist()
        vocab = [(data[off[i]:off[i + 1]].decode("utf-8", "surrogatepass"), float(m.scores[i]))
                 for i in range(len(off) - 1)]
        tok = Tokenizer(models.Unigram(vocab, int(m.trainer.get("unk_id", 0)), bool(m.trainer.get("byte_fallback"))))
        charsmap = m.normalizer.get("precompiled_charsmap") or b""
        spaces = normalizers.Replace(Regex(" {2,}"), " ")
        tok.normalizer = normalizers.Sequence([normalizers.Precompiled(charsmap), spaces] if charsmap else [spaces])
        _metaspace(tok, "\u2581", True)
        obj = SentencePieceUnigramTokenizer.__new__(SentencePieceUnigramTokenizer)
        BaseTokenizer.__init__(obj, tok, {"model": "SentencePieceUnigram"})
        return obj


def _metaspace(tok, replacement, add_prefix_space):
    scheme = "always" if add_prefix_space else "never"
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme=scheme)
    tok.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)
