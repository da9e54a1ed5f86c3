"""nbtok.corpus.tokenize to Megatron format on (a slice of) the bench corpus: 1 and 2 workers,
process pool and Dask, beside HF tokenizers encode_batch + numpy writing (scripts/bench_corpus.py
prints MB/s, scaling and peak RSS per worker)."""
import os
import shutil
import tempfile

from ._common import nbtok_or_skip, peer_or_skip

MB = 8


class CorpusMegatron:
    timeout = 600
    params = ["pool1", "pool2", "dask2", "hf"]
    param_names = ["runner"]

    def setup(self, runner):
        import sys
        from pathlib import Path
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
        import bench_corpus as B
        self.B = B
        self.nbtok = nbtok_or_skip()
        self.C = nbtok_or_skip("nbtok.corpus")
        self.tmp = tempfile.mkdtemp()
        if not (B.DATA / "corpora" / "bench").is_dir():
            raise NotImplementedError("bench corpus missing")
        self.src = str(B.make_input(self.tmp, MB))
        self.tok = self.nbtok.get_encoding()
        self.client = self.cluster = None
        if runner == "dask2":
            d = peer_or_skip("dask.distributed")
            self.cluster = d.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            self.client = d.Client(self.cluster)
        if runner == "hf":
            peer_or_skip("tokenizers")
        self.n = 0

    def teardown(self, runner):
        if self.client is not None:
            self.client.close()
            self.cluster.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def time_tokenize(self, runner):
        self.n += 1
        out = os.path.join(self.tmp, f"out{self.n}")
        if runner == "hf":
            self.B.run_hf(self.src, out)
        else:
            kw = {"pool1": {}, "pool2": {"num_workers": 2}, "dask2": {"client": self.client}}[runner]
            self.C.tokenize(self.src, self.tok, out, shard_size=10000, hash_inputs=False, **kw)
        shutil.rmtree(out)
