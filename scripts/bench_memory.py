"""Peak memory per input byte: nbtok side by side with tiktoken / sentencepiece / HF tokenizers.

    python scripts/bench_memory.py [--mb 100] [--docs 2000000] [--cap-gb 12] [--only bytelevel ...]
    python scripts/bench_memory.py --huge-gb 1 --only bytelevel   # one big string, nbtok only

Every cell (library x model x input) runs in its own fresh subprocess, capped with
``RLIMIT_AS`` (``--cap-gb``): it loads the model, encodes a few short texts (kernels load from
Numba's cache, the peer's lazy state is built), builds the input, notes its resident set, then
encodes the input once and reads ``ru_maxrss``. Reported per cell:

* ``peak MB``: the process's peak resident set (``ru_maxrss``), everything included;
* ``B/byte``: (peak - resident set just before the encode) / input bytes: what encoding adds
  per byte of input, the output ids included (4 bytes per id, as int32; the peers' lists of
  Python ints cost more).

Inputs: ``string`` is one text of ``--mb`` MB (the English bench corpus repeated);
``docs`` is ``--docs`` short documents (the corpus's non-empty lines, cycled).
Models (under $NBTOK_SHARED_DATA or ../shared/data): GPT-2 ranks (byte-level BPE, vs
tiktoken), bpemb_en 100k (SentencePiece BPE, vs sentencepiece), opennmt_wmtende 32k
(SentencePiece Unigram, vs sentencepiece), T5, Phi-3 and RoBERTa tokenizer.json (vs HF
tokenizers; RoBERTa's runs through the general pipeline, not a fused model).
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODELS = {
    # name: (nbtok loader, peer library, file)
    "bytelevel": ("tiktoken", "tiktoken", "gpt2/gpt2.tiktoken"),
    "spm_bpe": ("sentencepiece", "sentencepiece", "sentencepiece/bpemb_en.wiki.bpe.vs100000.model"),
    "spm_unigram": ("sentencepiece", "sentencepiece", "sentencepiece/opennmt_wmtende.model"),
    "json_t5": ("huggingface", "tokenizers", "hf_tokenizers/t5-small/tokenizer.json"),
    "json_phi3": ("huggingface", "tokenizers", "hf_tokenizers/phi-3-mini/tokenizer.json"),
    "json_roberta": ("huggingface", "tokenizers", "../zoo/roberta/tokenizer.json"),
    "json_minilm": ("huggingface", "tokenizers", "../zoo/minilm/all-MiniLM-L6-v2/tokenizer.json"),
}
PEERS = {"tiktoken": "tiktoken", "sentencepiece": "sentencepiece", "tokenizers": "HF tokenizers"}


def data_dir():
    env = os.environ.get("NBTOK_SHARED_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


# ------------------------------------------------------------------ the child (one cell)
CHILD = r'''
import json, os, resource, sys
sys.path.insert(0, os.environ["NBTOK_ROOT"])
lib, loader, path, kind, size, corpus = sys.argv[1:7]
size = float(size)

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

if lib == "nbtok":
    import nbtok
    if loader == "tiktoken":
        tok = nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2")
    elif loader == "sentencepiece":
        tok = nbtok.Tokenizer.from_sentencepiece(path)
    else:
        tok = nbtok.Tokenizer.from_huggingface(path)
    one = lambda t: tok.encode(t)
    many = lambda ds: tok.encode_batch_ragged(ds)
elif lib == "tiktoken":
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public as pub
    enc = tiktoken.Encoding("gpt2", pat_str=pub.r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(path),
                            special_tokens={})
    one = enc.encode_ordinary
    many = enc.encode_ordinary_batch
elif lib == "sentencepiece":
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=path)
    one = sp.encode
    many = sp.encode
else:
    import tokenizers
    hf = tokenizers.Tokenizer.from_file(path)
    one = lambda t: hf.encode(t, add_special_tokens=False)
    many = lambda ds: hf.encode_batch(ds, add_special_tokens=False)

for t in ["Hello world, hello wörld!", "日本語のテキスト 123", "a\tb  c\n"]:
    one(t)
    many([t, t])
data = open(corpus, encoding="utf-8").read()
if kind == "string":
    n = int(size * 1e6)
    text = (data * (n // len(data.encode()) + 1)).encode()[:n].decode("utf-8", "ignore")
    del data
    nbytes = len(text.encode())
    before = rss()
    out = one(text)
else:
    lines = [l for l in data.split("\n") if l.strip()]
    del data
    n = int(size)
    docs = (lines * (n // len(lines) + 1))[:n]
    del lines
    nbytes = sum(len(d.encode()) for d in docs)
    before = rss()
    out = many(docs)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"bytes": nbytes, "before": before, "peak": peak}))
'''


def run_cell(lib, model, kind, size, cap_gb, timeout):
    loader, _, rel = MODELS[model]
    path = data_dir() / "models" / rel
    corpus = data_dir() / "corpora" / "bench" / "en_gutenberg.txt"
    env = dict(os.environ, NBTOK_ROOT=str(ROOT), NBTOK_QUIET="1", TOKENIZERS_PARALLELISM="true")
    cmd = ["prlimit", f"--as={int(cap_gb * 2**30)}", sys.executable, "-c", CHILD,
           lib, loader, str(path), kind, str(size), str(corpus)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout}s"}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:120]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["per_byte"] = (r["peak"] - r["before"]) / r["bytes"]
    return r


def cell_text(r):
    if "error" in r:
        return r["error"]
    return f"{r['peak'] / 2**20:,.0f} MB, {r['per_byte']:.1f} B/byte"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=100, help="size of the one-string input, MB")
    ap.add_argument("--docs", type=int, default=2_000_000, help="number of short documents")
    ap.add_argument("--cap-gb", type=float, default=12, help="address-space cap of each cell")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--only", nargs="*", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--huge-gb", type=float, default=0,
                    help="instead: nbtok byte-level on one string of this many GB (no peers)")
    args = ap.parse_args()
    if args.huge_gb:
        r = run_cell("nbtok", "bytelevel", "string", args.huge_gb * 1000, args.cap_gb, args.timeout)
        print(f"nbtok byte-level, one {args.huge_gb:g} GB string: {cell_text(r)}", flush=True)
        return
    print("| model | input | nbtok | peer | peer library |")
    print("|---|---|---|---|---|", flush=True)
    for model in args.only:
        peer = MODELS[model][1]
        for kind, size, label in (("string", args.mb, f"one {args.mb:g} MB string"),
                                  ("docs", args.docs, f"{args.docs:,} short docs")):
            ours = run_cell("nbtok", model, kind, size, args.cap_gb, args.timeout)
            theirs = ({"error": "-"} if args.no_peers else
                      run_cell(peer, model, kind, size, args.cap_gb, args.timeout))
            print(f"| {model} | {label} | {cell_text(ours)} | {cell_text(theirs)} | {PEERS[peer]} |", flush=True)


if __name__ == "__main__":
    main()
