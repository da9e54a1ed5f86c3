"""Numeric pipeline: 100,000 short documents (one line each) into a padded int32 matrix.

nbtok ``encode_batch(padding="longest")`` against HF tokenizers ``encode_batch`` with padding
enabled plus the conversion of its encodings to NumPy matrices (what a data loader does),
with and without offsets.
"""
import numpy as np

from . import _common as common

N_DOCS = 100_000


def short_documents():
    docs = [l for l in common.read_corpus("en_gutenberg", 12_000_000).split("\n") if l.strip()]
    return docs[:N_DOCS]


def padded_encoder(library, offsets):
    if library == "nbtok":
        tok = common.nbtok_gpt2()
        return lambda docs: tok.encode_batch(docs, padding="longest", pad_id=50256, return_offsets=offsets,
                                             disallowed_special=())
    tok = common.tokenizers_gpt2()
    tok.enable_padding(pad_id=50256, pad_token="<|endoftext|>")

    def run(docs):
        enc = tok.encode_batch(docs, add_special_tokens=False)
        ids = np.array([e.ids for e in enc], np.int32)
        mask = np.array([e.attention_mask for e in enc], np.int8)
        if offsets:
            return ids, mask, np.array([e.offsets for e in enc], np.int64)
        return ids, mask
    return run


class PaddedBatch:
    params = (["nbtok", "tokenizers"], [False, True])
    param_names = ["library", "offsets"]
    timeout = 900
    repeat = (1, 3, 60.0)
    number = 1

    def setup(self, library, offsets):
        self.docs = short_documents()
        self.run = padded_encoder(library, offsets)
        self.run(self.docs[:100])

    def time_padded_batch(self, library, offsets):
        self.run(self.docs)


class PaddedRatio:
    params = [False, True]
    param_names = ["offsets"]
    timeout = 900
    unit = "x"

    def setup(self, offsets):
        self.docs = short_documents()
        self.ours = padded_encoder("nbtok", offsets)
        self.theirs = padded_encoder("tokenizers", offsets)
        self.ours(self.docs[:100])
        self.theirs(self.docs[:100])

    def track_ratio_vs_tokenizers(self, offsets):
        return common.best_seconds(self.theirs, self.docs, repeat=2) / common.best_seconds(self.ours, self.docs, repeat=2)
