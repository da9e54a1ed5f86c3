"""BPE training side by side: nbtok vs HF tokenizers' BpeTrainer vs rustbpe (issue 4).

Each (trainer, vocab size) trains once on all files of ``corpora/bench`` (56 MB, five
languages) in a fresh subprocess with 2 threads (``scripts/bench_train_bpe.py`` does the work
and also prints the table). ``track_seconds`` is the training wall time, ``track_peak_rss_mb``
the child's peak RSS; ``setup_cache`` runs every combination once, so each number comes from
the same run. ``TrainCS336`` times the CS336 small case (corpus.en, vocab 500) in-process
with a warm JIT.

Run: ``asv run --python=same --show-stderr -b bench_train_bpe`` (takes ~15 min: HF is slow).
"""
import os

from ._common import REPO_ROOT, data_dir, nbtok_or_skip, script_module, skip

TRAINERS = ["nbtok", "hf", "rustbpe"]
VOCABS = [32000, 64000, 128000]
THREADS = 2


def _script():
    return script_module("bench_train_bpe")


class TrainBench:
    params = (TRAINERS, VOCABS)
    param_names = ["trainer", "vocab"]
    timeout = 7200
    number = 1
    repeat = 1

    def setup_cache(self):
        data_dir()  # skip without the shared data
        os.environ.setdefault("NBTOK_SHARED_DATA", str(data_dir()))
        script = _script()
        files = script.corpus_files("bench")
        results = {}
        for vocab in VOCABS:
            for trainer in TRAINERS:
                if not script.available(trainer):
                    continue
                try:
                    results[(trainer, vocab)] = script.run_child(trainer, files, vocab, THREADS)
                except Exception as exc:  # a failing peer must not hide the others
                    results[(trainer, vocab)] = {"error": str(exc)[:500]}
        return results

    def setup(self, results, trainer, vocab):
        r = results.get((trainer, vocab))
        if r is None:
            raise NotImplementedError(f"{trainer} is not installed")
        if "error" in r:
            raise NotImplementedError(f"{trainer} failed: {r['error']}")

    def track_seconds(self, results, trainer, vocab):
        return results[(trainer, vocab)]["seconds"]
    track_seconds.unit = "s"

    def track_peak_rss_mb(self, results, trainer, vocab):
        return results[(trainer, vocab)]["peak_rss_mb"]
    track_peak_rss_mb.unit = "MB"

    def track_seconds_vs_hf(self, results, trainer, vocab):
        hf = results.get(("hf", vocab))
        if not hf or "error" in hf:
            raise NotImplementedError("HF tokenizers result missing")
        return results[(trainer, vocab)]["seconds"] / hf["seconds"]
    track_seconds_vs_hf.unit = "ratio"

    def track_merges_equal_hf(self, results, trainer, vocab):
        """1 if the trainer's merges equal HF's (nbtok runs with tie_break="hf"), else 0."""
        hf = results.get(("hf", vocab))
        r = results[(trainer, vocab)]
        if not hf or "merges_sha1" not in r or "merges_sha1" not in hf:
            raise NotImplementedError("no merges to compare")
        return int(r["merges_sha1"] == hf["merges_sha1"])
    track_merges_equal_hf.unit = "bool"


class TrainCS336:
    """The CS336 small case: corpus.en, vocab 500, <|endoftext|> (warm JIT, in-process)."""
    timeout = 600

    def setup(self):
        self.nbtok = nbtok_or_skip("nbtok", "train_bpe")
        self.path = REPO_ROOT / "tests" / "data" / "train" / "corpus.en"
        if not self.path.is_file():
            skip("tests/data/train/corpus.en is not in this commit")
        self.nbtok.train_bpe(self.path, 500, special_tokens=["<|endoftext|>"], progress=False)

    def time_train_corpus_en_500(self):
        self.nbtok.train_bpe(self.path, 500, special_tokens=["<|endoftext|>"], progress=False)
