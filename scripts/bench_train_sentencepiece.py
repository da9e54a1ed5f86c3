"""SentencePiece training, nbtok side by side with sentencepiece, in one run.

    python scripts/bench_train_sentencepiece.py [--mb 56] [--vocab 8000 32000] [--type unigram bpe]

Each trainer runs in its own subprocess on the same lines (the bench corpus under
$NBTOK_SHARED_DATA or ../shared/data, cut to --mb MB spread over its files), sentencepiece with
``num_threads=2``; prints wall seconds, peak RSS, the ratio nbtok / sentencepiece, the pieces
the two models share and their tokens on the input. nbtok's first run also compiles its kernels:
a warm-up training on a small input runs first in the same subprocess.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ["en_gutenberg.txt", "ru_literature.txt", "ja_aozora.txt", "zh_classical_poetry.txt", "multi_bible_nt.txt"]

CHILD = r"""
import json, resource, sys, time
corpus, out, lib, model_type, vocab = sys.argv[1:6]
vocab = int(vocab)
if lib == "nbtok":
    import nbtok
    nbtok.train_sentencepiece(iter(["warm up the kernels", "a b c ab ab abc bca"] * 50), 20, model_type=model_type)
    t = time.perf_counter()
    tok = nbtok.train_sentencepiece(corpus, vocab, model_type=model_type, progress=False)
    seconds = time.perf_counter() - t
    tok.save_sentencepiece(out)
else:
    import sentencepiece as spm
    t = time.perf_counter()
    spm.SentencePieceTrainer.train(input=corpus, model_prefix=out[:-len(".model")], vocab_size=vocab,
                                   model_type=model_type, num_threads=2, minloglevel=2)
    seconds = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "rss_mb": rss}))
"""


def data_dir():
    env = os.environ.get("NBTOK_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def make_corpus(mb, path):
    per_file = int(mb * 1e6 / len(FILES))
    with open(path, "wb") as f:
        for name in FILES:
            data = (data_dir() / "corpora" / "bench" / name).read_bytes()[:per_file]
            f.write(data[:data.rfind(b"\n") + 1])


def run(lib, corpus, out, model_type, vocab):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", CHILD, corpus, out, lib, model_type, str(vocab)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{lib} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(corpus, ours, theirs):
    import sentencepiece as spm
    a = spm.SentencePieceProcessor(model_file=ours)
    b = spm.SentencePieceProcessor(model_file=theirs)
    pa = {a.id_to_piece(i) for i in range(a.get_piece_size())}
    pb = {b.id_to_piece(i) for i in range(b.get_piece_size())}
    lines = Path(corpus).read_text(encoding="utf-8").splitlines()[::50]
    ta = sum(map(len, a.encode(lines)))
    tb = sum(map(len, b.encode(lines)))
    return len(pa & pb) / len(pb), ta / tb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=56)
    ap.add_argument("--vocab", type=int, nargs="+", default=[8000, 32000])
    ap.add_argument("--type", nargs="+", default=["unigram", "bpe"])
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    corpus = os.path.join(tmp, "corpus.txt")
    make_corpus(args.mb, corpus)
    print(f"corpus: {os.path.getsize(corpus) / 1e6:.1f} MB of {', '.join(FILES)}")
    print("| type | vocab | nbtok s | spm s | time ratio | nbtok RSS MB | spm RSS MB | RSS ratio | pieces shared | tokens nbtok/spm |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for model_type in args.type:
        for vocab in args.vocab:
            ours, theirs = os.path.join(tmp, "ours.model"), os.path.join(tmp, "spm.model")
            r_ours = run("nbtok", corpus, ours, model_type, vocab)
            r_spm = run("spm", corpus, theirs, model_type, vocab)
            shared, tokens = compare(corpus, ours, theirs)
            print(f"| {model_type} | {vocab} | {r_ours['seconds']:.1f} | {r_spm['seconds']:.1f} | "
                  f"{r_ours['seconds'] / r_spm['seconds']:.2f}x | {r_ours['rss_mb']:.0f} | {r_spm['rss_mb']:.0f} | "
                  f"{r_ours['rss_mb'] / r_spm['rss_mb']:.2f}x | {shared:.1%} | {tokens:.4f} |", flush=True)


if __name__ == "__main__":
    main()
