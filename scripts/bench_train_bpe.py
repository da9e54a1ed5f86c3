#!/usr/bin/env python
"""BPE training, side by side: nbtok vs HF tokenizers' BpeTrainer vs rustbpe.

    python scripts/bench_train_bpe.py                       # bench corpus, vocab 32k 64k 128k, 2 threads
    python scripts/bench_train_bpe.py --vocab 32000 --threads 2 --corpus bench
    python scripts/bench_train_bpe.py --cs336               # the CS336 small case only

Time is wall time of the training call; CPU is the process's user+system time over the same
call (all threads), a useful cross-check on a busy machine. Every trainer runs in its own subprocess, so its peak RSS (``ru_maxrss``, which includes the
interpreter and the library's import) is its own. Threads: ``NUMBA_NUM_THREADS`` for nbtok,
``RAYON_NUM_THREADS`` for HF and rustbpe.

Same input for everyone: the files of ``corpora/<corpus>/`` (``$NBTOK_SHARED_DATA``, else
``../shared/data``), special token ``<|endoftext|>``, the GPT-2 pre-tokenizer regex, vocab size
counting the 256 bytes and the special token. nbtok streams the files itself. HF and rustbpe
get an iterator of ~1 MB pieces of each file cut at "safe" newlines (non-space on both sides;
see ``nbtok.train.counting_kernels``) and split on the special token, so that every trainer sees
exactly the pre-tokens of the whole files. HF: ``ByteLevel(add_prefix_space=False, use_regex=True)`` pre-tokenizer and
``initial_alphabet=ByteLevel.alphabet()``; nbtok runs with ``tie_break="hf"``, so its merges must
equal HF's (the "= HF" column). rustbpe breaks ties by byte value and cannot be compared merge
for merge.

nbtok's time is measured with a warm JIT cache: the child first trains on a tiny input (that
loads the compiled kernels; shown as "jit load"), then the timed run.

Measured 2026-11-29 on the shared 2-core box (load average 5-10 from other jobs, so wall times
are noisy; CPU is the steadier column). 32k from a separate run of the 32k group:

| vocab | trainer | time (s) | CPU (s) | peak RSS (MB) | time / HF | merges = HF |
| ---: | --- | ---: | ---: | ---: | ---: | --- |
| 32,000 | nbtok | 35.3 | 17.2 | 650 | 0.12 | yes |
| 32,000 | hf | 287.8 | 146.8 | 1693 | 1.00 | - |
| 32,000 | rustbpe | 86.7 | 44.4 | 806 | 0.30 | - |
| 64,000 | nbtok | 32.7 | 22.1 | 742 | 0.14 | yes |
| 64,000 | hf | 238.0 | 145.4 | 1791 | 1.00 | - |
| 64,000 | rustbpe | 86.0 | 42.4 | 869 | 0.36 | - |
| 128,000 | nbtok | 51.9 | 27.3 | 778 | 0.14 | yes |
| 128,000 | hf | 367.3 | 162.7 | 1807 | 1.00 | - |
| 128,000 | rustbpe | 83.1 | 37.3 | 886 | 0.23 | - |
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
SPECIAL = "<|endoftext|>"


def data_dir():
    env = os.environ.get("NBTOK_SHARED_DATA")
    path = Path(env) if env else REPO.parent / "shared" / "data"
    if not path.is_dir():
        raise SystemExit(f"shared data folder not found ({path}); set NBTOK_SHARED_DATA")
    return path


def corpus_files(corpus):
    root = data_dir() / "corpora" / corpus
    files = sorted(p for p in root.glob("*") if p.is_file() and p.suffix in (".txt", ".en"))
    if not files:
        raise SystemExit(f"no corpus files under {root}")
    return files


# ------------------------------------------------------------------ child processes
_CHUNKER = r'''
def safe_chunks(paths, size=1 << 20):
    """Whole files as ~1 MB str pieces cut after a newline with non-space on both sides
    (and not before '/'): every GPT-2/cl100k/o200k split is the same as the whole file's.
    Pieces are also split on the special token (HF's trainer would count its characters)."""
    for chunk in _safe_chunks(paths, size):
        yield from (part for part in chunk.split(SPECIAL) if part)


def _safe_chunks(paths, size):
    for p in paths:
        with open(p, encoding="utf-8", newline="") as f:
            text = f.read()
        start = 0
        while len(text) - start > size:
            i = text.find("\n", start + size)
            while i != -1 and not (0 < i < len(text) - 1 and not text[i - 1].isspace()
                                   and not text[i + 1].isspace() and text[i + 1] != "/"):
                i = text.find("\n", i + 1)
            if i == -1:
                break
            yield text[start:i + 1]
            start = i + 1
        yield text[start:]
'''

_CHILD = {
    "nbtok": r'''
import nbtok
t = time.perf_counter()
nbtok.train_bpe(iter(["warm up the jit cache " * 20]), 300, special_tokens=[SPECIAL], tie_break=TIE, progress=False)
jit = time.perf_counter() - t
t = time.perf_counter()
c0 = time.process_time()
tok = nbtok.train_bpe(FILES, VOCAB, special_tokens=[SPECIAL], tie_break=TIE, progress=False)
secs = time.perf_counter() - t
cpu = time.process_time() - c0
merges = tok.merges
''',
    "hf": r'''
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
jit = 0.0
t = time.perf_counter()
c0 = time.process_time()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
tr = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=[SPECIAL], show_progress=False,
                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
tok.train_from_iterator(safe_chunks(FILES), tr)
secs = time.perf_counter() - t
cpu = time.process_time() - c0
model = json.loads(tok.to_str())["model"]
merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
''',
    "rustbpe": r'''
import rustbpe
jit = 0.0
t = time.perf_counter()
c0 = time.process_time()
tok = rustbpe.Tokenizer()
tok.train_from_iterator(safe_chunks(FILES), VOCAB - 1, pattern=PATTERN)
secs = time.perf_counter() - t
cpu = time.process_time() - c0
merges = None
''',
}

_TAIL = r'''
import resource
out = {"seconds": secs, "cpu_seconds": cpu, "jit_seconds": jit, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
if merges is not None:
    out["n_merges"] = len(merges)
    if isinstance(merges[0], tuple) and isinstance(merges[0][0], bytes):
        table = {}
        keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
        extra = 0
        for b in range(256):
            if b in keep:
                table[b] = chr(b)
            else:
                table[b] = chr(256 + extra)
                extra += 1
        merges = [["".join(table[x] for x in a), "".join(table[x] for x in b)] for a, b in merges]
    import hashlib
    out["merges_sha1"] = hashlib.sha1(json.dumps(merges, ensure_ascii=False).encode()).hexdigest()
print("RESULT " + json.dumps(out))
'''


def run_child(trainer, files, vocab, threads, tie="hf", timeout=3600):
    """Train in a fresh interpreter; returns a dict (seconds, jit_seconds, peak_rss_mb, ...)."""
    code = "\n".join([
        "import json, time",
        f"FILES = {[str(f) for f in files]!r}",
        f"VOCAB = {int(vocab)}",
        f"SPECIAL = {SPECIAL!r}",
        f"PATTERN = {GPT2_PATTERN!r}",
        f"TIE = {tie!r}",
        _CHUNKER, _CHILD[trainer], _TAIL])
    env = dict(os.environ)
    env["NUMBA_NUM_THREADS"] = str(threads)
    env["RAYON_NUM_THREADS"] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "true"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
            res["process_seconds"] = wall
            return res
    raise RuntimeError(f"{trainer} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def available(trainer):
    mod = {"nbtok": "numba", "hf": "tokenizers", "rustbpe": "rustbpe"}[trainer]
    try:
        __import__(mod)
        return True
    except ImportError:
        return False


# ------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="bench", help="folder under corpora/ (default: bench, 56 MB, 5 languages)")
    ap.add_argument("--vocab", type=int, nargs="+", default=[32000, 64000, 128000])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--trainers", nargs="+", default=["nbtok", "hf", "rustbpe"])
    ap.add_argument("--cs336", action="store_true", help="only the CS336 small case (corpus.en, vocab 500)")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)

    if args.cs336:
        return cs336_case()

    files = corpus_files(args.corpus)
    size = sum(f.stat().st_size for f in files)
    print(f"corpus {args.corpus}: {len(files)} files, {size / 1e6:.1f} MB; threads {args.threads}; "
          f"special {SPECIAL}; GPT-2 pattern", flush=True)
    rows = []
    for vocab in args.vocab:
        res = {}
        for trainer in args.trainers:
            if not available(trainer):
                print(f"  {trainer}: not installed, skipped")
                continue
            res[trainer] = r = run_child(trainer, files, vocab, args.threads)
            print(f"  vocab {vocab:>7,} {trainer:<8} {r['seconds']:8.1f} s  CPU {r['cpu_seconds']:8.1f} s  "
                  f"peak RSS {r['peak_rss_mb']:8.0f} MB", flush=True)
        rows.append((vocab, res))
    print()
    print(table(rows, size))
    if args.json:
        Path(args.json).write_text(json.dumps([{"vocab": v, **{k: r for k, r in res.items()}} for v, res in rows], indent=1))


def table(rows, size):
    head = ("| vocab | trainer | time (s) | CPU (s) | MB/s | peak RSS (MB) | time / HF | RSS / HF | merges = HF |\n"
            "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    lines = [head]
    for vocab, res in rows:
        hf = res.get("hf")
        for trainer, r in res.items():
            t_ratio = f"{r['seconds'] / hf['seconds']:.2f}" if hf else "-"
            m_ratio = f"{r['peak_rss_mb'] / hf['peak_rss_mb']:.2f}" if hf else "-"
            if trainer == "hf" or not hf or "merges_sha1" not in r:
                same = "-"
            else:
                same = "yes" if r["merges_sha1"] == hf["merges_sha1"] else "NO"
            name = trainer + (f" (jit load {r['jit_seconds']:.1f} s)" if trainer == "nbtok" else "")
            lines.append(f"| {vocab:,} | {name} | {r['seconds']:.1f} | {r.get('cpu_seconds', float('nan')):.1f} | "
                         f"{size / 1e6 / r['seconds']:.1f} | "
                         f"{r['peak_rss_mb']:.0f} | {t_ratio} | {m_ratio} | {same} |")
    return "\n".join(lines)


def cs336_case(repeat=5):
    """corpus.en, vocab 500, <|endoftext|>: best of ``repeat`` runs in one warm process."""
    sys.path.insert(0, str(REPO))
    import nbtok
    path = REPO / "tests" / "data" / "train" / "corpus.en"
    t = time.perf_counter()
    nbtok.train_bpe(path, 500, special_tokens=[SPECIAL], progress=False)
    first = time.perf_counter() - t
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        nbtok.train_bpe(path, 500, special_tokens=[SPECIAL], progress=False)
        best = min(best, time.perf_counter() - t)
    print(f"CS336 small case (corpus.en, vocab 500): first call {first:.3f} s (loads the JIT cache), "
          f"then best of {repeat}: {best:.3f} s")
    return best


if __name__ == "__main__":
    main()
