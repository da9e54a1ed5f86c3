"""Seed table 1: BPE merge algorithms against input size.

Input: the first 1, 10, 100 and 1000 lines of tiny Shakespeare, joined with spaces and
written SentencePiece-style (whitespace -> ``▁``, a leading ``▁``), one initial symbol
per code point. Merge table: a sentencepiece BPE model (vocab 8000, identity
normalization) trained on tiny Shakespeare with sentencepiece, cached under
``.asv/cache``, read with sentencepiece (or nbtok's SentencePiece model object if
sentencepiece is missing). All four algorithms return the same ids as ``sentencepiece`` itself
(tests/test_reference_bench.py checks this).

    naive            rescan all pairs after each merge             O(N^2)
    naive_presplit   naive, per whitespace-delimited word          O(sum w^2)
    pq_tree          priority queue + balanced tree of symbols     O(N log N), log-time neighbours
    pq_linked_list   priority queue + linked list (nbtok.models.bpe.merge.bpe_merge, production)

The timed call is the merge only (symbol ids in, token ids out); the text-to-symbol step
is identical for all four and done in setup. Numba compilation happens in setup too.
"""
from . import _common as common

LINES = [1, 10, 100, 1000]
ALGORITHMS = ["naive", "naive_presplit", "pq_tree", "pq_linked_list"]
VOCAB_SIZE = 8000


class SeedBPE:
    params = (LINES, ALGORITHMS)
    param_names = ["lines", "algorithm"]
    timeout = 600
    # naive at 1000 lines takes ~1 s per call: cap the samples so the suite stays short
    repeat = (1, 10, 10.0)

    def setup_cache(self):
        from . import reference_bpe
        try:
            return str(reference_bpe.train_shakespeare_model(VOCAB_SIZE))
        except NotImplementedError as exc:  # no data / no sentencepiece: every case skips
            return "skip: " + str(exc)

    def setup(self, model_file, lines, algorithm):
        from . import reference_bpe
        if model_file.startswith("skip: "):
            common.skip(model_file[6:])
        self.table = reference_bpe.MergeTable.load(model_file)
        self.fn = reference_bpe.ALGORITHMS[algorithm]
        raw = " ".join(common.lines("tinyshakespeare", lines))
        self.cps, self.ids = self.table.symbols(common.sentencepiece_text(raw))
        # JIT warm-up (or cache load) on a tiny input, outside the timed region
        wc, wi = self.table.symbols(common.sentencepiece_text("First Citizen: before we proceed"))
        self.fn(wc, wi, self.table)

    def time_merge(self, model_file, lines, algorithm):
        self.fn(self.cps, self.ids, self.table)
