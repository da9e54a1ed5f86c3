#!/usr/bin/env python
"""Turn asv results into PNG charts under docs/ and the ratios table in docs/benchmarks.md.

    python scripts/bench_charts.py                 # newest results of this machine
    python scripts/bench_charts.py --machine vm --results .asv/results --docs docs

Reads every result file of the machine and, for each benchmark, keeps the newest file that
has a value for it (so partial runs of different suites combine). Writes:

    docs/seed_bpe.png        seed table 1: time vs input size, log-log, one line per algorithm
    docs/seed_unigram.png    seed table 2: time vs sentence length, log-log
    docs/worstcase.png       no-whitespace inputs: time vs bytes, log-log, per library
    docs/throughput_*.png    encode MB/s bars, nbtok against the peers (the throughput suites)
    docs/training.png        BPE training time per trainer and vocabulary size
    docs/coldstart.png       cold start and peak memory bars

and rewrites the text between ``<!-- ratios:start -->`` and ``<!-- ratios:end -->`` in
docs/benchmarks.md with the measured tables (machine: CPU model from /proc/cpuinfo).
"""
import argparse
import ast
import datetime
import itertools
import json
import math
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for asv_benchmarks: the suites' inputs and constants
START, END = "<!-- ratios:start -->", "<!-- ratios:end -->"


# ---------------------------------------------------------------------- loading
def load_results(results_dir, machine=None):
    """{benchmark name: {params tuple: value}} plus metadata of the files used."""
    results_dir = Path(results_dir)
    machines = [p for p in results_dir.iterdir() if p.is_dir()] if results_dir.is_dir() else []
    if machine:
        machines = [results_dir / machine]
    elif len(machines) > 1:
        # the machine with the newest result file
        machines = sorted(machines, key=lambda m: max((f.stat().st_mtime for f in m.glob("*.json")), default=0))[-1:]
    files = []
    for m in machines:
        for f in m.glob("*.json"):
            if f.name == "machine.json":
                continue
            try:
                files.append(json.loads(f.read_text()))
            except (OSError, json.JSONDecodeError):
                continue
    files.sort(key=lambda d: d.get("date") or 0)
    merged, meta = {}, {"files": len(files), "commits": set(), "machine": None, "params": {},
                        "min_of_samples": set()}
    for d in files:  # oldest first: newer files overwrite
        cols = d.get("result_columns") or ["result", "params"]
        meta["params"] = d.get("params", {})
        meta["machine"] = d.get("params", {}).get("machine")
        for name, row in d.get("results", {}).items():
            rec = dict(zip(cols, row))
            values, params = rec.get("result"), rec.get("params") or []
            if values is None:
                continue
            if not isinstance(values, list):
                values = [values]
            samples = rec.get("samples")
            if isinstance(samples, list) and len(samples) == len(values):
                # recorded samples (the seed tables): the minimum, the least disturbed by
                # other processes on a shared machine
                values = [min(sm) if sm else v for sm, v in zip(samples, values)]
                meta["min_of_samples"].add(name)
            combos = list(itertools.product(*params)) if params else [()]
            bench = merged.setdefault(name, {})
            for combo, value in zip(combos, values):
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    continue
                bench[tuple(_lit(p) for p in combo)] = value
                meta["commits"].add(d.get("commit_hash", "")[:8])
    return merged, meta


def _lit(s):
    try:
        return ast.literal_eval(s)
    except (ValueError, SyntaxError):
        return s


def find(results, suffix):
    """The result dict of the benchmark whose name ends with ``suffix`` (or {})."""
    for name, vals in results.items():
        if name.endswith(suffix):
            return vals
    return {}


# ---------------------------------------------------------------------- formatting
def fmt_time(s):
    if s is None:
        return "—"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def fmt_ratio(x):
    if x is None:
        return "—"
    return f"{x:,.0f}×" if x >= 100 else f"{x:.1f}×" if x >= 10 else f"{x:.2f}×"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


# ---------------------------------------------------------------------- sections
SEED_BPE_ALGS = ["naive", "naive_presplit", "pq_tree", "pq_linked_list"]
SEED_BPE_LABEL = {"naive": "naive O(N²)", "naive_presplit": "naive + whitespace pre-split",
                  "pq_tree": "priority queue + tree", "pq_linked_list": "priority queue + linked list (nbtok)"}


def seed_bpe_symbols(line_counts):
    """{lines: number of initial symbols} (code points of the SentencePiece-style text)."""
    try:
        from asv_benchmarks import _common
        return {n: len(_common.sentencepiece_text(" ".join(_common.lines("tinyshakespeare", n))))
                for n in line_counts}
    except Exception:  # data folder absent: plot against lines
        return {}


def seed_bpe(results, plt, docs):
    times = find(results, "SeedBPE.time_merge")
    if not times:
        return "Seed BPE table: no results yet."
    lines = sorted({k[0] for k in times})
    nsym = seed_bpe_symbols(lines)
    syms = {(n, a): nsym[n] for n in lines for a in SEED_BPE_ALGS if n in nsym}
    rows = []
    for n in lines:
        t = {a: times.get((n, a)) for a in SEED_BPE_ALGS}
        ll = t["pq_linked_list"]
        rows.append([n, nsym.get(n, "?")] + [fmt_time(t[a]) for a in SEED_BPE_ALGS]
                    + [fmt_ratio(t["naive"] / ll) if t["naive"] and ll else "—",
                       fmt_ratio(t["pq_tree"] / ll) if t["pq_tree"] and ll else "—"])
    md = ("**Seed table 1: BPE merge algorithms** (tiny Shakespeare, first N lines, SentencePiece-style "
          "input; sentencepiece BPE model with 8000 pieces trained on tiny Shakespeare; merge only)\n\n"
          + table(["lines", "symbols"] + [SEED_BPE_LABEL[a] for a in SEED_BPE_ALGS]
                  + ["naive / linked list", "tree / linked list"], rows))
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for a, mk in zip(SEED_BPE_ALGS, "osD^"):
            pts = [(syms.get((n, a)) or n, times[(n, a)]) for n in lines if (n, a) in times]
            if pts:
                ax.plot(*zip(*pts), marker=mk, label=SEED_BPE_LABEL[a])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("input size (symbols = code points; 1, 10, 100, 1000 lines)")
        ax.set_ylabel("time per encode (s)")
        ax.set_title("BPE merge algorithms, tiny Shakespeare")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(docs / "seed_bpe.png", dpi=120)
        plt.close(fig)
    return md


UNI_IMPLS = ["nested_loop", "trie_forward", "nbtok_encode", "sentencepiece"]
UNI_LABEL = {"nested_loop": "nested loop (forward pass)", "trie_forward": "trie (forward pass, nbtok)",
             "nbtok_encode": "nbtok encode", "sentencepiece": "sentencepiece encode"}
SENT_LABEL = {"quick_fox": "quick brown fox (43 chars)", "udhr_article1": "UDHR article 1 (170 chars)"}


def seed_unigram(results, plt, docs):
    from asv_benchmarks.bench_seed_unigram import CALLS  # each sample times CALLS calls
    times = {k: v / CALLS for k, v in find(results, "SeedUnigram.time_encode").items() if v}
    if not times:
        return "Seed Unigram table: no results yet."
    models = sorted({k[0] for k in times})
    sents = ["quick_fox", "udhr_article1"]
    rows = []
    for m in models:
        for s in sents:
            t = {i: times.get((m, s, i)) for i in UNI_IMPLS}
            r1 = t["nested_loop"] / t["trie_forward"] if t["nested_loop"] and t["trie_forward"] else None
            r2 = t["sentencepiece"] / t["nbtok_encode"] if t["sentencepiece"] and t["nbtok_encode"] else None
            rows.append([m, SENT_LABEL.get(s, s)] + [fmt_time(t[i]) for i in UNI_IMPLS] + [fmt_ratio(r1), fmt_ratio(r2)])
    md = ("**Seed table 2: Unigram Viterbi** (forward-pass rows take the normalized text; encode rows "
          "take the raw sentence)\n\n"
          + table(["model", "sentence"] + [UNI_LABEL[i] for i in UNI_IMPLS]
                  + ["nested / trie", "sentencepiece / nbtok"], rows))
    if plt is not None:
        fig, axes = plt.subplots(1, len(models), figsize=(5.2 * len(models), 4.2), squeeze=False)
        for ax, m in zip(axes[0], models):
            for i, mk in zip(UNI_IMPLS, "osD^"):
                pts = [(43 if s == "quick_fox" else 170, times[(m, s, i)]) for s in sents if (m, s, i) in times]
                if pts:
                    ax.plot(*zip(*pts), marker=mk, label=UNI_LABEL[i])
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("sentence length (characters)")
            ax.set_ylabel("time per call (s)")
            ax.set_title(f"Unigram Viterbi, {m}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(docs / "seed_unigram.png", dpi=120)
        plt.close(fig)
    return md


def worstcase(results, plt, docs):
    times = find(results, "WorstCase.time_encode")
    if not times:
        return "Worst case: no results yet."
    libs = [lib for lib in ["nbtok_gpt2", "tiktoken_gpt2", "tokenizers_gpt2", "nbtok_sp_bpe", "sentencepiece_bpe"]
            if any(k[0] == lib for k in times)]
    kinds = sorted({k[1] for k in times})
    sizes = sorted({k[2] for k in times})
    rows = []
    for kind in kinds:
        for lib in libs:
            rows.append([kind, lib] + [f"{sz / times[(lib, kind, sz)] / 1e6:.2f}" if (lib, kind, sz) in times else "—"
                                       for sz in sizes])
    md = ("**Worst case: no whitespace** (MB/s for one encode call; flat across sizes = linear)\n\n"
          + table(["input", "library"] + [f"{sz // 1000} KB" for sz in sizes], rows))
    pairs = [("nbtok_gpt2", "tiktoken_gpt2"), ("nbtok_gpt2", "tokenizers_gpt2"), ("nbtok_sp_bpe", "sentencepiece_bpe")]
    rrows = []
    for kind in kinds:
        for ours, peer in pairs:
            cells = [fmt_ratio(times[(peer, kind, sz)] / times[(ours, kind, sz)])
                     if (ours, kind, sz) in times and (peer, kind, sz) in times else "—" for sz in sizes]
            if any(c != "—" for c in cells):
                rrows.append([kind, f"{peer} / {ours}"] + cells)
    if rrows:
        md += ("\n\nWorst case, speed ratio (peer time / nbtok time; > 1: nbtok faster)\n\n"
               + table(["input", "ratio"] + [f"{sz // 1000} KB" for sz in sizes], rrows))
    if plt is not None:
        fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 4.2), squeeze=False)
        for ax, kind in zip(axes[0], kinds):
            for lib, mk in zip(libs, "osD^v<>"):
                pts = [(sz, times[(lib, kind, sz)]) for sz in sizes if (lib, kind, sz) in times]
                if pts:
                    ax.plot(*zip(*pts), marker=mk, label=lib)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("input size (bytes)")
            ax.set_ylabel("time per encode (s)")
            ax.set_title(f"no-whitespace input: {kind}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(docs / "worstcase.png", dpi=120)
        plt.close(fig)
    return md


TRAINERS = ["nbtok", "hf", "rustbpe"]


def training(results, plt, docs):
    secs = find(results, "TrainBench.track_seconds")
    rss = find(results, "TrainBench.track_peak_rss_mb")
    vs_hf = find(results, "TrainBench.track_seconds_vs_hf")
    same = find(results, "TrainBench.track_merges_equal_hf")
    cs336 = find(results, "TrainCS336.time_train_corpus_en_500")
    parts = []
    if secs:
        vocabs = sorted({k[1] for k in secs})
        rows = []
        for v in vocabs:
            for t in TRAINERS:
                if (t, v) not in secs:
                    continue
                hf_over = (1.0 / vs_hf[(t, v)]) if vs_hf.get((t, v)) else None
                rows.append([v, t, fmt_time(secs[(t, v)]),
                             f"{rss[(t, v)]:.0f} MB" if (t, v) in rss else "—",
                             fmt_ratio(hf_over) if hf_over else "—",
                             {1: "yes", 0: "no"}.get(same.get((t, v)), "—")])
        parts.append("**Byte-level BPE training** (corpora/bench, 56 MB, 2 threads, one run per cell; "
                     "ratio = HF time / trainer time)\n\n"
                     + table(["vocab", "trainer", "time", "peak RSS", "HF / trainer", "merges = HF"], rows))
        if plt is not None:
            fig, ax = plt.subplots(figsize=(7, 4))
            width = 0.8 / len(TRAINERS)
            for j, t in enumerate(TRAINERS):
                xs = [i + j * width for i, v in enumerate(vocabs) if (t, v) in secs]
                ys = [secs[(t, v)] for v in vocabs if (t, v) in secs]
                if xs:
                    ax.bar(xs, ys, width, label=t)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(vocabs))], [str(v) for v in vocabs])
            ax.set_xlabel("vocabulary size")
            ax.set_ylabel("training time (s)")
            ax.set_title("BPE training on corpora/bench (56 MB, 2 threads)")
            ax.legend()
            ax.grid(True, axis="y", alpha=0.3)
            fig.tight_layout()
            fig.savefig(docs / "training.png", dpi=120)
            plt.close(fig)
    if cs336:
        parts.append(f"CS336 small case (corpus.en, vocab 500, warm JIT): {fmt_time(cs336.get((), next(iter(cs336.values()))))}")
    return "\n\n".join(parts) if parts else "Training: no results yet."


def coldstart(results, plt, docs):
    cold = find(results, "ColdStart.time_coldstart")
    first = find(results, "ColdStartNoCache.track_first_run_seconds")
    mem = find(results, "PeakMemory.peakmem_load_encode_1mb")
    if not (cold or mem):
        return "Cold start: no results yet."
    libs = [k[0] for k in sorted(set(cold) | set(mem))]
    rows = [[lib, fmt_time(cold.get((lib,))), fmt_time(first.get((lib,))) if (lib,) in first else "—",
             f"{mem[(lib,)] / 2**20:.0f} MiB" if (lib,) in mem else "—"] for lib in libs]
    md = ("**Cold start and memory** (new process: import + load + first encode; cold start = numba's "
          "kernel cache and nbtok's array cache warm, first run = both empty; peak RSS while loading "
          "and encoding 1 MB of English)\n\n"
          + table(["library", "cold start (warm caches)", "first run (empty caches)", "peak memory"], rows))
    if plt is not None:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        ks = [lib for lib in libs if (lib,) in cold]
        axes[0].barh(ks, [cold[(k,)] for k in ks], color="tab:blue")
        axes[0].set_xlabel("cold start (s)")
        axes[0].set_title("new process: import + load + first encode")
        ks = [lib for lib in libs if (lib,) in mem]
        axes[1].barh(ks, [mem[(k,)] / 2**20 for k in ks], color="tab:orange")
        axes[1].set_xlabel("peak memory (MiB)")
        axes[1].set_title("peak RSS: load + encode 1 MB")
        fig.tight_layout()
        fig.savefig(docs / "coldstart.png", dpi=120)
        plt.close(fig)
    return md


OTHER_TRACKS = {
    "track_load_ratio": "nbtok's model load time / sentencepiece's (< 1: nbtok loads faster)",
    "track_worst_case_growth": "time(1 MB) / time(100 KB) on text without spaces (10 = linear)",
}


def pivot(vals, fmt):
    """A table of {params: value}: 2 parameters -> first down, second across; else one row each."""
    if vals and all(len(k) == 2 for k in vals):
        downs = sorted({k[0] for k in vals}, key=str)
        across = sorted({k[1] for k in vals}, key=str)
        rows = [[d] + [fmt(vals[(d, a)]) if (d, a) in vals else "—" for a in across] for d in downs]
        return table([""] + [str(a) for a in across], rows)
    rows = [[", ".join(map(str, k)) or "—", fmt(v)] for k, v in sorted(vals.items(), key=lambda kv: str(kv[0]))]
    return table(["parameters", "value"], rows)


def corpus_bytes(module, corpus):
    """Bytes of the documents a throughput suite encodes (its ``documents(corpus)``), or None."""
    try:
        import importlib
        mod = importlib.import_module(f"asv_benchmarks.{module}")
        return sum(len(d.encode("utf-8")) for d in mod.documents(corpus))
    except Exception:
        return None


def encode_batch_mbps(results, name, module):
    """{(corpus, library, threads): MB/s} from a time_encode_batch benchmark; a leading model
    parameter (the SentencePiece suite) is folded into the corpus label."""
    times = find(results, name)
    if times and all(len(k) == 4 for k in times):
        times = {(f"{k[0]}: {k[1]}", k[2], k[3]): v for k, v in times.items()}
    out = {}
    sizes = {}
    for key, t in times.items():
        corpus = key[0].split(": ")[-1]
        if corpus not in sizes:
            sizes[corpus] = corpus_bytes(module, corpus)
        if sizes[corpus]:
            out[key] = sizes[corpus] / t / 1e6
    return out


def pipeline(results):
    times = find(results, "PaddedBatch.time_padded_batch")
    if not times:
        return ""
    rows = []
    for off in sorted({k[1] for k in times}, key=str):
        ours, theirs = times.get(("nbtok", off)), times.get(("tokenizers", off))
        rows.append([off, fmt_time(ours), fmt_time(theirs),
                     fmt_ratio(theirs / ours) if ours and theirs else "—"])
    return ("**Padded batch** (100,000 short English documents into a padded int32 matrix)\n\n"
            + table(["offsets", "nbtok", "HF tokenizers", "HF / nbtok"], rows))


def throughput(results, plt, docs):
    """Encode throughput: the byte-level / SentencePiece batch suites as MB/s bars, plus anything
    recorded as MB/s (track_*mbps*) or as a ratio (track_*ratio*, track_*_vs_*)."""
    def own_section(n):
        return any(k in n for k in ("TrainBench", "TrainCS336", "SeedBPE", "SeedUnigram", "WorstCase", "ColdStart"))
    def method(n):
        return n.rsplit(".", 1)[-1].lower()
    mb = {n: v for n, v in results.items()
          if method(n).startswith("track_") and ("mbps" in method(n) or "mb_s" in method(n)) and not own_section(n)}
    other = {n: v for n, v in results.items() if method(n) in OTHER_TRACKS}
    ratios = {n: v for n, v in results.items()
              if method(n).startswith("track_") and ("ratio" in method(n) or "_vs_" in method(n))
              and n not in mb and n not in other and not own_section(n)}
    parts = []
    batch = {}
    for name, module, label in [("bench_bytelevel.EncodeBatch.time_encode_batch", "bench_bytelevel", "byte-level BPE (GPT-2)"),
                                ("bench_sentencepiece.EncodeBatch.time_encode_batch", "bench_sentencepiece", "SentencePiece")]:
        vals = encode_batch_mbps(results, name, module)
        if vals:
            batch[label] = vals
    for label, vals in batch.items():
        corpora = sorted({k[0] for k in vals})
        libs = sorted({k[1] for k in vals}, key=lambda x: (x != "nbtok", x))
        threads = sorted({k[2] for k in vals if len(k) > 2}) or [None]
        rows = []
        for c in corpora:
            for th in threads:
                rows.append([c, th] + [f"{vals[(c, lib, th)]:.2f}" if (c, lib, th) in vals else "—" for lib in libs])
        parts.append(f"**Encode throughput, {label}** (MB/s, one batch call over ~4 MB of lines)\n\n"
                     + table(["corpus", "threads"] + libs, rows))
        peers = [lib for lib in libs if lib != "nbtok"]
        rrows = []
        for c in corpora:
            for th in threads:
                ours = vals.get((c, "nbtok", th))
                if ours:
                    rrows.append([c, th] + [fmt_ratio(ours / vals[(c, p, th)]) if (c, p, th) in vals else "—"
                                            for p in peers])
        if rrows and peers:
            parts.append(f"Speed ratio, {label}: nbtok MB/s / peer MB/s at the same thread count "
                         "(from the same run; > 1 means nbtok is faster)\n\n"
                         + table(["corpus", "threads"] + peers, rrows))
        if plt is not None:
            groups = [(c, th) for c in corpora for th in threads]
            fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(groups)), 4.4))
            width = 0.8 / max(1, len(libs))
            palette = iter(["tab:blue", "tab:orange", "tab:purple", "tab:red", "tab:brown", "tab:gray", "tab:olive"])
            for j, lib in enumerate(libs):
                xs = [i + j * width for i, g in enumerate(groups) if (g[0], lib, g[1]) in vals]
                ys = [vals[(g[0], lib, g[1])] for g in groups if (g[0], lib, g[1]) in vals]
                color = "tab:green" if lib == "nbtok" else next(palette)
                if xs:
                    ax.bar(xs, ys, width, label=lib, color=color)
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))],
                          [f"{c.replace(': ', chr(10))}\n{th} thread{'s' if th != 1 else ''}" for c, th in groups],
                          fontsize=7 if len(groups) > 6 else 9)
            ax.set_ylabel("MB/s")
            ax.set_title(f"Encode throughput, {label}")
            ax.legend(fontsize=8)
            ax.grid(True, axis="y", alpha=0.3)
            fig.tight_layout()
            slug = "bytelevel" if "byte" in label else "sentencepiece"
            fig.savefig(docs / f"throughput_{slug}.png", dpi=120)
            plt.close(fig)
    if mb:
        for n in sorted(mb):
            parts.append(f"**Throughput, {n}** (MB/s)\n\n" + pivot(mb[n], lambda v: f"{v:.2f}"))
        if plt is not None and not batch:
            labels, vals = [], []
            for n in sorted(mb):
                for params, v in sorted(mb[n].items(), key=lambda kv: str(kv[0])):
                    labels.append(n.split(".")[-2] + "." + n.split(".")[-1].replace("track_", "") + " " + ", ".join(map(str, params)))
                    vals.append(v)
            fig, ax = plt.subplots(figsize=(9, 0.3 * len(labels) + 1.5))
            colors = ["tab:green" if "nbtok" in lab else "tab:gray" for lab in labels]
            ax.barh(labels, vals, color=colors)
            ax.invert_yaxis()
            ax.set_xlabel("MB/s (green: nbtok)")
            ax.tick_params(axis="y", labelsize=7)
            ax.grid(True, axis="x", alpha=0.3)
            fig.tight_layout()
            fig.savefig(docs / "throughput.png", dpi=120)
            plt.close(fig)
    for n in sorted(ratios):
        vals = ratios[n]
        title = f"**Speed ratio, {n}** (peer time / nbtok time; > 1 means nbtok is faster)\n\n"
        parts.append(title + pivot(vals, fmt_ratio))
    for n in sorted(other):
        parts.append(f"**{n}**: {OTHER_TRACKS[method(n)]}\n\n" + pivot(other[n], lambda v: f"{v:.2f}"))
    pipe = pipeline(results)
    if pipe:
        parts.append(pipe)
    return "\n\n".join(parts) if parts else "Throughput suites: no results yet."


# ---------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--results", default=str(ROOT / ".asv" / "results"))
    ap.add_argument("--machine", default=None)
    ap.add_argument("--docs", default=str(ROOT / "docs"))
    ap.add_argument("--no-png", action="store_true", help="only rewrite the tables")
    args = ap.parse_args(argv)

    results, meta = load_results(args.results, args.machine)
    if not results:
        print(f"no asv results under {args.results}; run scripts/bench_quick.sh first", file=sys.stderr)
        return 1
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    plt = None
    if not args.no_png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: F811

    sections = [seed_bpe(results, plt, docs), seed_unigram(results, plt, docs),
                worstcase(results, plt, docs), throughput(results, plt, docs), training(results, plt, docs),
                coldstart(results, plt, docs)]
    p = meta["params"]
    head = (f"Measured on {cpu_model()}, {cpu_count()} cores, {p.get('ram', '?')} bytes RAM "
            f"(asv machine `{meta['machine']}`, Python {p.get('python', platform.python_version())}); "
            f"commit(s) {', '.join(sorted(meta['commits']))}; tables written "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by scripts/bench_charts.py. "
            + ("Seed tables: minimum of the recorded samples; other timings: asv's median "
               "(one sample per benchmark in the quick subset)." if meta["min_of_samples"] else
               "Timings: asv's median of the samples taken."))
    block = START + "\n\n" + head + "\n\n" + "\n\n".join(sections) + "\n\n" + END
    md_path = docs / "benchmarks.md"
    text = md_path.read_text() if md_path.exists() else f"# Benchmarks\n\n{START}\n{END}\n"
    if START in text and END in text:
        a, b = text.index(START), text.index(END) + len(END)
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    md_path.write_text(text)
    print(block)
    if plt is not None:
        print("\ncharts:", ", ".join(sorted(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
                                            for p in docs.glob("*.png"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
