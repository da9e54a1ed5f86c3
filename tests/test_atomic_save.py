"""Atomic saves (issue 23, item 2): a save that fails part way leaves the old files byte for
byte as they were (still loadable) and no temporary behind, for every writer of nbtok.

Three failures: an exception after a partial write (``io.open`` patched so that the first write
to a file opened for writing stores half its data, then raises ``OSError(ENOSPC)``); a real
one, ``RLIMIT_FSIZE`` set to half the file's size in a subprocess (SIGXFSZ ignored, so the
write fails with ``EFBIG``); SIGKILL at random points of a subprocess saving over and over.
Models come from committed data only.

Run as a script (``python test_atomic_save.py DIR CASE...`` or ``--save-forever PATH``) it is
those subprocesses.
"""
import builtins
import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nbtok
from nbtok.corpus.counts import PretokenCounts
from nbtok.corpus.writers import shard_files, write_shard
from nbtok.formats.huggingface import to_huggingface_json, tokenizer_from_config
from nbtok.formats._atomic import atomic_files, write_atomic
from nbtok.formats.sentencepiece_model import tokenizer_from_proto
from nbtok.warmup import _spm_proto


def _gpt2():
    return nbtok.get_encoding("gpt2")


def _spm():
    return tokenizer_from_proto(_spm_proto(1))


def _hf():
    return tokenizer_from_config(to_huggingface_json(_spm().model))


def _shard(d):
    ids = np.arange(5000, dtype=np.int32) % 300
    write_shard("megatron", str(d / "shard"), ids, np.array([0, 2000, 5000], np.int64), 300)


def _counts(d):
    counts = PretokenCounts.from_dict({b"hello": 3, b" world": 2, b"x" * 4000: 1}, "gpt2", {})
    counts.save(d / "counts.npz")


# case -> (files it writes, save(directory), load(directory) or None)
CASES = {
    "native-bytelevel": (["m.nbtok"], lambda d: _gpt2().save(d / "m.nbtok"),
                         lambda d: nbtok.Tokenizer.load(d / "m.nbtok")),
    "native-sentencepiece": (["m.nbtok"], lambda d: _spm().save(d / "m.nbtok"),
                             lambda d: nbtok.Tokenizer.load(d / "m.nbtok")),
    "native-huggingface": (["m.nbtok"], lambda d: _hf().save(d / "m.nbtok"),
                           lambda d: nbtok.Tokenizer.load(d / "m.nbtok")),
    "save_sentencepiece": (["m.model"], lambda d: _spm().save_sentencepiece(d / "m.model"),
                           lambda d: nbtok.Tokenizer.from_sentencepiece(d / "m.model")),
    "save_huggingface-bytelevel": (["t.json"], lambda d: _gpt2().save_huggingface(d / "t.json"),
                                   lambda d: nbtok.Tokenizer.from_huggingface(d / "t.json")),
    "save_huggingface-sentencepiece": (["t.json"], lambda d: _spm().save_huggingface(d / "t.json"),
                                       lambda d: nbtok.Tokenizer.from_huggingface(d / "t.json")),
    "save_huggingface-huggingface": (["t.json"], lambda d: _hf().save_huggingface(d / "t.json"),
                                     lambda d: nbtok.Tokenizer.from_huggingface(d / "t.json")),
    "save_tiktoken": (["r.tiktoken"], lambda d: _gpt2().save_tiktoken(d / "r.tiktoken"),
                      lambda d: nbtok.Tokenizer.from_tiktoken(d / "r.tiktoken", pattern="gpt2", cache=False)),
    "save_gpt2": (["vocab.json", "merges.txt"],
                  lambda d: _gpt2().save_gpt2(d / "vocab.json", d / "merges.txt"),
                  lambda d: nbtok.Tokenizer.from_gpt2(d / "vocab.json", d / "merges.txt")),
    "corpus-shard": ([os.path.basename(f) for f in shard_files("megatron", "shard")], _shard, None),
    "pretoken-counts": (["counts.npz"], _counts, lambda d: PretokenCounts.load(d / "counts.npz")),
}


def _snapshot(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _old_files(case, d):
    """Save ``case`` normally into ``d``; returns the files' bytes."""
    names, save, load = CASES[case]
    save(d)
    assert sorted(p.name for p in d.iterdir()) == sorted(names)
    return _snapshot(d)


def _assert_unchanged(case, d, old):
    """The old files are there byte for byte, nothing else is, and they still load."""
    assert _snapshot(d) == old, "a failed save changed the old file(s) or left a temporary behind"
    load = CASES[case][2]
    if load is not None:
        load(d)


class _HalfThenFail:
    """A file whose first write stores half its data and then raises (a disk filling up)."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        self._f.write(data[:len(data) // 2])
        self._f.flush()
        raise OSError(errno.ENOSPC, "injected: no space left after a partial write")

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _fail_writes_under(monkeypatch, directory):
    """Make every file opened for writing below ``directory`` (or by descriptor) a
    ``_HalfThenFail``: ``io.open`` serves ``open``, ``Path.open`` / ``write_*`` and ``os.fdopen``."""
    real_open = io.open
    prefix = str(directory)

    def failing_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        writing = any(c in mode for c in "wax+")
        ours = isinstance(file, int) or os.fspath(file).startswith(prefix)
        return _HalfThenFail(f) if writing and ours else f

    monkeypatch.setattr(io, "open", failing_open)
    monkeypatch.setattr(builtins, "open", failing_open)


@pytest.mark.parametrize("case", list(CASES))
def test_save_failing_midway_leaves_old_files(case, tmp_path, monkeypatch):
    old = _old_files(case, tmp_path)
    save = CASES[case][1]
    with monkeypatch.context() as m:
        _fail_writes_under(m, tmp_path)
        with pytest.raises(OSError):
            save(tmp_path)
    _assert_unchanged(case, tmp_path, old)


def test_save_under_rlimit_fsize_leaves_old_files(tmp_path):
    """A real partial write: the file size limit (half of each old file) makes the save fail."""
    pytest.importorskip("resource")
    dirs = {}
    for case in CASES:
        dirs[case] = tmp_path / case
        dirs[case].mkdir()
    olds = {case: _old_files(case, d) for case, d in dirs.items()}
    proc = subprocess.run([sys.executable, __file__, str(tmp_path), *CASES], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = dict(line.split("\t") for line in proc.stdout.splitlines() if "\t" in line)
    for case, d in dirs.items():
        assert results.get(case, "").startswith("OSError"), (case, results.get(case), proc.stderr[-2000:])
        _assert_unchanged(case, d, olds[case])


def _save_under_file_size_limit(root, cases):
    """(subprocess) each case saved again with RLIMIT_FSIZE at half its smallest old file."""
    import resource
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    for case in cases:
        d = Path(root) / case
        limit = min(p.stat().st_size for p in d.iterdir()) // 2
        save = CASES[case][1]
        _gpt2(), _spm(), _hf()  # build (and cache) the models before the limit
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        try:
            save(d)
            outcome = "saved"
        except OSError as e:
            outcome = f"OSError errno={e.errno}"
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        print(f"{case}\t{outcome}", flush=True)


def test_save_killed_at_random_points_leaves_a_whole_file(tmp_path):
    """SIGKILL while a child saves over and over (two models in turn): the file left is always
    one of them, whole, and loads; only a ``.m.nbtok.*.tmp`` may stay behind."""
    import random
    import signal
    import time
    path = tmp_path / "m.nbtok"
    _gpt2().save(path)
    probe = "Hello world, killed saves leave a whole file."
    expected = {tuple(_gpt2().encode(probe).tolist()), tuple(_spm().encode(probe).tolist())}
    rng = random.Random(5)
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, __file__, "--save-forever", str(path)], stdout=subprocess.PIPE,
                                text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        assert proc.stdout.readline().strip() == "saving"
        time.sleep(rng.uniform(0.05, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        assert tuple(nbtok.Tokenizer.load(path).encode(probe).tolist()) in expected
        for p in tmp_path.iterdir():
            if p != path:
                assert p.name.startswith(".m.nbtok.") and p.name.endswith(".tmp"), p.name
                p.unlink()


def _save_forever(path):
    """(subprocess) save GPT-2 and a SentencePiece model to ``path`` in turn until killed."""
    models = [_gpt2(), _spm()]
    print("saving", flush=True)
    i = 0
    while True:
        models[i % 2].save(path)
        i += 1


# ---------------------------------------------------------------------------------------------
# the helper itself

def test_atomic_files_replace_all_or_none(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")
    b.write_text("old b")
    os.chmod(a, 0o640)
    with pytest.raises(RuntimeError):
        with atomic_files(a, b, text=True) as (fa, fb):
            fa.write("new a")
            fb.write("new b")
            raise RuntimeError("serializer failed after writing both")
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    with atomic_files(a, b, text=True) as (fa, fb):
        fa.write("new a")
        fb.write("new b")
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    assert oct(a.stat().st_mode & 0o777) == oct(0o640)  # the old file's permissions are kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_write_atomic_through_symlink_and_missing_directory(tmp_path):
    real = tmp_path / "real.bin"
    real.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(real)
    write_atomic(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "such" / "dir.bin", b"x")


if __name__ == "__main__":
    if sys.argv[1] == "--save-forever":
        _save_forever(sys.argv[2])
    else:
        _save_under_file_size_limit(sys.argv[1], sys.argv[2:])
