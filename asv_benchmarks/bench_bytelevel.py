"""Byte-level BPE encode throughput (GPT-2 ranks), nbtok side by side with its peers.

Documents are the lines of 4 MB of English (en_gutenberg), of a 4 MB multilingual mix
(Russian, Japanese, Chinese, Bible translations) and 4 MB of short multilingual lines
(``_common.short_lines``: xquad, UDHR and bench lines cut to ~82 bytes, 41% ASCII; issue
25). ``time_encode_batch`` times one batch call per library and thread count; ``track_mbps`` reports MB/s and ``track_ratio`` nbtok's speed
over each peer's, measured in the same setup.
"""
import os

from . import _common as common

MB = 4_000_000
CORPORA = {"english": ["en_gutenberg"],
           "multilingual": ["ru_literature", "ja_aozora", "zh_classical_poetry", "multi_bible_nt"],
           "short_lines": None}
PEERS = ["tiktoken", "tokenizers", "tokie"]


def documents(corpus):
    names = CORPORA[corpus]
    if names is None:
        return common.short_lines(MB)
    docs = []
    for name in names:
        docs.extend(common.read_corpus(name, MB // len(names)).split("\n"))
    return docs


def batch_encoder(library, threads):
    if library == "nbtok":
        tok = common.nbtok_gpt2()
        return lambda docs: tok.encode_batch_ragged(docs, disallowed_special=(), num_threads=threads)
    if library == "tiktoken":
        enc = common.tiktoken_gpt2()
        return lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
    if threads != 1:
        common.skip("the Rust peers' thread pools are sized once per process")
    os.environ["RAYON_NUM_THREADS"] = "1"
    common.pin_to_one_cpu()
    if library == "tokenizers":
        tok = common.tokenizers_gpt2()
        return lambda docs: tok.encode_batch_fast(docs, add_special_tokens=False)
    if library == "tokie":
        tokie = common.peer_or_skip("tokie")
        path = common.cache_dir() / "gpt2-tokenizer.json"
        common.tokenizers_gpt2().save(str(path))
        tok = tokie.Tokenizer.from_json(str(path))
        return lambda docs: tok.encode_batch_flat(docs)
    raise ValueError(library)


class EncodeBatch:
    params = (list(CORPORA), ["nbtok"] + PEERS, [1, 2])
    param_names = ["corpus", "library", "threads"]
    timeout = 600
    repeat = (1, 5, 30.0)
    number = 1

    def setup(self, corpus, library, threads):
        self.docs = documents(corpus)
        self.encode = batch_encoder(library, threads)
        self.encode(self.docs[:100])

    def time_encode_batch(self, corpus, library, threads):
        self.encode(self.docs)


class Ratios:
    """nbtok's throughput over each peer's (same documents, same thread count, same process)."""
    params = (list(CORPORA), PEERS + ["tiktoken_2threads"])
    param_names = ["corpus", "peer"]
    timeout = 900
    unit = "x"

    def setup(self, corpus, peer):
        threads = 2 if peer.endswith("2threads") else 1
        self.docs = documents(corpus)
        self.nbytes = sum(len(d.encode()) for d in self.docs)
        self.ours = batch_encoder("nbtok", threads)
        self.theirs = batch_encoder(peer.split("_")[0], threads)
        self.ours(self.docs[:100])
        self.theirs(self.docs[:100])

    def track_ratio(self, corpus, peer):
        theirs = common.best_seconds(self.theirs, self.docs, repeat=3)
        ours = common.best_seconds(self.ours, self.docs, repeat=3)
        return theirs / ours

    def track_mbps_nbtok(self, corpus, peer):
        return common.mbps(self.nbytes, common.best_seconds(self.ours, self.docs, repeat=3))
