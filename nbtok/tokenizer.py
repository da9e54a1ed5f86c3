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


class Tokenizer:
    def __init__(self, model):
        self.model = model

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_tiktoken(cls, path, pattern="gpt2", special_tokens=None):
        from .formats.tiktoken import load_tiktoken_ranks
        from .models.bytelevel import ByteLevelBPE
        return cls(ByteLevelBPE.from_ranks(load_tiktoken_ranks(path), pattern, special_tokens or {}))

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
        return self.model.encode(text, **opts)

    def encode_ordinary(self, text):
        return self.model.encode(text, allowed_special=(), disallowed_special=())

    def encode_batch(self, texts, **opts):
        """A list of int32 arrays, one per text (views into one flat buffer)."""
        ids, offsets = self.model.encode_batch_ragged(list(texts), **opts)
        return np.split(ids, offsets[1:-1])

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
        self.model = state["model_class"].from_state(state["state"])

    def __repr__(self):
        return f"<nbtok.Tokenizer {self.model.model_type} vocab_size={self.vocab_size}>"
