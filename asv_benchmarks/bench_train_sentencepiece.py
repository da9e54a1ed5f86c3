"""SentencePiece Unigram training side by side: nbtok vs sentencepiece (issue 21).

Each (trainer, vocab size) trains once on the bench corpus (the five files of ``corpora/bench``
cut to about 43 MB) in a fresh subprocess, sentencepiece with ``num_threads=2``
(``scripts/bench_train_sentencepiece.py`` does the work and also prints the table). ``track_seconds``
is the training wall time (nbtok's kernels compiled beforehand in the same subprocess),
``track_peak_rss_mb`` the child's peak RSS; ``setup_cache`` runs every combination once, so each
number comes from the same run. ``track_pieces_shared`` is the share of sentencepiece's pieces
in nbtok's model.

Run: ``asv run --python=same --show-stderr -b bench_train_sentencepiece`` (about 10 minutes).
"""
import os
import tempfile

from ._common import data_dir, peer_or_skip, script_module

TRAINERS = ["nbtok", "spm"]
VOCABS = [8000, 32000]
MB = 56


def _script():
    return script_module("bench_train_sentencepiece")


class TrainUnigram:
    params = (TRAINERS, VOCABS)
    param_names = ["trainer", "vocab"]
    timeout = 7200
    number = 1
    repeat = 1

    def setup_cache(self):
        data_dir()  # skip without the shared data
        peer_or_skip("sentencepiece")
        os.environ.setdefault("NBTOK_SHARED_DATA", str(data_dir()))
        script = _script()
        tmp = tempfile.mkdtemp()
        corpus = os.path.join(tmp, "corpus.txt")
        script.make_corpus(MB, corpus)
        results = {}
        for vocab in VOCABS:
            models = {}
            for trainer in TRAINERS:
                models[trainer] = os.path.join(tmp, f"{trainer}-{vocab}.model")
                try:
                    results[(trainer, vocab)] = script.run(trainer, corpus, models[trainer], "unigram", vocab)
                except BaseException as exc:  # a failing side must not hide the other
                    results[(trainer, vocab)] = {"error": str(exc)[-800:]}
            if all("error" not in results[(t, vocab)] for t in TRAINERS):
                shared, tokens = script.compare(corpus, models["nbtok"], models["spm"])
                results[("nbtok", vocab)].update(shared=shared, tokens=tokens)
        return results

    def setup(self, results, trainer, vocab):
        r = results.get((trainer, vocab))
        if r is None or "error" in r:
            raise NotImplementedError(f"{trainer} failed: {r and r.get('error')}")

    def track_seconds(self, results, trainer, vocab):
        return results[(trainer, vocab)]["seconds"]
    track_seconds.unit = "s"

    def track_peak_rss_mb(self, results, trainer, vocab):
        return results[(trainer, vocab)]["rss_mb"]
    track_peak_rss_mb.unit = "MB"

    def track_seconds_vs_spm(self, results, trainer, vocab):
        ref = results.get(("spm", vocab))
        if not ref or "error" in ref:
            raise NotImplementedError("sentencepiece result missing")
        return results[(trainer, vocab)]["seconds"] / ref["seconds"]
    track_seconds_vs_spm.unit = "ratio"

    def track_pieces_shared(self, results, trainer, vocab):
        if trainer != "nbtok" or "shared" not in results[(trainer, vocab)]:
            raise NotImplementedError("nbtok's model against sentencepiece's only")
        return results[(trainer, vocab)]["shared"]
    track_pieces_shared.unit = "fraction"
