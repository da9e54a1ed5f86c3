"""100,000 short documents into a padded matrix (+ offsets): nbtok vs HF tokenizers, 1 and 2 threads.

    python scripts/bench_pipeline.py

Each (library, threads) runs in its own process so RAYON_NUM_THREADS takes effect for HF.
HF's time includes turning its encodings into NumPy matrices, as a data loader must.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def worker(library, threads, offsets):
    sys.path.insert(0, str(ROOT))
    from asv_benchmarks import bench_pipeline as bp
    docs = bp.short_documents()
    run = bp.padded_encoder(library, offsets)
    if library == "nbtok":
        import numba
        numba.set_num_threads(threads)
    run(docs[:100])
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        run(docs)
        best = min(best, time.perf_counter() - t)
    return best


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        print(worker(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"))
        return
    print("# 100,000 one-line documents -> padded int32 matrix + attention mask (seconds, best of 3)")
    for offsets in (False, True):
        for threads in (1, 2):
            row = {}
            for lib in ("nbtok", "tokenizers"):
                env = dict(os.environ, RAYON_NUM_THREADS=str(threads), NUMBA_NUM_THREADS="2",
                           TOKENIZERS_PARALLELISM="true" if threads > 1 else "false")
                out = subprocess.run([sys.executable, __file__, "--worker", lib, str(threads), "1" if offsets else "0"],
                                     env=env, capture_output=True, text=True)
                row[lib] = float(out.stdout.split()[-1]) if out.returncode == 0 else None
                if out.returncode:
                    print(f"  {lib} failed: {out.stderr.strip().splitlines()[-1:]}")
            if all(row.values()):
                print(f"offsets={offsets!s:5} threads={threads}  nbtok {row['nbtok']:.3f} s  "
                      f"tokenizers {row['tokenizers']:.3f} s  ratio x{row['tokenizers'] / row['nbtok']:.1f}")


if __name__ == "__main__":
    main()
