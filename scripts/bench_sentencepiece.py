"""Side-by-side encode throughput: nbtok vs sentencepiece on every ``.model`` of the shared data
(``models/`` and ``zoo/``; files sentencepiece cannot load, such as tiktoken rank files named
``.model``, are listed and skipped) and two texts, one and two threads, with the number of
documents whose ids differ from sentencepiece's in every cell (issue 26):

* ``long``: long documents (~64 KB each), made of the bench corpora (English, Russian,
  Japanese, Chinese, the multilingual Bible) and the xquad paragraphs in equal parts;
* ``short``: short multilingual lines, ~85 UTF-8 bytes on average: xquad paragraphs, UDHR
  lines and bench lines, cut at a space (or, in text without spaces, a character) after a
  seeded random length of 60 to 240 bytes (UDHR lines are often shorter).

    python scripts/bench_sentencepiece.py --zoo [--quick] [--models llama2,gemma] [--mb 1]

``--quick``: 1 MB per text, 3 interleaved rounds, one thread, no peers (the whole list in a few
minutes); ``--models``: only the models whose path contains one of the comma-separated words.
Without ``--zoo``: the older run over two models trained here on the bench corpora (a
Llama-style BPE and a 32k Unigram, cached in ``$NBTOK_BENCH_CACHE``, default
``~/.cache/nbtok-bench``) with kitoken, tokie and HF ``tokenizers`` beside, the worst case and
the 250k-piece load.

Corpora and models are read from ``$NBTOK_SHARED_DATA`` (fallback ../shared/data). Each cell is
the best of ``--repeat`` runs; the libraries run interleaved so that machine load affects them
alike, and "paired" is the median, over the rounds, of the ratio within a round (this machine's
speed drifts by a third within a minute, so the two bests may come from different moments).
``--zoo`` also gives the ratio of the best process CPU times (the time a busy machine holds the
core away from the process is left out; with one thread, that is the work).
"""
import argparse
import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def shared_data():
    env = os.environ.get("NBTOK_SHARED_DATA")
    path = Path(env) if env else ROOT.parent / "shared" / "data"
    if not path.is_dir():
        sys.exit(f"shared data not found at {path} (set NBTOK_SHARED_DATA)")
    return path


def read_lines(path, mb):
    data = path.read_bytes()[: int(mb * 1e6)].decode("utf-8", "ignore")
    return [x for x in data.splitlines() if x.strip()]


def corpora(root, mb):
    bench = root / "corpora" / "bench"
    english = read_lines(bench / "en_gutenberg.txt", mb)
    multi = []
    for name in ("ru_literature.txt", "ja_aozora.txt", "zh_classical_poetry.txt", "multi_bible_nt.txt"):
        multi += read_lines(bench / name, mb / 4)
    multi += [x for p in sorted((root / "corpora" / "xquad").glob("*.txt")) for x in read_lines(p, mb / 12)]
    return {"english": english, "multilingual": multi}


def _cut_short(line, rng, out):
    """``line`` in pieces of 60 to 240 UTF-8 bytes (seeded), cut at a space if there is one in
    the last half of the piece, else at a character; appended to ``out``."""
    b = line.strip().encode()
    while b:
        n = int(rng.integers(60, 241))
        if len(b) <= n:
            out.append(b.decode())
            break
        cut = b.rfind(b" ", n // 2, n)
        if cut <= 0:
            cut = n
            while cut > 0 and (b[cut] & 0xC0) == 0x80:
                cut -= 1
        out.append(b[:cut].decode())
        b = b[cut:].lstrip(b" ")


def zoo_texts(root, mb):
    """{"long": ~64 KB documents, "short": ~85-byte lines}, about ``mb`` MB each (module doc)."""
    bench = root / "corpora" / "bench"
    names = ["en_gutenberg.txt", "ru_literature.txt", "ja_aozora.txt", "zh_classical_poetry.txt",
             "multi_bible_nt.txt"]
    xquad = sorted((root / "corpora" / "xquad").glob("*.txt"))
    udhr = sorted((root / "corpora" / "udhr").glob("udhr_*.txt"))
    parts = len(names) + 1
    long_docs = []
    for name in names:
        text = (bench / name).read_bytes()[: int(mb * 1e6 / parts)].decode("utf-8", "ignore")
        long_docs += _chunks(text.splitlines(keepends=True), 64_000)
    xq = [x for p in xquad for x in read_lines(p, mb / parts / len(xquad))]
    long_docs += _chunks([x + "\n" for x in xq], 64_000)
    rng = np.random.default_rng(26)
    short, budget = [], int(mb * 1e6)
    sources = [[x for p in xquad for x in read_lines(p, 0.2)],
               [x for p in udhr for x in p.read_text("utf-8").splitlines()[6:] if x.strip()],
               [x for name in names for x in read_lines(bench / name, 0.3)]]
    for lines in sources:
        got, size = [], 0
        for line in lines:
            n = len(got)
            _cut_short(line, rng, got)
            size += sum(len(x.encode()) for x in got[n:])
            if size >= budget / len(sources):
                break
        short += got
    order = rng.permutation(len(short))
    short = [short[i] for i in order]
    return {"long": long_docs, "short": short}


def _chunks(lines, size):
    out, cur, n = [], [], 0
    for x in lines:
        cur.append(x)
        n += len(x.encode())
        if n >= size:
            out.append("".join(cur))
            cur, n = [], 0
    if cur:
        out.append("".join(cur))
    return out


def zoo_models(root, words=()):
    """(loadable ``.model`` paths, [(path, reason)] of those sentencepiece cannot load) under
    ``models/`` and ``zoo/``, keeping the paths that contain one of ``words`` (all if empty)."""
    import sentencepiece as spm
    paths = sorted(root.glob("models/**/*.model")) + sorted(root.glob("zoo/**/*.model"))
    if words:
        paths = [p for p in paths if any(w in str(p.relative_to(root)) for w in words)]
    ok, skipped = [], []
    for p in paths:
        try:
            spm.SentencePieceProcessor(model_file=str(p))
            ok.append(p)
        except Exception as e:  # noqa: BLE001
            skipped.append((p, f"{type(e).__name__}: {str(e).splitlines()[0][:60]}"))
    return ok, skipped


def model_kind(path):
    from sentencepiece import sentencepiece_model_pb2 as pb
    m = pb.ModelProto()
    m.ParseFromString(path.read_bytes())
    t, n = m.trainer_spec, m.normalizer_spec
    kind = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}[t.model_type]
    opts = [n.name or "custom"]
    opts += [name for name, on in (("byte_fallback", t.byte_fallback), ("split_digits", t.split_digits),
                                   ("ws_suffix", t.treat_whitespace_as_suffix),
                                   ("no_dummy_prefix", not n.add_dummy_prefix),
                                   ("keep_ws", not n.remove_extra_whitespaces)) if on]
    ud = sum(1 for x in m.pieces if x.type == 4)
    if ud:
        opts.append(f"{ud} user-defined")
    return kind, len(m.pieces), opts


def bench_zoo_model(path, root, texts, threads, repeat):
    """One row per text and thread count: nbtok and sentencepiece interleaved, ids compared."""
    import numba
    import sentencepiece as spm
    import nbtok
    tok = nbtok.Tokenizer.from_sentencepiece(str(path))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    kind, V, opts = model_kind(path)
    name = str(path.relative_to(root)).replace("models/sentencepiece/", "").replace("zoo/", "")
    target = 3.0 if kind == "bpe" else 2.5
    rows = []
    for cname, lines in texts.items():
        mb = sum(len(x.encode()) for x in lines) / 1e6
        expected = sp.encode(lines)
        got = tok.encode_batch_ragged(lines)
        ids, offs = got
        mismatch = sum(ids[offs[i]:offs[i + 1]].tolist() != e for i, e in enumerate(expected))
        for nt in threads:
            numba.set_num_threads(min(nt, numba.config.NUMBA_NUM_THREADS))
            tok.encode_batch_ragged(lines[:100])
            nb_runs, sp_runs, nb_cpu, sp_cpu = [], [], [], []
            for _ in range(repeat):  # interleaved
                for f, runs, cpus in ((lambda: tok.encode_batch_ragged(lines), nb_runs, nb_cpu),
                                      (lambda: sp.encode(lines, num_threads=nt), sp_runs, sp_cpu)):
                    c = time.process_time()
                    runs.append(best_of(f, 1))
                    cpus.append(time.process_time() - c)
            t_nb, t_sp = min(nb_runs), min(sp_runs)
            row = dict(model=name, kind=kind, V=V, opts=" ".join(opts), text=cname, threads=nt, mb=mb,
                       docs=len(lines), nbtok=mb / t_nb, sp=mb / t_sp, ratio=t_sp / t_nb, target=target,
                       paired=statistics.median(s / n for n, s in zip(nb_runs, sp_runs)), mismatch=mismatch,
                       cpu=min(sp_cpu) / min(nb_cpu))
            rows.append(row)
            flag = "" if row["ratio"] >= target else "  < target"
            print(f"{name:45s} {kind:7s} {cname:5s} t={nt}  {mb:4.1f} MB {len(lines):6d} docs  nbtok "
                  f"{row['nbtok']:6.2f}  sp {row['sp']:6.2f} MB/s  ratio {row['ratio']:5.2f}x "
                  f"(paired {row['paired']:4.2f}x, CPU time {row['cpu']:4.2f}x)  mismatch {mismatch}{flag}", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


def markdown(rows):
    out = ["| model | type, options | text | threads | nbtok MB/s | sentencepiece MB/s | ratio | paired | CPU time ratio "
           "| target | ids differ |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['model']} | {r['kind']} {r['V']}, {r['opts']} | {r['text']} | {r['threads']} | "
                   f"{r['nbtok']:.2f} | {r['sp']:.2f} | {r['ratio']:.2f}x | {r['paired']:.2f}x | {r['cpu']:.2f}x | "
                   f"{r['target']:.1f}x | {r['mismatch']}/{r['docs']} |")
    return "\n".join(out)


def train_models(root, cache):
    import sentencepiece as spm
    cache.mkdir(parents=True, exist_ok=True)
    specs = {
        "llama_bpe_32k": dict(model_type="bpe", vocab_size=32000, byte_fallback=True, split_digits=True,
                              normalization_rule_name="identity", remove_extra_whitespaces=False,
                              allow_whitespace_only_pieces=True, character_coverage=0.9995),
        "unigram_32k": dict(model_type="unigram", vocab_size=32000, character_coverage=0.9995),
    }
    text = corpora(root, 3)
    lines = text["english"][:60000] + text["multilingual"][:60000]
    out = {}
    for name, kw in specs.items():
        path = cache / f"{name}.model"
        if not path.exists():
            t = time.time()
            buf = io.BytesIO()
            spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, minloglevel=2,
                                           num_threads=2, input_sentence_size=120000, **kw)
            path.write_bytes(buf.getvalue())
            print(f"trained {name} in {time.time() - t:.0f}s -> {path}")
        out[name] = path
    return out


def best_of(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_wall_and_cpu(fn, repeat):
    """(best wall seconds, best CPU seconds of the calling thread) over ``repeat`` calls of
    ``fn``. The thread's CPU time counts its page faults and cache misses but not the time it
    waits for a core, which on a loaded machine hits a 10 ms call (longer than a time slice)
    far more than a 1 ms one."""
    wall = cpu = 1e9
    for _ in range(repeat):
        c = time.thread_time()
        t = time.perf_counter()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.thread_time() - c)
    return wall, cpu


@contextlib.contextmanager
def one_core():
    """Every thread of this process on one CPU while the block runs (threads the block starts
    stay there). A Rust library sizes its thread pool by the CPUs it may run on when it first
    needs one: tokie ignores ``RAYON_NUM_THREADS`` and caches that count, HF ``tokenizers``
    starts its rayon pool then. First used inside this block, they stay on one thread."""
    saved = {}
    cpu = min(os.sched_getaffinity(0))
    for tid in map(int, os.listdir("/proc/self/task")):
        try:
            saved[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, {cpu})
        except OSError:  # the thread has ended
            pass
    try:
        yield
    finally:
        for tid, cpus in saved.items():
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass


def peers(path, tok, cache):
    """Other libraries on the same model: name -> (encode-batch function, function giving each
    document's ids as a list). kitoken reads the ``.model``; tokie and HF ``tokenizers`` read
    the ``tokenizer.json`` nbtok converts it to (``save_huggingface``), written into ``cache``.
    Each is first used, and timed, on one core (``one_core``): one thread, as nbtok's and
    sentencepiece's cells for 1 thread."""
    out = {}
    try:
        import kitoken
        k = kitoken.Kitoken.from_sentencepiece_file(str(path))
        encode_all = k.encode_all  # already one list of ids per document
        out["kitoken"] = (encode_all, encode_all)
    except Exception as e:  # noqa: BLE001
        print(f"  (kitoken cannot load {path.name}: {type(e).__name__}: {str(e)[:80]})")
    hf_json = cache / f"{path.stem}.tokenizer.json"
    if not hf_json.exists():
        tok.save_huggingface(str(hf_json))
    try:
        import tokie
        t = tokie.Tokenizer.from_json(str(hf_json))

        def tokie_lists(lines, t=t):
            ids, lengths = t.encode_batch_flat(lines)
            return [x.tolist() for x in np.split(ids, np.cumsum(lengths)[:-1].astype(np.int64))]
        out["tokie"] = (lambda lines, t=t: t.encode_batch_flat(lines), tokie_lists)
    except Exception as e:  # noqa: BLE001
        print(f"  (tokie cannot load {hf_json.name}: {type(e).__name__}: {str(e)[:80]})")
    try:
        from tokenizers import Tokenizer
        h = Tokenizer.from_file(str(hf_json))
        out["HF"] = (lambda lines, h=h: h.encode_batch_fast(lines, add_special_tokens=False),
                     lambda lines, h=h: [e.ids for e in h.encode_batch_fast(lines, add_special_tokens=False)])
    except Exception as e:  # noqa: BLE001
        print(f"  (HF tokenizers cannot load {hf_json.name}: {type(e).__name__}: {str(e)[:80]})")
    with one_core():
        for encode, _ in out.values():
            encode(["warm up"])
    return out


def bench_model(path, texts, threads, repeat, with_peers, cache):
    import numba
    import sentencepiece as spm
    import nbtok
    tok = nbtok.Tokenizer.from_sentencepiece(str(path))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    others = peers(path, tok, cache) if with_peers else {}
    rows = []
    for cname, lines in texts.items():
        mb = sum(len(x.encode()) for x in lines) / 1e6
        # correctness guard: the benchmark compares equal outputs
        sample = lines[:2000]
        assert [x.tolist() for x in tok.encode_batch(sample)] == sp.encode(sample), f"{path.name}: mismatch"
        expected = sp.encode(lines)
        differ = {"nbtok": sum(a.tolist() != b for a, b in zip(tok.encode_batch(lines), expected))}
        differ.update({k: sum(a != b for a, b in zip(f[1](lines), expected)) for k, f in others.items()})
        print(f"{path.name:40s} {cname:12s} {len(lines)} documents; ids unlike sentencepiece's: "
              + ", ".join(f"{k} {v}" for k, v in differ.items()))
        for nt in threads:
            numba.set_num_threads(min(nt, numba.config.NUMBA_NUM_THREADS))
            tok.encode_batch_ragged(lines[:100])
            nb_runs, sp_runs = [], []
            t_peer = {k: 1e9 for k in others}
            for _ in range(repeat):  # interleaved
                nb_runs.append(best_of(lambda: tok.encode_batch_ragged(lines), 1))
                sp_runs.append(best_of(lambda: sp.encode(lines, num_threads=nt), 1))
                if nt == 1:
                    for k, f in others.items():
                        with one_core():
                            t_peer[k] = min(t_peer[k], best_of(lambda f=f: f[0](lines), 1))
            t_nb, t_sp = min(nb_runs), min(sp_runs)
            row = dict(model=path.name, corpus=cname, threads=nt, mb=mb, nbtok=mb / t_nb, sp=mb / t_sp,
                       ratio=t_sp / t_nb, paired=statistics.median(s / n for n, s in zip(nb_runs, sp_runs)))
            for k, v in t_peer.items():
                if v < 1e9:
                    row[k] = mb / v
            rows.append(row)
            peer_txt = "".join(f"  {k} {row[k]:6.2f}" for k in others if k in row)
            print(f"{path.name:40s} {cname:12s} threads={nt}  {mb:5.1f} MB  nbtok {row['nbtok']:7.2f} MB/s"
                  f"  sentencepiece {row['sp']:6.2f} MB/s  ratio {row['ratio']:5.2f}x (paired {row['paired']:4.2f}x)"
                  f"{peer_txt}", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


def worst_case(path, root):
    import nbtok
    import sentencepiece as spm
    tok = nbtok.Tokenizer.from_sentencepiece(str(path))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    ja = (root / "corpora" / "bench" / "ja_aozora.txt").read_text(encoding="utf-8")
    ja = "".join(ja.split())
    for label, base in (("japanese, no spaces", ja), ("one repeated char", "\u3042" * 400_000)):
        small = base.encode()[:100_000].decode("utf-8", "ignore")
        big = base.encode()[:1_000_000].decode("utf-8", "ignore")
        tok.encode(small)
        # one size after the other, as a caller would see them (each size's own memory state)
        ts, cs = best_wall_and_cpu(lambda: tok.encode(small), 5)
        tb, cb = best_wall_and_cpu(lambda: tok.encode(big), 5)
        tsp = best_of(lambda: sp.encode(big), 1)
        assert tok.encode(big).tolist() == sp.encode(big)
        print(f"worst case {path.name:28s} {label:20s} 100KB {ts * 1e3:7.1f} ms  1MB {tb * 1e3:7.1f} ms"
              f"  growth {tb / ts:5.1f}x, thread CPU {cb / cs:5.1f}x (linear = 10)"
              f"   sentencepiece 1MB {tsp * 1e3:7.1f} ms")


def load_250k(root, cache):
    """Build a 250k-piece Unigram model (test oracle: sentencepiece_model_pb2) and time loading."""
    import nbtok
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb
    path = cache / "unigram_250k.model"
    if not path.exists():
        m = pb.ModelProto()
        m.ParseFromString((root / "models" / "sentencepiece" / "opennmt_wmtende.model").read_bytes())
        seen = {p.piece for p in m.pieces}
        words = set()
        for name in ("en_gutenberg.txt", "ru_literature.txt", "multi_bible_nt.txt", "ja_aozora.txt",
                     "zh_classical_poetry.txt"):
            for w in (root / "corpora" / "bench" / name).read_text(encoding="utf-8").split():
                words.add("\u2581" + w[:12])
                words.add(w[:6])
                if len(words) > 400_000:
                    break
        rng = np.random.default_rng(0)
        for w in sorted(words - seen):
            if len(m.pieces) >= 250_000:
                break
            p = m.pieces.add()
            p.piece = w
            p.score = float(-8 - 10 * rng.random())
        m.trainer_spec.vocab_size = len(m.pieces)
        path.write_bytes(m.SerializeToString())
    t_sp = best_of(lambda: spm.SentencePieceProcessor(model_file=str(path)), 3)
    t_nb = best_of(lambda: nbtok.Tokenizer.from_sentencepiece(str(path)), 3)
    n = spm.SentencePieceProcessor(model_file=str(path)).get_piece_size()
    print(f"load {n}-piece model: nbtok {t_nb * 1e3:.0f} ms, sentencepiece {t_sp * 1e3:.0f} ms "
          f"(nbtok / sentencepiece = {t_nb / t_sp:.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=None, help="MB of text per corpus (default 4, 1 with --quick)")
    ap.add_argument("--threads", default=None, help="default 1,2 (1 with --quick)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--zoo", action="store_true", help="every .model of models/ and zoo/, long and short texts")
    ap.add_argument("--models", default="", help="--zoo: only paths containing one of these words (comma-separated)")
    ap.add_argument("--quick", action="store_true", help="--zoo: 1 MB per text, one thread")
    ap.add_argument("--markdown", default="", help="--zoo: also write the table to this file")
    ap.add_argument("--all-models", action="store_true", help="also the .model files of the shared data")
    ap.add_argument("--skip-extras", action="store_true", help="skip worst case and 250k load")
    ap.add_argument("--only", default="", help="bench only the trained models whose name contains this"
                    " (e.g. 'bpe'); implies --skip-extras")
    args = ap.parse_args()
    root = shared_data()
    mb = args.mb if args.mb is not None else (1.0 if args.quick else 4.0)
    threads = [int(x) for x in (args.threads or ("1" if args.quick else "1,2")).split(",")]
    if args.zoo:
        paths, skipped = zoo_models(root, [w for w in args.models.split(",") if w])
        for p, why in skipped:
            print(f"skipped {p.relative_to(root)}: sentencepiece cannot load it ({why})")
        texts = zoo_texts(root, mb)
        for k, v in texts.items():
            n = sum(len(x.encode()) for x in v)
            print(f"text {k}: {len(v)} documents, {n / 1e6:.2f} MB, {n / len(v):.0f} bytes on average")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (affinity "
              f"{sorted(os.sched_getaffinity(0))}); best of {args.repeat}, interleaved\n")
        rows = []
        for p in paths:
            rows += bench_zoo_model(p, root, texts, threads, args.repeat)
        table = markdown(rows)
        print("\n" + table)
        if args.markdown:
            Path(args.markdown).write_text(table + "\n")
        return
    cache = Path(os.environ.get("NBTOK_BENCH_CACHE", Path.home() / ".cache" / "nbtok-bench"))
    models = list(train_models(root, cache).values())
    if args.only:
        models = [m for m in models if args.only in m.name]
        args.skip_extras = True
    if args.all_models:
        models += sorted((root / "models" / "sentencepiece").glob("*.model"))
    texts = corpora(root, mb)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; best of {args.repeat}, interleaved;"
          " paired = median over the rounds of sentencepiece's time / nbtok's in the same round\n")
    for path in models:
        bench_model(path, texts, threads, args.repeat, with_peers=True, cache=cache)
    if not args.skip_extras:
        print()
        for path in models[:2]:
            worst_case(path, root)
        load_250k(root, cache)


if __name__ == "__main__":
    main()
