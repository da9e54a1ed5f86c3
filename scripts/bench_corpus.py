"""Tokenize the bench corpus (corpora/bench/*.txt, one document per line) to Megatron format:
nbtok.corpus with 1 and 2 workers (process pool and Dask) beside HF tokenizers encode_batch +
numpy writing, interleaved, median of --repeat runs. Reports MB/s, 1 -> 2 worker scaling and
peak RSS per worker process.

    PYTHONPATH=. python scripts/bench_corpus.py [--mb 56] [--repeat 3]
"""
import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(os.environ.get("NBTOK_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
if not (DATA / "corpora" / "bench").is_dir():
    DATA = Path("/work/shared/data")


def make_input(tmp, mb):
    out = Path(tmp) / "bench.txt"
    budget = int(mb * 1e6)
    with open(out, "wb") as f:
        for p in sorted((DATA / "corpora" / "bench").glob("*.txt")):
            data = p.read_bytes()[:budget]
            data = data[:data.rfind(b"\n") + 1]
            f.write(data)
            budget -= len(data)
            if budget <= 0:
                break
    return out


def _worker_rss(_=None):
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_hf(path, out):
    """HF tokenizers encode_batch (its own Rust threads) + numpy .bin/.idx writing."""
    from tokenizers import Tokenizer as HF
    from nbtok.corpus.writers import write_shard
    m = DATA / "models" / "gpt2"
    hf = HF.from_file(str(m / "tokenizer.json")) if (m / "tokenizer.json").exists() else None
    if hf is None:
        from tokenizers import models, pre_tokenizers, decoders
        hf = HF(models.BPE.from_file(str(m / "vocab.json"), str(m / "merges.txt")))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
    os.makedirs(out, exist_ok=True)
    lines = Path(path).read_text(encoding="utf-8").split("\n")[:-1]
    for i in range(0, len(lines), 10000):
        enc = hf.encode_batch(lines[i:i + 10000], add_special_tokens=False)
        lens = np.array([len(e.ids) for e in enc], np.int64)
        ids = np.fromiter((t for e in enc for t in e.ids), np.int64, int(lens.sum()))
        off = np.concatenate([[0], np.cumsum(lens)])
        write_shard("megatron", os.path.join(out, f"shard_{i // 10000:05d}"), ids, off, 50257)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=56)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import nbtok
    import nbtok.corpus as C
    from dask.distributed import Client, LocalCluster
    tok = nbtok.get_encoding()
    tmp = tempfile.mkdtemp(prefix="nbtok_bench_corpus_")
    src = make_input(tmp, args.mb)
    nbytes = src.stat().st_size
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    C.tokenize(str(src), tok, os.path.join(tmp, "warm"), shard_size=10000, client=client, hash_inputs=False)
    C.tokenize(str(src), tok, os.path.join(tmp, "warm1"), shard_size=10000, hash_inputs=False)
    runs = {
        "nbtok pool 1 worker": lambda o: C.tokenize(str(src), tok, o, shard_size=10000, hash_inputs=False),
        "nbtok pool 2 workers": lambda o: C.tokenize(str(src), tok, o, shard_size=10000, num_workers=2, hash_inputs=False),
        "nbtok dask 2 workers": lambda o: C.tokenize(str(src), tok, o, shard_size=10000, client=client, hash_inputs=False),
        "HF encode_batch + numpy": lambda o: run_hf(src, o),
    }
    times = {k: [] for k in runs}
    for r in range(args.repeat):
        for k, fn in runs.items():
            out = os.path.join(tmp, f"o{r}_{len(times[k])}_{k.replace(' ', '_')}")
            t = time.perf_counter()
            fn(out)
            times[k].append(time.perf_counter() - t)
            shutil.rmtree(out)
    rss = client.run(_worker_rss)
    print(f"input {nbytes / 1e6:.1f} MB, {os.cpu_count()} cores (shared machine: timings are noisy), "
          f"median of {args.repeat} interleaved runs")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"{k:28s} {m:7.2f} s  {nbytes / 1e6 / m:7.1f} MB/s")
    one = statistics.median(times["nbtok pool 1 worker"])
    print(f"scaling 1 -> 2 workers: pool {one / statistics.median(times['nbtok pool 2 workers']):.2f}x, "
          f"dask {one / statistics.median(times['nbtok dask 2 workers']):.2f}x")
    print("peak RSS per Dask worker (MB): " + ", ".join(f"{v:.0f}" for v in rss.values()))
    print(f"peak RSS of this process (MB): {_worker_rss(0):.0f}")
    client.close()
    cluster.close()
    shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
