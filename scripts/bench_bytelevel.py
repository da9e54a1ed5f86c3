"""Byte-level BPE encode throughput, nbtok side by side with its peers, in one run.

    python scripts/bench_bytelevel.py [--mb 8] [--threads 1 2]

Prints MB/s per library and corpus and nbtok's ratio to each peer, for GPT-2 ranks (tiktoken,
HF tokenizers, tokie) and cl100k ranks (tiktoken, bpe-openai, tokie from a converted
tokenizer.json, ``_common.tokenizers_cl100k_json``), on three corpora (English lines, the
long-document multilingual mix, and ``_common.short_lines``: short multilingual lines), then
the worst-case inputs of issue 2 and the cold start. ``--ranks``, ``--corpora`` and
``--libs`` pick a subset; ``--no-extras`` skips the worst cases and the cold start. Every measurement runs in its own subprocess with the thread
count fixed before the library loads (RAYON_NUM_THREADS for the Rust peers; for 1 thread the
subprocess is also pinned to one CPU, as tokie sizes its pool by the CPUs it may use), and
takes the best of three passes over the corpus. Corpora come from $NBTOK_SHARED_DATA or
../shared/data.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "asv_benchmarks"))
sys.path.insert(0, str(ROOT))

MULTI = ["bench/ru_literature.txt", "bench/ja_aozora.txt", "bench/zh_classical_poetry.txt",
         "bench/multi_bible_nt.txt"] + [f"xquad/xquad.{l}.contexts.txt" for l in
                                        ("ar", "de", "el", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")]
CORPORA = {"english": ["bench/en_gutenberg.txt"], "multilingual": MULTI,
           "short_lines": None}  # asv_benchmarks/_common.short_lines: ~82-byte lines, 41% ASCII
LIBS = {"gpt2": ["nbtok", "tiktoken", "tokenizers", "tokie"], "cl100k": ["nbtok", "tiktoken", "bpe-openai", "tokie"]}


def data_dir():
    env = os.environ.get("NBTOK_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def corpus_docs(name, mb):
    """The corpus as lines (documents), at most ``mb`` MB, spread evenly over its files."""
    files = CORPORA[name]
    if files is None:
        import _common  # asv_benchmarks/_common.py
        return _common.short_lines(int(mb * 1e6))
    per_file = int(mb * 1e6 / len(files))
    docs = []
    for f in files:
        data = (data_dir() / "corpora" / f).read_bytes()[:per_file].decode("utf-8", "ignore")
        docs.extend(data.split("\n"))
    return docs


def encoder(lib, ranks, threads):
    """A callable(list[str]) for one library (thread count already fixed by the environment)."""
    models = data_dir() / "models"
    if lib == "nbtok":
        import nbtok
        tok = (nbtok.get_encoding("gpt2") if ranks == "gpt2" else nbtok.Tokenizer.from_tiktoken(
            models / "tiktoken" / "cl100k_base.tiktoken", pattern="cl100k"))
        return lambda docs: tok.encode_batch_ragged(docs, disallowed_special=(), num_threads=threads)
    if lib == "tiktoken":
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        from tiktoken_ext import openai_public as pub
        if ranks == "gpt2":
            enc = tiktoken.Encoding("gpt2", pat_str=pub.r50k_pat_str,
                                    mergeable_ranks=load_tiktoken_bpe(str(models / "gpt2" / "gpt2.tiktoken")),
                                    special_tokens={})
        else:
            saved = pub.load_tiktoken_bpe
            pub.load_tiktoken_bpe = lambda *a, **k: load_tiktoken_bpe(str(models / "tiktoken" / "cl100k_base.tiktoken"))
            enc = tiktoken.Encoding(**pub.cl100k_base())
            pub.load_tiktoken_bpe = saved
        return lambda docs: enc.encode_ordinary_batch(docs, num_threads=threads)
    if lib == "tokenizers":
        from tokenizers import Tokenizer, models as m, pre_tokenizers
        tok = Tokenizer(m.BPE.from_file(str(models / "gpt2" / "vocab.json"), str(models / "gpt2" / "merges.txt")))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        return lambda docs: tok.encode_batch_fast(docs, add_special_tokens=False)
    if lib == "tokie":
        import tempfile
        import tokie
        if ranks == "gpt2":
            from tokenizers import Tokenizer, models as m, pre_tokenizers
            tok = Tokenizer(m.BPE.from_file(str(models / "gpt2" / "vocab.json"), str(models / "gpt2" / "merges.txt")))
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            path = Path(tempfile.mkdtemp()) / "tokenizer.json"
            tok.save(str(path))
        else:  # cl100k: a tokenizer.json converted from the ranks (ids identical to tiktoken's)
            import _common  # asv_benchmarks/_common.py
            path = _common.tokenizers_cl100k_json()
        tt = tokie.Tokenizer.from_json(str(path))
        return lambda docs: tt.encode_batch_flat(docs)
    if lib == "bpe-openai":
        import bpe_openai
        enc = bpe_openai.get_encoding("cl100k_base")
        return lambda docs: enc.encode_ordinary_batch(docs)
    raise ValueError(lib)


def worker(lib, ranks, corpus, threads, mb):
    if threads == 1:
        import _common  # asv_benchmarks/_common.py
        _common.pin_to_one_cpu()
    docs = corpus_docs(corpus, mb)
    nbytes = sum(len(d.encode()) for d in docs)
    fn = encoder(lib, ranks, threads)
    fn(docs[:200])
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        fn(docs)
        best = min(best, time.perf_counter() - t)
    return nbytes / 1e6 / best


def measure(lib, ranks, corpus, threads, mb):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), RAYON_RS_NUM_CPUS=str(threads),
               NUMBA_NUM_THREADS=str(max(threads, 1)), TOKENIZERS_PARALLELISM="true" if threads > 1 else "false")
    cmd = [sys.executable, __file__, "--worker", lib, ranks, corpus, str(threads), str(mb)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed"
    return float(out.stdout.strip().splitlines()[-1]), None


WORST = ["letter", "base64", "chinese", "spaces"]


def worst_input(kind, size):
    import base64
    import random
    rnd = random.Random(0)
    if kind == "letter":
        return "a" * size
    if kind == "base64":
        return base64.b64encode(rnd.randbytes(size * 3 // 4)).decode()[:size]
    if kind == "chinese":
        return "".join(chr(rnd.randint(0x4E00, 0x9FA5)) for _ in range(size // 3))
    return " " * (size - 1) + "a"


def worst_case():
    import nbtok
    tok = nbtok.get_encoding("gpt2")
    rows = []
    for kind in WORST:
        times = {}
        for size in (100_000, 1_000_000):
            text = worst_input(kind, size)
            tok.encode_ordinary(text[:1000])
            best = float("inf")
            for _ in range(3):
                t = time.perf_counter()
                tok.encode_ordinary(text)
                best = min(best, time.perf_counter() - t)
            times[size] = best
        rows.append((kind, times[100_000], times[1_000_000], times[1_000_000] / times[100_000]))
    return rows


def cold_start():
    code = "import time; t=time.perf_counter(); import nbtok; tok=nbtok.get_encoding('gpt2'); tok.encode('Hello world'); print(time.perf_counter()-t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=8.0, help="MB of text per corpus (default 8)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--ranks", nargs="+", default=list(LIBS), help="gpt2 and/or cl100k")
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA))
    parser.add_argument("--libs", nargs="+", default=None, help="only these libraries (default all)")
    parser.add_argument("--no-extras", action="store_true", help="skip the worst cases and the cold start")
    parser.add_argument("--worker", nargs=5)
    args = parser.parse_args()
    if args.worker:
        lib, ranks, corpus, threads, mb = args.worker
        print(worker(lib, ranks, corpus, int(threads), float(mb)))
        return
    print(f"# byte-level BPE encode, MB/s (best of 3), {args.mb:g} MB per corpus, {os.cpu_count()} cores")
    for ranks in args.ranks:
        libs = [lib for lib in LIBS[ranks] if args.libs is None or lib in args.libs]
        for corpus in args.corpora:
            for threads in args.threads:
                results = {}
                for lib in libs:
                    results[lib], err = measure(lib, ranks, corpus, threads, args.mb)
                    if err:
                        print(f"  ({lib}: skipped: {err})")
                base = results.get("nbtok")
                cells = "  ".join(f"{lib} {v:6.1f}" for lib, v in results.items() if v)
                ratios = "  ".join(f"x{base / v:.1f} vs {lib}" for lib, v in results.items()
                                   if v and lib != "nbtok" and base)
                print(f"{ranks:7s} {corpus:12s} {threads} thr | {cells} | {ratios}")
    if args.no_extras:
        return
    print("\n# worst case (GPT-2 ranks, one thread): seconds for 100 KB and 1 MB, and their ratio")
    for kind, t1, t2, r in worst_case():
        print(f"{kind:8s} 100KB {t1 * 1e3:7.1f} ms   1MB {t2 * 1e3:7.1f} ms   ratio {r:5.1f}")
    print(f"\n# cold start (import + load gpt2 + first encode, JIT cache warm): {cold_start():.2f} s")


if __name__ == "__main__":
    main()
