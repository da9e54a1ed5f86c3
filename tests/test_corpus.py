"""nbtok.corpus: shards equal Tokenizer.encode doc by doc, identical across 1/2 workers, pool and
Dask; Megatron .idx read back by a reader written here from the published layout; resume;
train_bpe_from_counts over 2 Dask workers == train_bpe."""
import gzip
import json
import os

import numpy as np
import pytest

import nbtok
import nbtok.corpus as C

DOCS = [f"Document {i}: the quick brown fox {'jumps ' * (i % 7)}over {i * 37} lazy dogs. "
        f"Привет мир {i}! 日本語のテキスト{i % 5}。 émoji 🙂 x{i}" for i in range(120)] + ["", "  leading", "tab\there"]


@pytest.fixture(scope="module")
def tok():
    return nbtok.get_encoding()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    (d / "a.txt").write_text("\n".join(DOCS[:70]) + "\n", encoding="utf-8")
    with gzip.open(d / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        for t in DOCS[70:]:
            f.write(json.dumps({"text": t}) + "\n")
    return d


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def read_megatron(prefix):
    """Megatron-LM's indexed dataset layout, read from the published format."""
    with open(prefix + ".idx", "rb") as f:
        raw = f.read()
    assert raw[:9] == b"MMIDIDX\x00\x00"
    version, = np.frombuffer(raw, "<u8", 1, 9)
    assert version == 1
    code = raw[17]
    dtype = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32,
             8: np.uint16}[code]
    n_seq, n_doc = np.frombuffer(raw, "<u8", 2, 18)
    pos = 34
    lengths = np.frombuffer(raw, "<i4", n_seq, pos)
    pos += 4 * n_seq
    pointers = np.frombuffer(raw, "<i8", n_seq, pos)
    pos += 8 * n_seq
    doc_idx = np.frombuffer(raw, "<i8", n_doc, pos)
    assert pos + 8 * n_doc == len(raw)
    assert np.array_equal(doc_idx, np.arange(n_seq + 1))
    data = np.memmap(prefix + ".bin", dtype=dtype, mode="r") if os.path.getsize(prefix + ".bin") else np.zeros(0, dtype)
    item = np.dtype(dtype).itemsize
    return [np.asarray(data[p // item: p // item + n]) for p, n in zip(pointers.tolist(), lengths.tolist())]


def read_docs(out, fmt, n_shards):
    docs = []
    for i in range(n_shards):
        prefix = os.path.join(out, f"shard_{i:05d}")
        if fmt == "megatron":
            docs += read_megatron(prefix)
        elif fmt == "numpy":
            ids, off = np.load(prefix + ".ids.npy"), np.load(prefix + ".offsets.npy")
            docs += [ids[a:b] for a, b in zip(off[:-1], off[1:])]
        else:
            ids = np.fromfile(prefix + ".ds", "<u2")
            ends = np.fromfile(prefix + ".ds.index", "<u8").astype(np.int64)
            starts = np.concatenate([[0], ends[:-1]]).astype(np.int64)
            docs += [ids[a:b] for a, b in zip(starts, ends)]
    return docs


def shard_bytes(out):
    return {f: open(os.path.join(out, f), "rb").read() for f in sorted(os.listdir(out))
            if not f.endswith(".json")}


def inputs(corpus):
    return [str(corpus / "a.txt"), str(corpus / "b.jsonl.gz")]


@pytest.mark.parametrize("fmt", ["megatron", "numpy", "datatrove"])
def test_shards_equal_encode(tmp_path, corpus, tok, fmt):
    out = str(tmp_path / "out")
    man = C.tokenize(inputs(corpus), tok, out, format=fmt, shard_size=16, eos="<|endoftext|>")
    got = read_docs(out, fmt, len(man["shards"]))
    assert len(got) == len(DOCS)
    for d, g in zip(DOCS, got):
        assert g.tolist() == tok.encode(d).tolist() + [50256]
    assert man["totals"]["documents"] == len(DOCS)


def test_bos_eos_and_one_shard(tmp_path, corpus, tok):
    out = str(tmp_path / "o")
    C.tokenize(str(corpus / "a.txt"), tok, out, format="numpy", bos=50256, eos=50256, shard_size=1000)
    got = read_docs(out, "numpy", 1)
    assert [g.tolist() for g in got] == [[50256] + tok.encode(d).tolist() + [50256] for d in DOCS[:70]]


def test_workers_pool_and_dask_identical(tmp_path, corpus, tok, client):
    runs = {}
    for name, kw in {"one": {}, "pool2": {"num_workers": 2}, "dask": {"client": client}}.items():
        out = str(tmp_path / name)
        C.tokenize(inputs(corpus), tok, out, shard_size=16, eos="<|endoftext|>", **kw)
        runs[name] = shard_bytes(out)
    assert runs["one"] == runs["pool2"] == runs["dask"]
    assert len(runs["one"]) == 2 * (5 + 4)  # 70 and 53 documents in shards of 16


def test_resume_after_interrupted_run(tmp_path, corpus, tok):
    out = str(tmp_path / "r")
    C.tokenize(inputs(corpus), tok, out, shard_size=16)
    before = shard_bytes(out)
    # what a kill mid-run leaves: a shard with no done record and a truncated data file
    os.remove(os.path.join(out, "shard_00003.done.json"))
    with open(os.path.join(out, "shard_00003.bin"), "r+b") as f:
        f.truncate(3)
    man = C.tokenize(inputs(corpus), tok, out, shard_size=16)
    assert shard_bytes(out) == before
    assert man["totals"]["documents"] == len(DOCS)
    with pytest.raises(ValueError, match="another run"):
        C.tokenize(inputs(corpus), tok, out, shard_size=8)


def test_counts_on_dask_train_equal(tmp_path, corpus, client):
    counts = C.count(inputs(corpus), shard_size=16, client=client, special_tokens=["<|endoftext|>"])
    path = str(tmp_path / "c.npz")
    counts.save(path)
    loaded = C.PretokenCounts.load(path)
    assert loaded.as_dict() == counts.as_dict()
    for tie in ("greatest_bytes", "hf"):
        a = nbtok.train_bpe_from_counts(loaded, 420, tie_break=tie, progress=False)
        b = nbtok.train_bpe(iter(DOCS), 420, special_tokens=["<|endoftext|>"], tie_break=tie, progress=False)
        assert a.merges == b.merges and a.vocab == b.vocab
    pool = C.count(inputs(corpus), shard_size=16, num_workers=2, special_tokens=["<|endoftext|>"])
    assert pool.as_dict() == counts.as_dict()


def test_bad_input(tmp_path, corpus, tok):
    with pytest.raises(FileNotFoundError):
        C.tokenize(str(tmp_path / "missing.txt"), tok, str(tmp_path / "o"))
    with pytest.raises(ValueError, match="format"):
        C.tokenize(inputs(corpus), tok, str(tmp_path / "o"), format="arrow")
    with pytest.raises(ValueError, match="eos"):
        C.tokenize(inputs(corpus), tok, str(tmp_path / "o"), eos="<nope>")
    with pytest.raises(ValueError, match="shard_size"):
        C.tokenize(inputs(corpus), tok, str(tmp_path / "o"), shard_size=0)
    with pytest.raises(TypeError):
        nbtok.train_bpe_from_counts({"a": 1}, 300)


def test_counts_file_is_checked_where_it_enters(tmp_path):
    from nbtok.corpus import PretokenCounts
    good = PretokenCounts.from_dict({b"a": 2, b" b": 1}, "gpt2", ())
    good.save(tmp_path / "c.npz")
    assert PretokenCounts.load(tmp_path / "c.npz").as_dict() == good.as_dict()
    np.savez(tmp_path / "cast.npz", wbytes=good.wbytes.astype(np.int64), woff=good.woff, wcount=good.wcount,
             meta=np.frombuffer(b'{"pattern": "gpt2", "special_tokens": []}', np.uint8))
    with pytest.raises(ValueError, match="wbytes must be a 1-D uint8 array"):
        PretokenCounts.load(tmp_path / "cast.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a pre-token counts file"):
        PretokenCounts.load(tmp_path / "junk.npz")


def _big_corpus(path, n_docs=6000):
    path.write_text("\n".join(DOCS[i % len(DOCS)] + f" #{i}" for i in range(n_docs)) + "\n", encoding="utf-8")
    return [str(path)]


def _wait_for_some_shards(out, total, timeout=300):
    """Block until at least one shard and not all of them are done; False if the run was too fast."""
    import time
    t0 = time.time()
    while time.time() - t0 < timeout:
        done = len([f for f in os.listdir(out) if f.endswith(".done.json")]) if os.path.isdir(out) else 0
        if 0 < done < total:
            return True
        if done >= total:
            return False
        time.sleep(0.005)
    return False


def test_killing_a_dask_worker_mid_run_gives_the_same_files(tmp_path, tok, client):
    """A worker process killed (SIGKILL) while the run goes on: Dask reruns its tasks on a worker
    that lives, and the shards equal those of a run nobody killed."""
    import signal
    import threading
    src = _big_corpus(tmp_path / "big.txt")
    clean = str(tmp_path / "clean")
    C.tokenize(src, tok, clean, shard_size=20)
    total = len([f for f in os.listdir(clean) if f.endswith(".done.json")])
    out = str(tmp_path / "killed")
    result = {}
    run = threading.Thread(target=lambda: result.setdefault("man", C.tokenize(src, tok, out, shard_size=20, client=client)))
    run.start()
    assert _wait_for_some_shards(out, total), "the run ended before a worker could be killed"
    pids = client.run(os.getpid)
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    run.join(600)
    assert not run.is_alive() and "man" in result
    client.wait_for_workers(2, timeout=120)
    assert shard_bytes(out) == shard_bytes(clean)  # (a killed writer's temporary is removed too)


def test_a_finished_run_removes_temporaries_of_killed_writers(tmp_path, corpus, tok):
    out = tmp_path / "t"
    C.tokenize(inputs(corpus), tok, str(out), shard_size=16)
    stale = [out / ".shard_00001.bin.0123abcd.tmp", out / ".manifest.json.89abcdef.tmp"]
    keep = out / ".notes.tmp"
    for p in stale + [keep]:
        p.write_bytes(b"half a file")
    C.tokenize(inputs(corpus), tok, str(out), shard_size=16)
    assert not any(p.exists() for p in stale) and keep.exists()


def test_killing_a_pool_run_and_rerunning_gives_the_same_files(tmp_path, tok):
    """The whole process-pool run (parent and workers) killed mid-run, then the same call again:
    finished shards are kept, the others written, and the files equal an uninterrupted run's."""
    import signal
    import subprocess
    import sys
    src = _big_corpus(tmp_path / "big.txt")
    clean = str(tmp_path / "clean")
    C.tokenize(src, tok, clean, shard_size=20)
    total = len([f for f in os.listdir(clean) if f.endswith(".done.json")])
    out = str(tmp_path / "killed")
    code = ("import nbtok, nbtok.corpus as C, sys\n"
            f"C.tokenize({src!r}, nbtok.get_encoding(), {out!r}, shard_size=20, num_workers=2)\n")
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    try:
        assert _wait_for_some_shards(out, total), "the run ended before it could be killed"
        os.killpg(child.pid, signal.SIGKILL)
    finally:
        child.wait(60)
    assert len([f for f in os.listdir(out) if f.endswith(".done.json")]) < total
    C.tokenize(src, tok, out, shard_size=20, num_workers=2)
    assert shard_bytes(out) == shard_bytes(clean)


@pytest.mark.parametrize("every", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("ending", ["\n", ""])
def test_shards_read_their_own_lines(tmp_path, every, ending):
    """Each shard reads only its byte range (found in one pass), and the shards' documents,
    in order, are the file's lines: plain and gzip, empty lines, no trailing newline, text that
    is not UTF-8, and JSON lines with blank lines between them."""
    from nbtok.corpus.shards import plan_shards, shard_documents
    lines = ["", "a", "Привет", "", "日本語 🙂", "x" * 5000, "\udcff raw", "", "last"]
    raw = ("\n".join(lines) + ending).encode("utf-8", "surrogateescape")
    (tmp_path / "t.txt").write_bytes(raw)
    with gzip.open(tmp_path / "t.txt.gz", "wb") as f:
        f.write(raw)
    compressed = [("t.txt.gz", "lines")]
    try:
        import zstandard
        (tmp_path / "t.txt.zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
        compressed.append(("t.txt.zst", "lines"))
    except ImportError:
        pass
    docs = [json.dumps({"text": t}) if t else "  " for t in lines[:-1] if "\udcff" not in t]
    (tmp_path / "t.jsonl").write_text("\n".join(docs) + ending, encoding="utf-8")
    want = raw.decode("utf-8", "surrogateescape").split("\n")
    if ending:
        want = want[:-1]
    for name, kind, expect in [("t.txt", "lines", want)] + [(c, k, want) for c, k in compressed] + \
            [("t.jsonl", "jsonl", [t for t in lines[:-1] if t and "\udcff" not in t])]:
        specs = plan_shards([(str(tmp_path / name), kind)], every, "text")
        got = [d for s in specs for d in shard_documents(s, "text")]
        assert got == expect, name
        assert [s["start"] for s in specs] == list(range(0, len(want if kind == "lines" else docs), every))
    (tmp_path / "e.txt").write_bytes(b"")
    assert plan_shards([(str(tmp_path / "e.txt"), "lines")], every, "text") == []


def test_bad_json_line_is_named_by_its_line_number(tmp_path):
    from nbtok.corpus.shards import plan_shards, shard_documents
    (tmp_path / "t.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n\n{"text": \n', encoding="utf-8")
    specs = plan_shards([(str(tmp_path / "t.jsonl"), "jsonl")], 2, "text")
    assert list(shard_documents(specs[0], "text")) == ["a", "b"]
    with pytest.raises(ValueError, match=r"t\.jsonl:4: not JSON"):
        list(shard_documents(specs[1], "text"))
