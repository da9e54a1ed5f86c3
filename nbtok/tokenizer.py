"""``Tokenizer``: the pipeline object users hold.

It wraps one *model* object (``ByteLevelBPE``, ``SentencePieceModel``, ...) that owns the
flat arrays and calls the kernels. Every model implements this protocol:

    vocab                              nbtok.vocab.Vocab
    model_type                         str ("bytelevel_bpe", "unigram", "bpe", ...)
    special_tokens                     dict[str, int]
    encode(text, **opts)               -> np.ndarray[int32]
    encode_batch_ragged(texts, **opts) -> (ids int32[total], offsets int64[n + 1])
    encode_as_pieces(text)             -> list[str]
    decode_bytes(ids)                  -> bytes
    decode(ids)                        -> str
    id_to_piece(i) / piece_to_id(s)
    state()                            -> dict of arrays and plain values (native format, pickling)
    from_state(state)                  classmethod, the inverse

and optionally ``sample_encode``, ``nbest_encode``, ``save_sentencepiece`` ... which the
Tokenizer forwards when present. The Tokenizer adds what is common to all models: batch
views (ragged / padded), the native file format, pickling and the constructors.
"""
import numpy as np

from .text import as_str, fix_surrogates, split_ragged, str_list

#: how each model type spells "this model does not have that call": the alternative to offer
_ALTERNATIVES = {
    "sample_encode": "subword sampling needs a SentencePiece model (Unigram sampling, BPE-dropout)",
    "sample_encode_batch": "subword sampling needs a SentencePiece model (Unigram sampling, BPE-dropout)",
    "calculate_entropy": "the segmentation entropy needs a SentencePiece Unigram model",
    "nbest_encode": "n-best segmentation needs a SentencePiece model",
    "save_tiktoken": "only byte-level BPE models have a .tiktoken form; use save() or save_huggingface()",
    "save_gpt2": "only byte-level BPE models have a vocab.json + merges.txt form; use save()",
    "save_sentencepiece": "only SentencePiece models have a .model form; use save() or save_huggingface()",
    "save_huggingface": "use save() for nbtok's native format",
    "get_score": "piece scores exist only in SentencePiece models",
}


class Tokenizer:
    """A tokenizer: text to int32 ids and back, for every model type nbtok loads.

    Build one with a constructor (``from_tiktoken``, ``from_gpt2``, ``from_sentencepiece``,
    ``from_huggingface``, ``load``), ``nbtok.get_encoding`` or a trainer. Every model type
    takes the same inputs: ``str`` (lone surrogates become U+FFFD, as in tiktoken) or bytes
    holding UTF-8; ids out of the vocabulary are a ``ValueError``; a call the model type does
    not support raises ``NotImplementedError`` saying what to use instead.

    Examples:
        >>> import nbtok
        >>> tok = nbtok.get_encoding("gpt2")
        >>> tok.encode("Hello world").tolist()
        [15496, 995]
        >>> tok.decode([15496, 995])
        'Hello world'
        >>> tok.encode(b"Hello").tolist() == tok.encode("Hello").tolist()
        True
    """

    def __init__(self, model):
        self._bind(model)

    def _bind(self, model):
        self.model = model

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_tiktoken(cls, path, pattern=None, special_tokens=None, cache=True):
        """A ``.tiktoken`` rank file (gzip accepted).

        OpenAI's published encodings (r50k / gpt2, p50k, cl100k, o200k) are recognised by the
        sha256 of the file, as tiktoken's registry does, and get their own pattern and special
        tokens; for any other rank file give ``pattern`` ("gpt2", "cl100k", "o200k", "llama3",
        "qwen2", ... or a regex) and its ``special_tokens`` (``{text: id}``). The arrays built
        from the file are kept in the array cache (``nbtok/arraycache.py``) unless ``cache=False``.

        Examples:
            >>> enc = nbtok.Tokenizer.from_tiktoken("cl100k_base.tiktoken")  # doctest: +SKIP
            >>> enc.encode("DON'T").tolist()  # doctest: +SKIP
            [17773]
        """
        from .formats.tiktoken import known_encoding, read_file, read_tiktoken
        from .models.bytelevel import ByteLevelBPE
        data = read_file(path)
        known = known_encoding(data, path)
        if known is not None:
            pattern = pattern or known[1]
            special_tokens = known[2] if special_tokens is None else special_tokens
        elif pattern is None:
            read_tiktoken(path, data)  # a corrupt file says so first
            raise ValueError(f"{path} is not one of OpenAI's published encodings (r50k, p50k, cl100k, o200k: "
                             f"recognised by sha256), so its pre-tokenizer must be given: pattern='gpt2', "
                             f"'cl100k', 'o200k', 'llama3', 'qwen2', ... or a regex")
        return cls(ByteLevelBPE.from_rank_file(path, pattern, special_tokens or {}, cache))

    @classmethod
    def from_gpt2(cls, vocab_json_path, merges_txt_path, pattern="gpt2", special_tokens=None):
        """GPT-2's ``vocab.json`` + ``merges.txt`` (byte-level BPE).

        Examples:
            >>> tok = nbtok.Tokenizer.from_gpt2("vocab.json", "merges.txt")  # doctest: +SKIP
        """
        from .formats.gpt2 import load_gpt2
        from .models.bytelevel import ByteLevelBPE
        tokens, merges, specials = load_gpt2(vocab_json_path, merges_txt_path)
        specials.update(special_tokens or {})
        return cls(ByteLevelBPE.from_merges(tokens, merges, pattern, specials))

    @classmethod
    def from_sentencepiece(cls, model_path):
        """A SentencePiece ``.model`` file (Unigram, BPE, char or word; its own normalizer).

        Examples:
            >>> sp = nbtok.Tokenizer.from_sentencepiece("llama.model")  # doctest: +SKIP
        """
        from .models.sentencepiece import SentencePieceModel
        return cls(SentencePieceModel.load(model_path))

    @classmethod
    def from_huggingface(cls, tokenizer_json_path):
        """An HF ``tokenizer.json`` (BPE, Unigram, WordPiece or WordLevel with its normalizer,
        pre-tokenizer, post-processor and decoder).

        Examples:
            >>> hf = nbtok.Tokenizer.from_huggingface("tokenizer.json")  # doctest: +SKIP
        """
        from .formats.huggingface import load_huggingface
        return cls(load_huggingface(tokenizer_json_path))

    @classmethod
    def from_wordpiece(cls, vocab_txt_path, lowercase=None):
        """A BERT WordPiece ``vocab.txt``, with the pipeline HF's ``BertWordPieceTokenizer``
        builds (``nbtok/formats/wordpiece.py``). ``lowercase`` None: lower-case (and strip
        accents) when the vocabulary has no upper-case token, as an uncased model's.

        Examples:
            >>> bert = nbtok.Tokenizer.from_wordpiece("vocab.txt")  # doctest: +SKIP
        """
        from .formats.huggingface import tokenizer_from_config
        from .formats.wordpiece import read_vocab, wordpiece_config
        return tokenizer_from_config(wordpiece_config(read_vocab(vocab_txt_path), lowercase))

    @classmethod
    def from_gguf(cls, path):
        """The vocabulary of a GGUF file (llama.cpp; ``tokenizer.ggml.model`` gpt2, llama, bert or
        t5; ``nbtok/formats/gguf.py``). Only the metadata is read, never the tensors. A gpt2 /
        bert vocabulary's ``encode`` adds BOS / EOS / [CLS] [SEP] as llama.cpp's
        ``add_special=true`` (``add_special_tokens=False``: none); a llama / t5 one is a
        SentencePiece model (``encode(text, add_bos=True)``).

        Examples:
            >>> tok = nbtok.Tokenizer.from_gguf("llama-2-7b.Q4_K_M.gguf")  # doctest: +SKIP
        """
        from .formats.gguf import load_gguf
        return load_gguf(path)

    @classmethod
    def from_file(cls, path, **options):
        """Any tokenizer file nbtok reads, its format recognised by content, not by name:
        tokenizer.json, sentencepiece ``.model``, tiktoken rank files (Llama 3's
        ``tokenizer.model`` too), GPT-2 ``vocab.json`` or ``merges.txt`` (the other half is
        found beside it), WordPiece ``vocab.txt``, GGUF, nbtok's native file. ``options`` go to the
        format's constructor (``pattern=`` for a rank file nbtok does not know).

        Examples:
            >>> tok = nbtok.Tokenizer.from_file("tokenizer.model", pattern="llama3")  # doctest: +SKIP
        """
        from .formats.detect import load_file
        return load_file(path, **options)

    @classmethod
    def from_pretrained(cls, folder, **options):
        """The tokenizer of a local model folder, as transformers picks it: ``tokenizer.json``,
        else a ``.model`` (sentencepiece or rank file), else ``vocab.json`` + ``merges.txt``,
        else ``vocab.txt``; with the folder's ``tokenizer_config.json`` and
        ``special_tokens_map.json`` applied to a tokenizer.json or ``.model`` as transformers
        applies them (special tokens, ``add_bos_token`` / ``add_eos_token``, ``do_lower_case``;
        ``nbtok/formats/hf_config.py``). Nothing is downloaded.

        Examples:
            >>> tok = nbtok.Tokenizer.from_pretrained("models/llama-3.1")  # doctest: +SKIP
        """
        from .formats.detect import load_pretrained
        return load_pretrained(folder, **options)

    @classmethod
    def load(cls, path):
        """A tokenizer saved with ``save`` (nbtok's native format: arrays in an npz, no pickle).

        Examples:
            >>> tok = nbtok.Tokenizer.load("gpt2.nbtok")  # doctest: +SKIP
        """
        from .formats.native import load_native
        return cls(load_native(path))

    def save(self, path):
        """Write nbtok's native format (any model type; ``load`` reads it back).

        Examples:
            >>> nbtok.get_encoding("gpt2").save("gpt2.nbtok")  # doctest: +SKIP
        """
        from .formats.native import save_native
        save_native(self.model, path)

    # ------------------------------------------------------------------ encoding
    def encode(self, text, **opts):
        """The ids of one text, an ``np.ndarray[int32]``.

        ``opts`` are the model's own: ``allowed_special`` / ``disallowed_special`` (byte-level,
        as tiktoken), ``add_bos`` / ``add_eos`` (SentencePiece), ``add_special_tokens``
        (tokenizer.json).

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").encode("hi there").tolist()
            [5303, 612]
        """
        if type(text) is not str:
            text = as_str(text)
        try:
            return self.model.encode(text, **opts) if opts else self.model.encode(text)
        except UnicodeEncodeError:  # a lone surrogate: U+FFFD, as tiktoken
            return self.encode(fix_surrogates(text), **opts)

    def encode_ordinary(self, text):
        """The ids of ``text`` with special tokens treated as plain text.

        Examples:
            >>> import nbtok
            >>> len(nbtok.get_encoding("gpt2").encode_ordinary("<|endoftext|>")) > 1
            True
        """
        return self._call("encode_ordinary", as_str(text))

    def encode_batch(self, texts, padding=False, max_length=None, truncation=False,
                     padding_side="right", truncation_side="right", pad_to_multiple_of=None,
                     pad_id=None, add_special_tokens=True, return_offsets=False, **opts):
        """Encode many texts with one parallel kernel call.

        With no padding, truncation or offsets asked: a list of int32 arrays (views into one
        flat buffer), as tiktoken's ``encode_batch``. Otherwise a ``nbtok.batch.BatchEncoding``
        (``ids``, ``attention_mask``, ``lengths``, ``offsets``), always, whatever the texts.
        Padding and truncation follow HF tokenizers: ``truncation=True`` cuts rows to
        ``max_length`` (keeping the special tokens the model adds; ``truncation_side``
        "right" or "left"), and only then; ``padding="longest"`` (or True) or
        ``"max_length"``, ``padding_side`` "right" or "left", ``pad_to_multiple_of`` rounds
        the width up; a row longer than ``max_length`` without truncation is a ``ValueError``.
        ``pad_id`` defaults to the model's pad token, else 0. ``return_offsets=True`` adds
        each token's character (start, end) in its text.

        Examples:
            >>> import nbtok
            >>> tok = nbtok.get_encoding("gpt2")
            >>> [a.tolist() for a in tok.encode_batch(["hi", "hi there"])]
            [[5303], [5303, 612]]
            >>> b = tok.encode_batch(["hi", "hi there"], padding="max_length", max_length=3)
            >>> b.ids.tolist(), b.attention_mask.tolist()
            ([[5303, 0, 0], [5303, 612, 0]], [[1, 0, 0], [1, 1, 0]])
        """
        from .batch import build_batch, check_options
        check_options(padding, max_length, truncation, padding_side, truncation_side, pad_to_multiple_of)
        texts = str_list(texts)
        if getattr(self.model, "accepts_add_special_tokens", False):
            opts["add_special_tokens"] = add_special_tokens
        numeric = padding not in (False, None, "do_not_pad") or truncation or return_offsets
        if not numeric:
            return split_ragged(*self._ragged(texts, "encode_batch_ragged", opts))
        if return_offsets:
            if not hasattr(self.model, "encode_batch_offsets"):
                raise NotImplementedError(f"offsets are not available for {self.model.model_type} models")
            ids, offsets, starts, ends = self._ragged(texts, "encode_batch_offsets", opts)
            spans = (starts, ends)
        else:
            (ids, offsets), spans = self._ragged(texts, "encode_batch_ragged", opts), None
        if pad_id is None:
            pad_id = getattr(self.model, "pad_id", None)
            pad_id = 0 if pad_id is None or pad_id < 0 else pad_id
        return build_batch(ids, offsets, spans, padding=padding, max_length=max_length,
                           truncation=truncation, padding_side=padding_side,
                           truncation_side=truncation_side, pad_to_multiple_of=pad_to_multiple_of,
                           pad_id=pad_id, added=self._added_counts(opts))

    def _ragged(self, texts, method, opts):
        try:
            return getattr(self.model, method)(texts, **opts)
        except UnicodeEncodeError:  # a lone surrogate somewhere: U+FFFD, as tiktoken
            return getattr(self.model, method)([fix_surrogates(t) for t in texts], **opts)

    def _added_counts(self, opts):
        """(leading, trailing) ids the model adds to every text with these options."""
        post = getattr(self.model, "post", None)
        if post is not None and opts.get("add_special_tokens", True):
            return len(post.prefix_ids), len(post.suffix_ids)
        return int(bool(opts.get("add_bos"))), int(bool(opts.get("add_eos")))

    def encode_with_offsets(self, text, **opts):
        """``(ids, starts, ends)``: per token, the character span of ``text`` it came from.

        Examples:
            >>> import nbtok
            >>> ids, starts, ends = nbtok.get_encoding("gpt2").encode_with_offsets("hi there")
            >>> starts.tolist(), ends.tolist()
            ([0, 2], [2, 8])
        """
        if not hasattr(self.model, "encode_batch_offsets"):
            raise NotImplementedError(f"offsets are not available for {self.model.model_type} models")
        ids, _, starts, ends = self._ragged([as_str(text)], "encode_batch_offsets", opts)
        return ids, starts, ends

    def encode_batch_ragged(self, texts, **opts):
        """``(ids int32[total], offsets int64[n + 1])``: text i is ``ids[offsets[i]:offsets[i+1]]``.

        Examples:
            >>> import nbtok
            >>> ids, offsets = nbtok.get_encoding("gpt2").encode_batch_ragged(["hi", "hi there"])
            >>> ids.tolist(), offsets.tolist()
            ([5303, 5303, 612], [0, 1, 3])
        """
        return self._ragged(str_list(texts), "encode_batch_ragged", opts)

    def encode_as_pieces(self, text):
        """The tokens of ``text`` as strings (``Ġworld``, ``▁world``, ``##ing``).

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").encode_as_pieces("hi there")
            ['hi', 'Ġthere']
        """
        return self._call("encode_as_pieces", as_str(text))

    def sample_encode(self, text, alpha=0.1, nbest_size=-1, seed=None, **opts):
        """One segmentation sampled as sentencepiece does (Unigram: from the lattice with
        ``p ~ exp(alpha * score)``, over all or the ``nbest_size`` best; BPE: BPE-dropout with
        probability ``alpha``). SentencePiece models only.

        Examples:
            >>> import nbtok  # doctest: +SKIP
            >>> sp = nbtok.Tokenizer.from_sentencepiece("t5.model")  # doctest: +SKIP
            >>> sp.sample_encode("Hello world", alpha=0.1, seed=0)  # doctest: +SKIP
        """
        return self._call("sample_encode", as_str(text), alpha, nbest_size, seed, **opts)

    def sample_encode_batch(self, texts, alpha=0.1, nbest_size=-1, seed=None, **opts):
        """``sample_encode`` of every text (a list of arrays); with ``seed``, text i is drawn as
        ``sample_encode(texts[i], seed=seed + i)`` draws it. SentencePiece models only.

        Examples:
            >>> sp.sample_encode_batch(["Hello world", "another text"], alpha=0.1, seed=0)  # doctest: +SKIP
        """
        return self._call("sample_encode_batch", [as_str(t) for t in texts], alpha, nbest_size, seed, **opts)

    def nbest_encode(self, text, n, **opts):
        """The ``n`` best segmentations, best first (SentencePiece Unigram and BPE models).

        Examples:
            >>> sp.nbest_encode("Hello world", 4)  # doctest: +SKIP
        """
        return self._call("nbest_encode", as_str(text), n, **opts)

    def calculate_entropy(self, text, alpha):
        """Entropy of the distribution ``p ~ exp(alpha * score)`` over every segmentation of
        ``text`` (sentencepiece's ``CalculateEntropy``; SentencePiece Unigram models), or a list
        of them for a list of texts.

        Examples:
            >>> sp.calculate_entropy("Hello world", alpha=0.1)  # doctest: +SKIP
        """
        if isinstance(text, (list, tuple)):
            return [self._call("calculate_entropy", as_str(t), alpha) for t in text]
        return self._call("calculate_entropy", as_str(text), alpha)

    def decode_stream(self, skip_special_tokens=False):
        """A ``DecodeStream`` for generation: ``.step(id)`` returns the text completed by that id.

        Examples:
            >>> import nbtok
            >>> stream = nbtok.get_encoding("gpt2").decode_stream()
            >>> "".join(stream.step(i) for i in [15496, 995]) + stream.flush()
            'Hello world'
        """
        from .stream import DecodeStream
        return DecodeStream(self, skip_special_tokens)

    # ------------------------------------------------------------------ decoding
    def decode(self, ids, skip_special_tokens=None, **opts):
        """The text of ``ids`` (invalid UTF-8 becomes U+FFFD). An id outside the vocabulary is
        a ``ValueError``. ``skip_special_tokens``: leave special tokens out (True) or in
        (False); by default each model type does what its reference does (tiktoken keeps
        them, sentencepiece drops control pieces, HF tokenizers skips them).

        Examples:
            >>> import nbtok
            >>> tok = nbtok.get_encoding("gpt2")
            >>> tok.decode([15496, 995])
            'Hello world'
            >>> tok.decode([15496, 50256]), tok.decode([15496, 50256], skip_special_tokens=True)
            ('Hello<|endoftext|>', 'Hello')
        """
        ids, opts = self._decode_args(self._ids(ids), skip_special_tokens, opts)
        return self.model.decode(ids, **opts)

    def decode_bytes(self, ids, skip_special_tokens=None, **opts):
        """The bytes of ``ids`` (byte-level tokens may end inside a character).

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").decode_bytes([15496])
            b'Hello'
        """
        ids, opts = self._decode_args(self._ids(ids), skip_special_tokens, opts)
        return self.model.decode_bytes(ids, **opts)

    def decode_batch(self, batch, skip_special_tokens=None, **opts):
        """``[decode(ids) for ids in batch]``.

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").decode_batch([[15496], [995]])
            ['Hello', ' world']
        """
        checked = [self._decode_args(self._ids(ids), skip_special_tokens, {})[0] for ids in batch]
        _, opts = self._decode_args(None, skip_special_tokens, opts)
        batched = getattr(self.model, "decode_batch", None)  # one kernel call where the model has it
        if batched is not None:
            return batched(checked, **opts)
        return [self.model.decode(ids, **opts) for ids in checked]

    def _decode_args(self, ids, skip_special_tokens, opts):
        """``skip_special_tokens`` for every model type: an option of tokenizer.json models,
        for the others the special ids are left out here."""
        if skip_special_tokens is None:
            return ids, opts
        if getattr(self.model, "accepts_add_special_tokens", False):
            return ids, dict(opts, skip_special_tokens=bool(skip_special_tokens))
        if skip_special_tokens and ids is not None and ids.size:
            special = np.fromiter(self.special_tokens.values(), np.int64)
            ids = ids[~np.isin(ids, special)]
        return ids, opts

    def _ids(self, ids):
        """``ids`` as an int64 array, every id inside the vocabulary (else ``ValueError``)."""
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"ids must be a sequence of ints, not {type(ids).__name__}")
        arr = np.asarray(ids)
        if arr.size == 0:
            return np.zeros(0, np.int64)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"ids must be integers, not {arr.dtype}")
        arr = arr.ravel()
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0 or hi >= self.vocab_size:
            self._check_id(lo if lo < 0 else hi)
        return arr

    def _check_id(self, i):
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"a token id must be an int, not {type(i).__name__}")
        if not 0 <= i < self.vocab_size:
            raise ValueError(f"token id {int(i)} is not in the vocabulary (ids 0..{self.vocab_size - 1})")
        return int(i)

    # ------------------------------------------------------------------ vocabulary
    @property
    def vocab_size(self):
        """The number of ids, special tokens included.

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").vocab_size
            50257
        """
        return len(self.model.vocab)

    @property
    def n_vocab(self):
        """``vocab_size`` under tiktoken's name."""
        return self.vocab_size

    @property
    def model_type(self):
        """``"bytelevel_bpe"``, ``"unigram"``, ``"bpe"``, ``"wordpiece"``, ...

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").model_type
            'bytelevel_bpe'
        """
        return self.model.model_type

    @property
    def vocab(self):
        """``{id: bytes}`` for every id (special tokens as their UTF-8 text; SentencePiece
        pieces with their ``▁``), the same for every model type and after ``save``/``load``.

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").vocab[15496]
            b'Hello'
        """
        v = self.model.vocab
        data, offs = v.piece_bytes.tobytes(), v.piece_offsets.tolist()
        return {i: data[offs[i]:offs[i + 1]] for i in range(len(offs) - 1)}

    def get_vocab(self):
        """``{piece: id}`` as HF tokenizers' ``get_vocab`` (pieces as ``id_to_piece`` spells them).

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").get_vocab()["Hello"]
            15496
        """
        return {self.model.id_to_piece(i): i for i in range(self.vocab_size)}

    def id_to_piece(self, i):
        """The token ``i`` as a string (``Ġhello``, ``▁hello``, a special token's text).

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").id_to_piece(995)
            'Ġworld'
        """
        return self.model.id_to_piece(self._check_id(i))

    def piece_to_id(self, piece):
        """The id of a token spelled as ``id_to_piece`` spells it (-1 or the unknown id when
        absent, as the model's library does).

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").piece_to_id("Ġworld")
            995
        """
        if not isinstance(piece, (str, bytes)):
            raise TypeError(f"piece must be str, not {type(piece).__name__}")
        return self.model.piece_to_id(piece)

    def get_score(self, i):
        """The score of piece ``i`` (SentencePiece models)."""
        return self._call("get_score", self._check_id(i))

    @property
    def special_tokens(self):
        """``{text: id}`` of the special (control) tokens.

        Examples:
            >>> import nbtok
            >>> nbtok.get_encoding("gpt2").special_tokens
            {'<|endoftext|>': 50256}
        """
        return dict(self.model.special_tokens)

    # ------------------------------------------------------------------ other formats
    def save_tiktoken(self, path):
        """Write a ``.tiktoken`` rank file (byte-level BPE models)."""
        return self._call("save_tiktoken", path)

    def save_gpt2(self, vocab_json_path, merges_txt_path):
        """Write GPT-2's ``vocab.json`` + ``merges.txt`` (byte-level BPE models)."""
        return self._call("save_gpt2", vocab_json_path, merges_txt_path)

    def save_sentencepiece(self, path):
        """Write a SentencePiece ``.model`` that ``sentencepiece`` loads (SentencePiece models)."""
        return self._call("save_sentencepiece", path)

    def save_huggingface(self, path, **opts):
        """Write a ``tokenizer.json`` that HF tokenizers loads."""
        return self._call("save_huggingface", path, **opts)

    def _call(self, name, *args, **opts):
        method = getattr(self.model, name, None)
        if method is None:
            raise NotImplementedError(f"{name} is not available for {self.model.model_type} models: "
                                      f"{_ALTERNATIVES.get(name, 'see the Tokenizer documentation')}")
        return method(*args, **opts)

    def __getattr__(self, name):
        # the rest of a model's own surface (merges, ranks, serialized_model_proto, ...)
        if name.startswith("_") or name == "model":
            raise AttributeError(name)
        try:
            return getattr(self.model, name)
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} ({self.model.model_type}) has no attribute {name!r}") from None

    def __getstate__(self):
        return {"model_class": type(self.model), "state": self.model.state()}

    def __setstate__(self, state):
        self._bind(state["model_class"].from_state(state["state"]))

    def __repr__(self):
        return f"<nbtok.Tokenizer {self.model.model_type} vocab_size={self.vocab_size}>"
