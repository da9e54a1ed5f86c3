"""Seed table 2: Unigram Viterbi, nested loop vs trie, with sentencepiece as the third column.

Sentences: "The quick brown fox jumps over the lazy dog" and article 1 of the Universal
Declaration of Human Rights in English (corpora/udhr, the file found through index.xml).
Models: sentencepiece's test model (Unigram, 1000 pieces) and OpenNMT's WMT en-de model
(Unigram, 32000 pieces).

    nested_loop    reference_unigram.py: for each end, for each start (bounded by the
                   longest piece), hash lookup of the substring             (forward pass only)
    trie_forward   nbtok's double-array trie common-prefix search + lattice
                   (nbtok.kernels.trie + nbtok.models.unigram.viterbi)            (forward pass only)
    nbtok_encode   nbtok.Tokenizer.from_sentencepiece(model).encode(text)  (whole encode)
    sentencepiece  SentencePieceProcessor.encode(text)                     (whole encode)

The two forward-pass rows take the normalized text (``▁The▁quick...``, UTF-8 bytes);
the two encode rows take the raw sentence and include normalization. All four give the
same ids (tests/test_reference_bench.py).

Each timed call runs the implementation ``CALLS`` times in a row, so asv's figure in
milliseconds is the time of one call in microseconds. One call takes microseconds: asv re-runs
``setup`` (a model load) before every timed call of a benchmark that has one, so a single call
per sample would run on caches the model load has just flushed and would time the clock as much
as the call. A user encoding sentence after sentence runs on warm caches, as the loop does.
"""
import numpy as np

from . import _common as common

SENTENCES = ["quick_fox", "udhr_article1"]
IMPLEMENTATIONS = ["nested_loop", "trie_forward", "nbtok_encode", "sentencepiece"]
MODELS = ["sp_unigram_test", "sp_unigram_wmtende"]
CALLS = 1000


def nbtok_unigram(model_file):
    nbtok = common.nbtok_or_skip("nbtok")
    common.nbtok_or_skip("nbtok.models.sentencepiece")
    return nbtok.Tokenizer.from_sentencepiece(str(model_file))


def trie_forward_fn(tok, max_bytes):
    """A callable(normalized utf-8 bytes, uint8 array) -> symbols that runs only nbtok's
    trie-based forward pass + backtrack (``nbtok.models.unigram.viterbi.viterbi``: double-array trie
    common-prefix walk per start), on scratch arrays allocated once here, or skip."""
    import inspect
    kuni = common.nbtok_or_skip("nbtok.models.unigram.viterbi", "viterbi")
    m = tok.model
    if getattr(m, "model_type", None) != "unigram" or not hasattr(m, "M"):
        common.skip("nbtok's SentencePiece model has no Unigram kernel arguments (model.M)")
    # viterbi(norm, n, *model.M, best, start_at, node_id, syms): the model arrays in between
    M = tuple(m.M)
    py = getattr(kuni.viterbi, "py_func", kuni.viterbi)
    if len(inspect.signature(py).parameters) != len(M) + 6:
        common.skip("nbtok.models.unigram.viterbi.viterbi does not take (norm, n, *model.M, 4 scratch arrays)")
    best = np.empty(max_bytes + 1, np.float32)
    start_at = np.empty(max_bytes + 1, np.int32)
    node_id = np.empty(max_bytes + 1, np.int32)
    syms = np.empty(max_bytes + 1, np.int64)
    viterbi = kuni.viterbi

    def forward(norm):
        k = viterbi(norm, norm.shape[0], *M, best, start_at, node_id, syms)
        return syms[:k]

    return forward


class SeedUnigram:
    params = (MODELS, SENTENCES, IMPLEMENTATIONS)
    param_names = ["model", "sentence", "implementation"]
    timeout = 300

    def setup(self, model, sentence, implementation):
        from . import reference_unigram
        path = common.model_path(model)
        self.text = reference_unigram.seed_sentence(sentence)
        normalized = common.sentencepiece_text(self.text)  # ASCII seed sentences: NFKC is the identity
        self.normalized = np.frombuffer(normalized.encode("utf-8"), np.uint8)
        if implementation == "nested_loop":
            # the vocabulary, from sentencepiece (fast to load) or else from nbtok's model
            try:
                common.peer_or_skip("sentencepiece")
                ref = reference_unigram.NestedLoopUnigram.from_sentencepiece(path)
            except NotImplementedError:
                ref = reference_unigram.NestedLoopUnigram.from_nbtok(nbtok_unigram(path).model)
            self.fn, self.arg = ref.encode_normalized, self.normalized
        elif implementation == "trie_forward":
            self.fn, self.arg = trie_forward_fn(nbtok_unigram(path), self.normalized.shape[0]), self.normalized
        elif implementation == "nbtok_encode":
            self.fn, self.arg = nbtok_unigram(path).encode, self.text
        else:
            spm = common.peer_or_skip("sentencepiece")
            sp = spm.SentencePieceProcessor(model_file=str(path))
            self.fn, self.arg = sp.encode, self.text
        self.fn(self.arg)  # JIT warm-up / cache load outside the timed region

    def time_encode(self, model, sentence, implementation):
        fn, arg = self.fn, self.arg
        for _ in range(CALLS):
            fn(arg)
