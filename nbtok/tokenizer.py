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
from .text import split_ragged


class Tokenizer:
    def __init__(self, model):
        self._bind(model)

    def _bind(self, model):
        self.model = model
        # ``tok.encode`` is the model's own method: the same call as ``encode`` below, one
        # Python call less (a tenth of encoding a short sentence)
        self.encode = model.encode

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_tiktoken(cls, path, pattern="gpt2", special_tokens=None, cache=True):
        """A ``.tiktoken`` rank file (gzip accepted). The arrays built from it are kept in the
        array cache (``nbtok/arraycache.py``, ``$NBTOK_CACHE_DIR``) unless ``cache=False``."""
        from .models.bytelevel import ByteLevelBPE
        return cls(ByteLevelBPE.from_rank_file(path, pattern, special_tokens or {}, cache))

    @classmethod
    def from_gpt2(cls, vocab_json_path, merges_txt_path, pattern="gpt2", special_tokens=None):
        from .formats.gpt2 import load_gpt2
        from .models.bytelevel import ByteLevelBPE
        tokens, merges, specials = load_gpt2(vocab_json_path, merges_txt_path)
        specials.update(special_tokens or {})
        return cls(ByteLevelBPE.from_merges(tokens, merges, pattern, specials))

    @classmethod
    def from_sentencepiece(cls, model_path):
        from .models.sentencepiece import SentencePieceModel
        return cls(SentencePieceModel.load(model_path))

    @classmethod
    def from_huggingface(cls, tokenizer_json_path):
        from .formats.huggingface import load_huggingface
        return cls(load_huggingface(tokenizer_json_path))

    @classmethod
    def load(cls, path):
        from .formats.native import load_native
        return cls(load_native(path))

    def save(self, path):
        from .formats.native import save_native
        save_native(self.model, path)

    # ------------------------------------------------------------------ encoding
    def encode(self, text, **opts):
        if opts:
            return self.model.encode(text, **opts)
        return self.model.encode(text)  # (no empty keyword dict: this is most of a short call)

    def encode_ordinary(self, text):
        return self.model.encode(text, allowed_special=(), disallowed_special=())

    def encode_batch(self, texts, padding=False, max_length=None, truncation=False,
                     padding_side="right", pad_id=None, add_special_tokens=True,
                     return_offsets=False, **opts):
        """Encode many texts with one parallel kernel call.

        With no padding / truncation / offsets asked: a list of int32 arrays (views into one
        flat buffer), as tiktoken's ``encode_batch``. Otherwise a ``BatchEncoding`` with
        ``ids`` (int32[n, width] when padded, else flat), ``attention_mask``, ``lengths`` and,
        with ``return_offsets=True``, per-token character ``offsets`` into the original texts.
        ``padding``: "longest", "max_length" or False; ``truncation`` keeps the first
        ``max_length`` ids; ``padding_side``: "right" or "left"; ``pad_id`` defaults to the
        model's pad token, else 0.
        """
        texts = list(texts)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("encode_batch takes a list of str")
        if getattr(self.model, "accepts_add_special_tokens", False):
            opts["add_special_tokens"] = add_special_tokens
        numeric = padding not in (False, None, "do_not_pad") or truncation or return_offsets
        if not numeric:
            ids, offsets = self.model.encode_batch_ragged(texts, **opts)
            return split_ragged(ids, offsets)
        from .batch import build_batch
        if return_offsets and not hasattr(self.model, "encode_batch_offsets"):
            raise NotImplementedError(f"offsets are not available for {self.model.model_type} models")
        if return_offsets:
            ids, offsets, starts, ends = self.model.encode_batch_offsets(texts, **opts)
        else:
            (ids, offsets), starts, ends = self.model.encode_batch_ragged(texts, **opts), None, None
        if pad_id is None:
            pad_id = getattr(self.model, "pad_id", None)
            pad_id = 0 if pad_id is None or pad_id < 0 else pad_id
        return build_batch(ids, offsets, padding, max_length, truncation, padding_side, pad_id, starts, ends)

    def encode_with_offsets(self, text, **opts):
        """``(ids, starts, ends)``: per token, the character span in ``text`` it came from."""
        ids, _, starts, ends = self.model.encode_batch_offsets([text], **opts)
        return ids, starts, ends

    def decode_stream(self, skip_special_tokens=False):
        """A ``DecodeStream``: ``.step(id)`` returns the text completed by that id."""
        from .stream import DecodeStream
        return DecodeStream(self, skip_special_tokens)

    def encode_batch_ragged(self, texts, **opts):
        """``(ids int32[total], offsets int64[n + 1])``: text i is ``ids[offsets[i]:offsets[i+1]]``."""
        return self.model.encode_batch_ragged(list(texts), **opts)

    def encode_as_pieces(self, text):
        return self.model.encode_as_pieces(text)

    # ------------------------------------------------------------------ decoding
    def decode(self, ids):
        return self.model.decode(ids)

    def decode_bytes(self, ids):
        return self.model.decode_bytes(ids)

    def decode_batch(self, batch):
        return [self.model.decode(ids) for ids in batch]

    # ------------------------------------------------------------------ vocabulary
    @property
    def vocab_size(self):
        return len(self.model.vocab)

    @property
    def n_vocab(self):
        return self.vocab_size

    def id_to_piece(self, i):
        return self.model.id_to_piece(i)

    def piece_to_id(self, piece):
        return self.model.piece_to_id(piece)

    @property
    def special_tokens(self):
        return dict(self.model.special_tokens)

    def __getattr__(self, name):
        # Model-specific extras (sample_encode, nbest_encode, save_sentencepiece, vocab, merges...)
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def __getstate__(self):
        return {"model_class": type(self.model), "state": self.model.state()}

    def __setstate__(self, state):
        self._bind(state["model_class"].from_state(state["state"]))

    def __repr__(self):
        return f"<nbtok.Tokenizer {self.model.model_type} vocab_size={self.vocab_size}>"
