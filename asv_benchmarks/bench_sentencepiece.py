"""SentencePiece encode throughput: nbtok vs sentencepiece on the same ``.model`` files.

Models: a Llama-style BPE (identity, split_digits, byte_fallback, 32k) and a 32k Unigram,
trained once with ``sentencepiece`` on the bench corpora and cached in ``cache_dir()``; plus
the shared BPEmb (BPE, 100k) and WMT en-de (Unigram, 32k) models. Documents are the lines of
4 MB of English (en_gutenberg) and of a 4 MB multilingual mix. ``track_ratio`` is nbtok's
throughput over sentencepiece's at the same thread count, measured in the same process;
``track_worst_case_growth`` is time(1 MB) / time(100 KB) for text without spaces;
``track_load_ratio`` is nbtok's load time over sentencepiece's for the BPEmb model.
``ZooRatios`` (issue 26): the ratio on every ``.model`` under models/ and zoo/ of the shared
data (files sentencepiece cannot load are skipped), on 1 MB of long documents and of short
multilingual lines (``scripts/bench_sentencepiece.py --zoo`` builds both).
"""
import io
import time

from . import _common as common

MB = 4_000_000
MODELS = ["llama_bpe_32k", "unigram_32k", "sp_bpe_bpemb_en", "sp_unigram_wmtende"]
CORPORA = {"english": ["en_gutenberg"],
           "multilingual": ["ru_literature", "ja_aozora", "zh_classical_poetry", "multi_bible_nt"]}
TRAIN = {
    "llama_bpe_32k": dict(model_type="bpe", vocab_size=32000, byte_fallback=True, split_digits=True,
                          normalization_rule_name="identity", remove_extra_whitespaces=False,
                          allow_whitespace_only_pieces=True),
    "unigram_32k": dict(model_type="unigram", vocab_size=32000),
}


def model_file(name):
    if name not in TRAIN:
        return common.model_path(name)
    path = common.cache_dir() / f"spm_{name}.model"
    if not path.exists():
        spm = common.peer_or_skip("sentencepiece")
        lines = []
        for corpus in CORPORA["english"] + CORPORA["multilingual"]:
            lines += [x for x in common.read_corpus(corpus, 1_500_000).splitlines() if x.strip()]
        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, minloglevel=2,
                                       num_threads=2, input_sentence_size=120000, **TRAIN[name])
        path.write_bytes(buf.getvalue())
    return path


def documents(corpus):
    return common.line_documents(CORPORA[corpus], MB)


def encoder(library, model, threads):
    path = model_file(model)
    if library == "nbtok":
        tok = common.nbtok_sentencepiece(path)
        return lambda docs: tok.encode_batch_ragged(docs, num_threads=threads)
    sp = common.sentencepiece_processor(path)
    return lambda docs: sp.encode(docs, num_threads=threads)


class EncodeBatch:
    params = (MODELS, ["english", "multilingual"], ["nbtok", "sentencepiece"], [1, 2])
    param_names = ["model", "corpus", "library", "threads"]
    timeout = 900
    repeat = (1, 3, 60.0)
    number = 1

    def setup(self, model, corpus, library, threads):
        self.docs = documents(corpus)
        self.encode = encoder(library, model, threads)
        self.encode(self.docs[:100])

    def time_encode_batch(self, model, corpus, library, threads):
        self.encode(self.docs)


class Ratios:
    """nbtok's throughput over sentencepiece's (same documents and threads, same process)."""
    params = (MODELS, ["english", "multilingual"], [1, 2])
    param_names = ["model", "corpus", "threads"]
    timeout = 900
    unit = "x"

    def setup(self, model, corpus, threads):
        self.docs = documents(corpus)
        self.ours = encoder("nbtok", model, threads)
        self.theirs = encoder("sentencepiece", model, threads)
        self.ours(self.docs[:100])

    def track_ratio(self, model, corpus, threads):
        ours = common.best_seconds(self.ours, self.docs, repeat=3)
        theirs = common.best_seconds(self.theirs, self.docs, repeat=3)
        return theirs / ours


class WorstCase:
    """time(1 MB) / time(100 KB) on text without spaces (linear = 10), in the calling thread's
    CPU time (``encode`` of one text runs in that thread): the growth of the work, not of the
    preemption a 1 MB call suffers more often on a busy machine."""
    params = (["llama_bpe_32k", "unigram_32k"], ["japanese", "repeated_char"])
    param_names = ["model", "text"]
    timeout = 900
    unit = "x"

    def setup(self, model, text):
        self.tok = common.nbtok_sentencepiece(model_file(model))
        if text == "japanese":
            base = "".join(common.read_corpus("ja_aozora", 3_000_000).split())
        else:
            base = "\u3042" * 400_000
        self.small = base.encode()[:100_000].decode("utf-8", "ignore")
        self.big = base.encode()[:1_000_000].decode("utf-8", "ignore")
        self.tok.encode(self.small)

    def track_worst_case_growth(self, model, text):
        return (common.best_seconds(self.tok.encode, self.big, repeat=5, clock=time.thread_time)
                / common.best_seconds(self.tok.encode, self.small, repeat=5, clock=time.thread_time))


class Load:
    unit = "x"
    timeout = 600

    def track_load_ratio(self):
        path = str(common.model_path("sp_bpe_bpemb_en"))
        nbtok = common.nbtok_or_skip("nbtok")
        spm = common.peer_or_skip("sentencepiece")
        nbtok.Tokenizer.from_sentencepiece(path)
        ours = common.best_seconds(nbtok.Tokenizer.from_sentencepiece, path, repeat=3)
        theirs = common.best_seconds(spm.SentencePieceProcessor, model_file=path, repeat=3)
        return ours / theirs


# ------------------------------------------------------------------ every .model of the shared data (issue 26)
def _zoo_names():
    """The ``.model`` files under models/ and zoo/ of the shared data, relative to it (empty when
    there is none); files sentencepiece cannot load are skipped in ``setup``."""
    root = common.data_dir(required=False)
    if root is None:
        return ["none"]
    names = [str(p.relative_to(root)) for p in sorted(root.glob("models/**/*.model")) + sorted(root.glob("zoo/**/*.model"))]
    return names or ["none"]


ZOO = _zoo_names()
_ZOO_TEXTS = {}


def zoo_setup(model, text):
    """(nbtok tokenizer, sentencepiece processor, documents) of ``scripts/bench_sentencepiece.py``'s
    zoo texts (1 MB each: long documents, ~85-byte multilingual lines)."""
    script = common.script_module("bench_sentencepiece")
    root = common.data_dir()
    path = root / model
    if not path.is_file():
        common.skip(f"{model} not found")
    spm = common.peer_or_skip("sentencepiece")
    try:
        sp = spm.SentencePieceProcessor(model_file=str(path))
    except Exception as e:  # noqa: BLE001 (a tiktoken rank file named .model)
        common.skip(f"sentencepiece cannot load {model}: {e}")
    if not _ZOO_TEXTS:
        _ZOO_TEXTS.update(script.zoo_texts(root, 1.0))
    tok = common.nbtok_sentencepiece(path)
    return tok, sp, _ZOO_TEXTS[text]


class ZooRatios:
    """nbtok's throughput over sentencepiece's on every ``.model`` of the shared data, long
    documents and short lines, 1 and 2 threads (same process, interleaved, best of 3 each)."""
    params = (ZOO, ["long", "short"], [1, 2])
    param_names = ["model", "text", "threads"]
    timeout = 900
    unit = "x"

    def setup(self, model, text, threads):
        tok, sp, self.docs = zoo_setup(model, text)
        self.ours = lambda docs: tok.encode_batch_ragged(docs, num_threads=threads)
        self.theirs = lambda docs: sp.encode(docs, num_threads=threads)
        self.ours(self.docs[:100])

    def track_ratio(self, model, text, threads):
        ours = theirs = 1e9
        for _ in range(3):  # interleaved
            ours = min(ours, common.best_seconds(self.ours, self.docs, repeat=1))
            theirs = min(theirs, common.best_seconds(self.theirs, self.docs, repeat=1))
        return theirs / ours
