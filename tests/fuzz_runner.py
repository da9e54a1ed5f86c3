"""Seeded fuzzing of every loader, each case bounded by a timeout, crashes and hangs counted.

Five formats: ``model`` (sentencepiece ``.model``), ``tiktoken`` (rank file), ``gpt2``
(``vocab.json`` + ``merges.txt``), ``tokenizer_json`` and ``native`` (nbtok's npz). A case is
one damaged file (or pair) made from a small valid one by a seeded mutation: byte edits
(overwrites, deletions, insertions, a truncation) everywhere, plus edits that know the format
-- a rank or id set to an extreme value, a line dropped or doubled, a JSON value replaced or
removed, a native array's values, dtype or shape changed. The file is loaded and, if it loads,
encodes, decodes and batches a few texts. Outcomes:

* ``refused``: the load raised ``ValueError`` / ``NotImplementedError``;
* ``loaded``: it loaded and every call returned (or raised one of those two);
* ``error``: any other exception (a loader's or a kernel's unclean error);
* ``crash``: the worker process died (a segfault, an abort);
* ``hang``: a case took longer than its timeout (the worker is killed and restarted).

The cases run in a worker process that reports each case before and after it; the parent
restarts the worker after a crash or a hang, from the next case. Run it on its own for a long
run (tests/test_fuzz.py runs a few cases per format; ``NBTOK_FUZZ_CASES`` sets how many):

    PYTHONPATH=. python tests/fuzz_runner.py --cases 3000 [--formats model native] [--timeout 60]
"""
import argparse
import base64
import copy
import io
import json
import os
import random
import selectors
import subprocess
import sys
import time
import zipfile
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FORMATS = ["model", "tiktoken", "gpt2", "tokenizer_json", "native"]
TEXT = [line for line in (TESTS / "data" / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines() if line]
PROBES = TEXT[:3] + ["héllo 🙃 <s> [CLS] <unk> <|endoftext|>", "", "x" * 300]
VALUES = [-1, 0, 1, 2**31, 2**63 - 1, -2**40, 1073741823, 1e308, "", "x", "\u0000", None, True, [], {}, [1, 2],
          "<s>", 10**6]
NUMBERS = [b"-1", b"0", b"1073741823", b"2147483648", b"99999999999999999999", b"1e5", b"", b"x", b"50256"]


# ------------------------------------------------------------------ the valid files
def build_bases(out):
    """Write the valid files every mutation starts from into ``out``; returns what was built
    (a format whose reference library is missing is left out)."""
    import nbtok
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bl = nbtok.train_bpe(iter(TEXT * 3), 1500, special_tokens=["<|endoftext|>"], progress=False)
    bl.save_tiktoken(str(out / "base.tiktoken"))
    bl.save_gpt2(str(out / "vocab.json"), str(out / "merges.txt"))
    bl.save_huggingface(str(out / "bytelevel.json"))
    bl.save(str(out / "bytelevel.native"))
    built = {"tiktoken", "gpt2", "tokenizer_json", "native"}
    try:
        import sentencepiece as spm
    except ImportError:
        spm = None
    if spm is not None:
        for kind in ("unigram", "bpe"):
            spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT), model_prefix=str(out / kind), vocab_size=400,
                                           model_type=kind, byte_fallback=kind == "bpe", minloglevel=2)
            tok = nbtok.Tokenizer.from_sentencepiece(out / f"{kind}.model")
            tok.save(str(out / f"{kind}.native"))
            tok.save_huggingface(str(out / f"{kind}.json"))
        built.add("model")
    try:
        wp = _wordpiece_json()
    except ImportError:
        wp = None
    if wp is not None:
        (out / "wordpiece.json").write_text(wp, encoding="utf-8")
        nbtok.Tokenizer.from_huggingface(out / "wordpiece.json").save(str(out / "wordpiece.native"))
    return sorted(built)


def _wordpiece_json():
    import tokenizers
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
    t = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    t.normalizer = normalizers.BertNormalizer()
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    t.decoder = decoders.WordPiece()
    t.train_from_iterator(TEXT, trainers.WordPieceTrainer(vocab_size=400, special_tokens=["[UNK]", "[CLS]", "[SEP]"],
                                                          show_progress=False))
    t.post_processor = processors.BertProcessing(("[SEP]", 2), ("[CLS]", 1))
    return t.to_str()


# ------------------------------------------------------------------ mutations
def mutate_bytes(data, rng):
    d = bytearray(data)
    if rng.random() < 0.1:
        return bytes(d[:rng.randrange(len(d) + 1)])  # truncated
    for _ in range(rng.choice([1, 1, 1, 2, 3, 8])):
        if not d:
            break
        p = rng.randrange(len(d))
        op = rng.random()
        if op < 0.6:
            d[p] = rng.randrange(256)
        elif op < 0.8:
            del d[p:p + rng.randint(1, 16)]
        else:
            d[p:p] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(d)


def mutate_lines(data, rng):
    """Line edits of a text format (rank file, merges): a field replaced by an extreme number
    or junk, a line dropped, doubled or moved, a very long line."""
    lines = data.split(b"\n")
    for _ in range(rng.choice([1, 1, 2, 4])):
        i = rng.randrange(len(lines))
        op = rng.random()
        fields = lines[i].split(b" ")
        if op < 0.2 and len(fields) == 2:
            # a valid-looking rank line: another token (base64 of random bytes), or a rank swap
            if rng.random() < 0.5:
                fields[0] = base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))))
            else:
                j = rng.randrange(len(lines))
                other = lines[j].split(b" ")
                if len(other) == 2:
                    fields[1], other[1] = other[1], fields[1]
                    lines[j] = b" ".join(other)
            lines[i] = b" ".join(fields)
        elif op < 0.45:
            fields[rng.randrange(len(fields))] = rng.choice(NUMBERS + [b"=", b"\xff\xfe", b"a" * 5000])
            lines[i] = b" ".join(fields)
        elif op < 0.6:
            del lines[i]
        elif op < 0.75:
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif op < 0.9:
            lines.insert(rng.randrange(len(lines) + 1), lines.pop(i))
        else:
            lines[i] = lines[i] + b" " + lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def _json_paths(obj, rng, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _json_paths(v, rng, prefix + (k,))
    elif isinstance(obj, list):
        picks = list(range(min(len(obj), 3))) + ([rng.randrange(len(obj))] if len(obj) > 3 else [])
        for i in picks:
            yield from _json_paths(obj[i], rng, prefix + (i,))


def mutate_json(obj, rng):
    """1-3 values of a JSON document replaced (by ``VALUES``) or removed."""
    obj = copy.deepcopy(obj)
    for _ in range(rng.choice([1, 1, 2, 3])):
        paths = list(_json_paths(obj, rng))[1:]
        if not paths:
            break
        where = rng.choice(paths)
        parent = obj
        for key in where[:-1]:
            parent = parent[key]
        if rng.random() < 0.7:
            parent[where[-1]] = copy.deepcopy(rng.choice(VALUES))
        elif isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent.pop(where[-1])
    return obj


def mutate_native(data, rng):
    """An npz with one member edited: an array's values, dtype or shape, or the JSON header;
    a fifth of the cases are raw byte edits of the whole file (mostly CRC refusals)."""
    import numpy as np
    if rng.random() < 0.2:
        return mutate_bytes(data, rng)
    src = zipfile.ZipFile(io.BytesIO(data))
    names = src.namelist()
    victim = rng.choice(names)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in names:
            raw = src.read(name)
            if name == victim:
                if name.endswith(".npy"):
                    raw = _edit_array(np.load(io.BytesIO(raw), allow_pickle=False), rng)
                else:
                    try:
                        raw = json.dumps(mutate_json(json.loads(raw), rng)).encode()
                    except ValueError:
                        raw = mutate_bytes(raw, rng)
            dst.writestr(name, raw)
    return out.getvalue()


def _edit_array(a, rng):
    import numpy as np
    op = rng.random()
    if a.size and op < 0.5:
        a = a.copy()
        flat = a.reshape(-1)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(flat.size)
            if flat.dtype.kind in "iu":
                info = np.iinfo(flat.dtype)
                flat[i] = rng.choice([info.min, info.max, 0, -1 if info.min < 0 else 1, rng.randrange(1 << 7)])
            elif flat.dtype.kind == "f":
                flat[i] = rng.choice([np.nan, np.inf, -np.inf, 1e30, -1e30])
            else:
                flat[i] = not flat[i]
    elif op < 0.65:
        a = a.astype(rng.choice([np.uint8, np.int32, np.int64, np.float32, np.float64, np.int16]))
    elif op < 0.8:
        a = a[:rng.randrange(a.shape[0] + 1)] if a.ndim else a
    elif op < 0.9:
        a = np.concatenate([a.reshape(-1), a.reshape(-1)[:rng.randint(1, 9)]]) if a.size else a
    else:
        a = a.reshape(1, -1) if a.ndim == 1 else a.reshape(-1)
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def make_case(fmt, bases, rng, work, name=None):
    """Write one damaged file (or pair) of ``fmt`` into ``work``; returns a loader callable.
    ``rng=None``: the valid file ``name`` (or the format's first) as it is, to warm up."""
    import nbtok
    bases = Path(bases)

    def pick(names):
        return rng.choice(names) if rng is not None else (name if name in names else names[0])
    if fmt == "model":
        path = work / "m.model"
        data = (bases / pick(["unigram.model", "bpe.model"])).read_bytes()
        path.write_bytes(mutate_bytes(data, rng) if rng else data)
        return lambda: nbtok.Tokenizer.from_sentencepiece(path)
    if fmt == "tiktoken":
        data = (bases / "base.tiktoken").read_bytes()
        path = work / "m.tiktoken"
        if rng:
            data = mutate_lines(data, rng) if rng.random() < 0.6 else mutate_bytes(data, rng)
        path.write_bytes(data)
        return lambda: nbtok.Tokenizer.from_tiktoken(path, pattern="gpt2",
                                                     cache=False)
    if fmt == "gpt2":
        vocab, merges = (bases / "vocab.json").read_bytes(), (bases / "merges.txt").read_bytes()
        op = rng.random() if rng else None
        if op is None:
            pass
        elif op < 0.4:
            vocab = json.dumps(mutate_json(json.loads(vocab), rng)).encode()
        elif op < 0.55:
            vocab = mutate_bytes(vocab, rng)
        elif op < 0.85:
            merges = mutate_lines(merges, rng)
        else:
            merges = mutate_bytes(merges, rng)
        (work / "vocab.json").write_bytes(vocab)
        (work / "merges.txt").write_bytes(merges)
        return lambda: nbtok.Tokenizer.from_gpt2(work / "vocab.json", work / "merges.txt")
    if fmt == "tokenizer_json":
        data = (bases / pick(json_bases(bases))).read_bytes()
        path = work / "t.json"
        if rng:
            data = (json.dumps(mutate_json(json.loads(data), rng)).encode() if rng.random() < 0.85
                    else mutate_bytes(data, rng))
        path.write_bytes(data)
        return lambda: nbtok.Tokenizer.from_huggingface(path)
    if fmt == "native":
        path = work / "m.native"
        data = (bases / pick(native_bases(bases))).read_bytes()
        path.write_bytes(mutate_native(data, rng) if rng else data)
        return lambda: nbtok.Tokenizer.load(path)
    raise ValueError(f"unknown format {fmt!r}")


def json_bases(bases):
    return [p.name for p in sorted(Path(bases).glob("*.json")) if p.name != "vocab.json"]


def native_bases(bases):
    return [p.name for p in sorted(Path(bases).glob("*.native"))]


REFUSALS = (ValueError, NotImplementedError)


def exercise(tok):
    """Encode, decode and batch a few texts; a call may refuse (e.g. a disallowed special token
    in a probe), and the next one runs anyway."""
    calls = [lambda t=t: tok.decode(tok.encode(t)) for t in PROBES]
    calls += [lambda: tok.encode_batch(TEXT[:6]), lambda: tok.encode_batch(TEXT[:4], return_offsets=True, padding=True)]
    for call in calls:
        try:
            call()
        except REFUSALS:
            pass


def run_case(fmt, bases, seed, work):
    """One case: ``"refused"`` or ``"loaded"``; any other exception propagates."""
    rng = random.Random(f"{fmt}/{seed}")
    load = make_case(fmt, bases, rng, work)
    try:
        tok = load()
    except REFUSALS:
        return "refused"
    exercise(tok)
    return "loaded"


# ------------------------------------------------------------------ worker and parent
def worker(fmt, bases, start, stop, work):
    """Run cases ``start..stop-1``, printing ``start <i>`` and ``done <i> <outcome>`` for each."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    # warm: load (or compile) the kernels before the clock of the first case starts
    names = {"model": ["unigram.model", "bpe.model"], "tokenizer_json": json_bases(bases),
             "native": native_bases(bases)}.get(fmt, [None])
    for name in names:
        exercise(make_case(fmt, bases, None, work, name)())
    print("ready", flush=True)
    for i in range(start, stop):
        print(f"start {i}", flush=True)
        try:
            outcome = run_case(fmt, bases, i, work)
        except Exception as e:  # noqa: BLE001 -- the point is to report it
            outcome = "error " + json.dumps(f"{type(e).__name__}: {e}"[:300])
        print(f"done {i} {outcome}", flush=True)


def run_format(fmt, bases, cases, work, timeout=60.0, ready_timeout=900.0):
    """Run ``cases`` cases of ``fmt`` in worker processes; returns the counts and the seeds of
    every case that was not a clean refusal or load."""
    result = {"cases": cases, "refused": 0, "loaded": 0, "errors": [], "crashes": [], "hangs": []}
    env = dict(os.environ, NBTOK_QUIET="1", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nxt = 0
    while nxt < cases:
        p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", fmt, str(bases), str(nxt),
                              str(cases), str(work)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                             text=True, bufsize=1)
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        current, deadline = None, time.monotonic() + ready_timeout
        while True:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                p.kill()
                p.wait()
                if current is None:
                    raise RuntimeError(f"fuzz worker for {fmt} did not start in {ready_timeout:.0f} s")
                result["hangs"].append(current)
                nxt = current + 1
                break
            line = p.stdout.readline()
            if not line:  # the worker exited
                code = p.wait()
                if current is not None:
                    result["crashes"].append((current, code))
                    nxt = current + 1
                elif code != 0:
                    raise RuntimeError(f"fuzz worker for {fmt} failed before its first case (exit {code})")
                else:
                    nxt = cases
                break
            word, *rest = line.split(" ", 2)
            if word == "start":
                current, deadline = int(rest[0]), time.monotonic() + timeout
            elif word == "done":
                outcome = rest[1].strip()
                if outcome in ("refused", "loaded"):
                    result[outcome] += 1
                else:
                    result["errors"].append((current, json.loads(outcome.split(" ", 1)[1])))
                current, deadline = None, time.monotonic() + timeout
        sel.close()
        p.stdout.close()
    return result


def main():
    ap = argparse.ArgumentParser(description="seeded fuzzing of every nbtok loader")
    ap.add_argument("--worker", nargs=5, metavar=("FORMAT", "BASES", "START", "STOP", "WORK"), help=argparse.SUPPRESS)
    ap.add_argument("--cases", type=int, default=int(os.environ.get("NBTOK_FUZZ_CASES", "1000")))
    ap.add_argument("--formats", nargs="*", default=FORMATS, choices=FORMATS)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds a case may take")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary directory)")
    args = ap.parse_args()
    if args.worker:
        fmt, bases, start, stop, work = args.worker
        worker(fmt, bases, int(start), int(stop), work)
        return
    import tempfile
    root = Path(args.dir or tempfile.mkdtemp(prefix="nbtok-fuzz-"))
    built = build_bases(root / "bases")
    print("| format | cases | refused | loaded | errors | crashes | hangs | seconds |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    failed = False
    for fmt in args.formats:
        if fmt not in built:
            print(f"| {fmt} | skipped: its reference library is not installed |", flush=True)
            continue
        t0 = time.perf_counter()
        r = run_format(fmt, root / "bases", args.cases, root / f"work-{fmt}", args.timeout)
        print(f"| {fmt} | {r['cases']} | {r['refused']} | {r['loaded']} | {len(r['errors'])} | {len(r['crashes'])} "
              f"| {len(r['hangs'])} | {time.perf_counter() - t0:.0f} |", flush=True)
        for kind, label in (("errors", "error"), ("crashes", "crash (case, exit code)"), ("hangs", "hang")):
            for item in r[kind][:20]:
                print(f"    {fmt} {label}: {item}", flush=True)
        failed |= bool(r["errors"] or r["crashes"] or r["hangs"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
