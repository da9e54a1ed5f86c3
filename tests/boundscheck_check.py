"""Every kind of kernel run with Numba's bounds checks on (``NUMBA_BOUNDSCHECK=1``).

nbtok's kernels do no bounds checks: the loaders validate every array where it enters. This
script recompiles the kernels with Numba's checks (an out-of-bounds index raises
``IndexError`` instead of reading or writing past an array) and runs encode, decode, batch,
offsets, streaming decode and sampling on each model type built from the committed fixtures
(the bundled GPT-2 ranks, the tiny GGUF files under tests/data/gguf and the tokenizer.json
files nbtok writes for them), then loads damaged files (``fuzz_runner`` cases) and uses those
that load. Any exception other than a loader's ``ValueError`` / ``NotImplementedError`` fails.

    python tests/boundscheck_check.py [--fuzz-cases 8]

It re-runs itself with ``NUMBA_BOUNDSCHECK=1`` and a Numba cache of its own (the checked
compilation must not mix with the normal one); ``.ci/run`` runs it as its own step, after
the test suite. Measured: 4 min 23 s of CPU (nearly all of it compilation; 25 min of wall
time on the 2-core VM shared with two other jobs at load 6-9, so about 5 min on 2 free cores).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
TEXTS = ["Hello world, hello wörld! It's 2024.", "日本語のテキスト 123", "", "a\tb  c\n\n  d",
         "x\ud83d\ude00y 🙃 <s> </s> [CLS] <|endoftext|>", "ü" * 40 + " " * 33 + "z" * 300]


def models():
    """``(name, tokenizer)`` for every model type the committed fixtures give."""
    import nbtok
    from nbtok.formats.huggingface import tokenizer_from_config
    gguf = TESTS / "data" / "gguf"
    out = [("bytelevel gpt2", nbtok.get_encoding("gpt2"))]
    for name in ("tiny-llama", "tiny-t5", "tiny-gpt2", "tiny-bert"):
        out.append((name, nbtok.Tokenizer.from_file(gguf / f"{name}.gguf")))
    for name, tok in list(out):
        to_json = getattr(tok.model, "to_huggingface_json", None)
        if to_json is not None:
            out.append((name + " as tokenizer.json", tokenizer_from_config(to_json())))
    from nbtok.formats.huggingface import to_huggingface_json
    out.append(("gpt2 as tokenizer.json", tokenizer_from_config(to_huggingface_json(out[0][1].model))))
    return out


def exercise(name, tok):
    import numpy as np
    refusals = (ValueError, NotImplementedError)
    for text in TEXTS:
        try:
            ids = tok.encode(text)
        except refusals:
            continue
        tok.decode(ids)
        decoder = getattr(tok, "decode_stream", None)
        if decoder is not None:
            try:
                d = decoder()
                for i in ids:
                    d.step(int(i))
            except NotImplementedError:
                pass
    texts = [t for t in TEXTS if "<|endoftext|>" not in t] * 3
    ids, offsets = tok.encode_batch_ragged(texts)
    tok.encode_batch(texts, padding="longest", truncation=True, max_length=7, return_offsets=True)
    tok.decode_batch([ids[offsets[d]:offsets[d + 1]] for d in range(len(texts))])
    try:
        tok.encode_batch(texts, return_offsets=True)
    except NotImplementedError:
        pass
    sample = getattr(tok, "sample_encode", None)
    if sample is not None:
        for seed in range(3):
            try:
                sample(TEXTS[0], alpha=0.1, seed=seed)
                sample(TEXTS[1], alpha=0.5, nbest_size=4, seed=seed)
            except refusals:
                pass
    bad = np.array([0, tok.vocab_size + 5], np.int64)
    try:
        tok.decode(bad)
    except refusals:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuzz-cases", type=int, default=8, help="damaged files per format")
    args = ap.parse_args()
    if os.environ.get("NUMBA_BOUNDSCHECK") != "1":
        with tempfile.TemporaryDirectory(prefix="nbtok-boundscheck-") as tmp:
            env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=os.path.join(tmp, "numba"),
                       NBTOK_CACHE_DIR=os.path.join(tmp, "arrays"), NBTOK_QUIET="1",
                       PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
            sys.exit(subprocess.call([sys.executable, __file__, *sys.argv[1:]], env=env))
    import numba
    assert numba.config.BOUNDSCHECK, "NUMBA_BOUNDSCHECK=1 did not take"
    t0 = time.perf_counter()
    for name, tok in models():
        start = time.perf_counter()
        exercise(name, tok)
        print(f"{name}: ok ({time.perf_counter() - start:.0f} s)", flush=True)
    sys.path.insert(0, str(TESTS))
    import fuzz_runner
    with tempfile.TemporaryDirectory(prefix="nbtok-boundscheck-fuzz-") as tmp:
        bases = Path(tmp) / "bases"
        built = fuzz_runner.build_bases(bases)
        for fmt in built:
            outcomes = [fuzz_runner.run_case(fmt, bases, seed, Path(tmp)) for seed in range(args.fuzz_cases)]
            print(f"damaged {fmt}: {outcomes.count('loaded')} loaded, {outcomes.count('refused')} refused", flush=True)
    print(f"boundscheck run: no out-of-bounds access ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
