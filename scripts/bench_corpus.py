"""Tokenize the bench corpus (corpora/bench/*.txt, one document per line) to Megatron format:
nbtok.corpus with 1 and 2 workers (process pool and Dask) beside HF tokenizers encode_batch +
numpy writing, interleaved, median of --repeat runs, each case in a fresh process. Reports MB/s,
1 -> 2 worker scaling and the peak RSS of the largest worker process (the calling process works
as one of a pool's workers).

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
    """The bench corpus cut to ``mb`` MB (its files in turn, again from the first when ``mb``
    is more than the corpus: then documents repeat, which changes no worker's memory)."""
    out = Path(tmp) / "bench.txt"
    budget = int(mb * 1e6)
    files = sorted((DATA / "corpora" / "bench").glob("*.txt"))
    with open(out, "wb") as f:
        wrote = True
        while budget > 0 and wrote:
            wrote = False
            for p in files:
                data = p.read_bytes()[:budget]
                data = data[:data.rfind(b"\n") + 1]
                f.write(data)
                budget -= len(data)
                wrote = wrote or bool(data)
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


CASES = ["nbtok pool 1 worker", "nbtok pool 2 workers", "nbtok dask 1 worker", "nbtok dask 2 workers",
         "HF encode_batch + numpy"]


def child(case, src, out):
    """One case in this (fresh) process: seconds of the run, and peak RSS of every process that
    did the work (this one, the pool's workers, the Dask workers) in MB."""
    import json
    if case.startswith("HF"):
        t = time.perf_counter()
        run_hf(src, out)
        return json.dumps({"s": time.perf_counter() - t, "rss": [_worker_rss()]})
    import nbtok
    import nbtok.corpus as C
    tok = nbtok.get_encoding()
    tok.encode_batch_ragged(["warm up the kernels"])
    kw, client, cluster = {}, None, None
    if "dask" in case:
        from dask.distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=int(case.split()[2]), threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        C.tokenize(src, tok, out + "_warm", shard_size=10000, client=client, hash_inputs=False)
        client.run(_worker_rss)          # (workers warm, as on a running cluster)
        kw["client"] = client
    elif "2 workers" in case:
        kw["num_workers"] = 2
    t = time.perf_counter()
    C.tokenize(src, tok, out, shard_size=10000, hash_inputs=False, **kw)
    s = time.perf_counter() - t
    rss = [_worker_rss()]
    if client is not None:
        rss += list(client.run(_worker_rss).values())
        client.close()
        cluster.close()
    else:
        rss += [resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024] if kw else []
    return json.dumps({"s": s, "rss": rss})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=56)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-hf", action="store_true", help="leave out HF tokenizers (for a memory run)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(child(*args.child))
        return 0
    import json
    import subprocess
    tmp = tempfile.mkdtemp(prefix="nbtok_bench_corpus_")
    src = make_input(tmp, args.mb)
    nbytes = src.stat().st_size
    cases = [k for k in CASES if not (args.skip_hf and k.startswith("HF"))]
    times, rss = {k: [] for k in cases}, {k: [] for k in cases}
    for r in range(args.repeat):
        for k in cases:
            out = os.path.join(tmp, f"o{r}_{k.replace(' ', '_')}")
            got = subprocess.run([sys.executable, __file__, "--child", k, str(src), out], check=True,
                                 capture_output=True, text=True).stdout
            res = json.loads(got.strip().splitlines()[-1])
            times[k].append(res["s"])
            rss[k].append(max(res["rss"]))
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out + "_warm", ignore_errors=True)
    print(f"input {nbytes / 1e6:.1f} MB, {os.cpu_count()} cores, median of {args.repeat} interleaved runs, "
          "each in a fresh process (tokenizer loaded and kernels warm before the clock starts; Dask "
          "workers started and warm)")
    print(f"{'case':28s} {'seconds':>8s} {'MB/s':>7s} {'peak RSS of a worker (MB)':>26s}")
    for k in cases:
        m = statistics.median(times[k])
        print(f"{k:28s} {m:8.2f} {nbytes / 1e6 / m:7.1f} {max(rss[k]):26.0f}")
    for kind in ("pool", "dask"):
        one = statistics.median(times[f"nbtok {kind} 1 worker"])
        two = statistics.median(times[f"nbtok {kind} 2 workers"])
        print(f"scaling 1 -> 2 workers, {kind}: {one / two:.2f}x")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
