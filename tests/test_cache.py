"""The array cache (nbtok/arraycache.py): a rank file's arrays are read back instead of built,
damaged or stale files are rebuilt, and a missing, unwritable or disabled cache changes
nothing but speed."""
import json
import os
import threading
import time

import numba
import numpy as np
import pytest

import nbtok
from nbtok import arraycache
from nbtok.formats.tiktoken import save_tiktoken_ranks
from nbtok.models.bpe import bytelevel as K
from nbtok.models import bytelevel as B

from test_bytelevel import SAMPLES, fixture_texts

SPECIALS = {"<|endoftext|>": 50256}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("NBTOK_CACHE_DIR", str(path))
    return path


@pytest.fixture(scope="module")
def fresh():
    return nbtok.get_encoding("gpt2", cache=False)


@pytest.fixture
def builds(monkeypatch):
    """How many times a model's arrays were built from ranks."""
    calls = []
    original = B.ByteLevelBPE.from_rank_arrays.__func__

    def counted(cls, *args, **kwargs):
        calls.append(1)
        return original(cls, *args, **kwargs)
    monkeypatch.setattr(B.ByteLevelBPE, "from_rank_arrays", classmethod(counted))
    return calls


def forbid_builds(monkeypatch):
    """Make every kernel that reads ranks or builds a model's arrays raise."""
    from nbtok import vocab
    from nbtok.kernels import hashmap
    from nbtok.formats import rankfile

    def fail(*args, **kwargs):
        raise AssertionError("a build kernel ran")
    from nbtok.models import bytelevel as model, bytelevel_tables
    for module, name in [(rankfile, "parse_rank_lines"), (rankfile, "parse_plain_rank_lines"),
                         (rankfile, "pieces_by_id"), (hashmap, "bytesmap_build"), (hashmap, "intmap_build"),
                         (vocab, "shortmap_build"), (model, "merge_table_from_ranks"),
                         (bytelevel_tables, "byte_pair_table"), (bytelevel_tables, "token_filter"),
                         (K, "new_doc_scratch")]:
        monkeypatch.setattr(module, name, fail)


def files(path, prefix="bytelevel-"):
    """The files in ``path`` (by default the byte-level models', not the Unicode tables')."""
    return sorted(p.name for p in path.iterdir() if p.name.startswith(prefix)) if path.exists() else []


def assert_same_encodings(tok, ref):
    texts = list(fixture_texts().values()) + SAMPLES
    for text in texts:
        assert np.array_equal(tok.encode(text, disallowed_special=()), ref.encode(text, disallowed_special=()))
    a, b = tok.encode_batch_ragged(texts, disallowed_special=()), ref.encode_batch_ragged(texts, disallowed_special=())
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    special = "x<|endoftext|>y"
    assert np.array_equal(tok.encode(special, allowed_special="all"), ref.encode(special, allowed_special="all"))
    assert tok.decode(ref.encode(texts[0], disallowed_special=())) == texts[0]
    assert tok.model.piece_to_id("Ġhello") == ref.model.piece_to_id("Ġhello")


def assert_same_arrays(model, ref):
    """The same arrays of the same numba types (the same compiled kernels)."""
    assert len(model._M) == len(ref._M)
    for a, b in zip(model._M, ref._M):
        assert numba.typeof(a) == numba.typeof(b) and np.array_equal(a, b)


def test_second_load_reads_the_cache(cache, fresh, monkeypatch):
    first = nbtok.get_encoding("gpt2")
    assert len(files(cache)) == 1 and files(cache)[0].endswith(".arrays")
    forbid_builds(monkeypatch)
    second = nbtok.get_encoding("gpt2")
    assert_same_arrays(second.model, fresh.model)
    assert_same_arrays(first.model, fresh.model)
    assert_same_encodings(second, fresh)
    assert second.model.state()["merge_keys"].tolist() == fresh.model.state()["merge_keys"].tolist()


def _rewrite(path, change):
    """Store the file's arrays again, with a valid digest, after ``change(arrays)``."""
    data = path.read_bytes()
    header = json.loads(data[48:48 + int.from_bytes(data[8:16], "little")])
    name = path.name[:-len(".arrays")]
    arrays = {k: v.copy() for k, v in arraycache.load(name, header["key"], str(path.parent)).items()}
    change(arrays)
    assert arraycache.store(name, header["key"], arrays, str(path.parent))


def _flip(offset):
    def corrupt(path):
        data = bytearray(path.read_bytes())
        data[offset if offset >= 0 else len(data) + offset] ^= 0x10
        path.write_bytes(bytes(data))
    return corrupt


def _replace(name, value):
    return lambda path: _rewrite(path, lambda arrays: arrays.__setitem__(name, value(arrays[name])))


CORRUPTIONS = {
    "truncated": lambda path: path.write_bytes(path.read_bytes()[:len(path.read_bytes()) // 2]),
    "header only": lambda path: path.write_bytes(path.read_bytes()[:200]),
    "empty": lambda path: path.write_bytes(b""),
    "not ours": lambda path: path.write_bytes(b"hello" * 1000),
    "flipped magic": _flip(0),
    "flipped digest": _flip(20),
    "flipped header": _flip(60),
    "flipped payload": _flip(5_000_000),
    "flipped last byte": _flip(-1),
    "wrong dtype": _replace("slot_ids", lambda a: a.astype(np.int64)),
    "wrong byte order": _replace("merge_table", lambda a: a.astype(">i8")),
    "wrong ndim": _replace("short_map", lambda a: a.ravel()),
    "wrong shape": _replace("pair_codes", lambda a: a[:1000]),
    "missing array": lambda path: _rewrite(path, lambda arrays: arrays.pop("token_filter")),
    "stale key": lambda path: arraycache.store(path.name[:-len(".arrays")], "another nbtok",
                                              {"x": np.zeros(3)}, str(path.parent)),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_damaged_file_is_rebuilt(cache, fresh, builds, monkeypatch, corruption):
    nbtok.get_encoding("gpt2")
    [name] = files(cache)
    CORRUPTIONS[corruption](cache / name)
    rebuilt = nbtok.get_encoding("gpt2")
    assert len(builds) == 2
    assert_same_arrays(rebuilt.model, fresh.model)
    assert_same_encodings(rebuilt, fresh)
    assert [f for f in files(cache, "") if not f.startswith("unicode")] == [name]  # no temporary file left
    forbid_builds(monkeypatch)
    assert_same_arrays(nbtok.get_encoding("gpt2").model, fresh.model)


def test_unwritable_cache_dir(tmp_path, fresh, builds, monkeypatch):
    (tmp_path / "file").write_text("a file, not a directory")
    monkeypatch.setenv("NBTOK_CACHE_DIR", str(tmp_path / "file" / "cache"))
    assert_same_encodings(nbtok.get_encoding("gpt2"), fresh)
    assert_same_encodings(nbtok.get_encoding("gpt2"), fresh)
    assert len(builds) == 2


def test_read_only_cache_dir(cache, fresh, builds, monkeypatch):
    """A cache that can be read but not written to (root ignores permissions: fail mkstemp)."""
    nbtok.get_encoding("gpt2")
    [name] = files(cache)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "read-only")
    monkeypatch.setattr(arraycache.tempfile, "mkstemp", refuse)
    assert_same_arrays(nbtok.get_encoding("gpt2").model, fresh.model)  # still read
    assert len(builds) == 1
    CORRUPTIONS["flipped payload"](cache / name)
    assert_same_encodings(nbtok.get_encoding("gpt2"), fresh)  # built, not stored
    assert len(builds) == 2 and files(cache) == [name]


def test_failed_write_leaves_no_file(cache, monkeypatch):
    def fail(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(arraycache.os, "replace", fail)
    assert not arraycache.store("x", "key", {"a": np.arange(10)})
    assert files(cache, "") == []


def test_stale_temporaries_are_removed(tmp_path):
    # a writer killed between writing and renaming leaves a temporary file: the next store
    # removes it once it is an hour old, and leaves a fresh one (a writer at work) alone
    stale, fresh_tmp, other = tmp_path / ".tmp-dead.arrays", tmp_path / ".tmp-busy.arrays", tmp_path / ".tmp-x.txt"
    for p in (stale, fresh_tmp, other):
        p.write_bytes(b"partial")
    old = time.time() - arraycache.STALE_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    assert arraycache.store("a", "k", {"x": np.arange(3)}, directory=str(tmp_path))
    assert not stale.exists() and fresh_tmp.exists() and other.exists()
    assert arraycache.load("a", "k", directory=str(tmp_path))["x"].tolist() == [0, 1, 2]


def test_disabled_cache(tmp_path, fresh, builds, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("NBTOK_CACHE_DIR", "")
    assert arraycache.cache_dir() is None
    assert_same_encodings(nbtok.get_encoding("gpt2"), fresh)
    assert len(builds) == 1
    monkeypatch.setenv("NBTOK_CACHE_DIR", str(tmp_path / "cache"))
    assert_same_encodings(nbtok.get_encoding("gpt2", cache=False), fresh)
    path = _gpt2_file(tmp_path)
    builds.clear()
    assert_same_encodings(nbtok.Tokenizer.from_tiktoken(path, special_tokens=SPECIALS, cache=False), fresh)
    assert len(builds) == 1 and files(tmp_path, "") == ["gpt2.tiktoken"]


def test_cache_location(tmp_path, monkeypatch):
    monkeypatch.delenv("NBTOK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert arraycache.cache_dir() == str(tmp_path / "xdg" / "nbtok")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert arraycache.cache_dir() == str(tmp_path / "home" / ".cache" / "nbtok")
    monkeypatch.setenv("NBTOK_CACHE_DIR", str(tmp_path / "mine"))
    assert arraycache.cache_dir() == str(tmp_path / "mine")


def _gpt2_file(tmp_path, drop=(), name="gpt2.tiktoken"):
    ranks = {t: r for t, r in B.bundled_encoding("gpt2", cache=False).ranks.items() if r not in drop}
    path = tmp_path / name
    save_tiktoken_ranks(ranks, path)
    return path


def test_key_follows_content_and_special_tokens(tmp_path, cache, fresh, builds, monkeypatch):
    full = _gpt2_file(tmp_path)
    smaller = _gpt2_file(tmp_path, drop={50255, 31373}, name="smaller.tiktoken")
    builds.clear()
    a = nbtok.Tokenizer.from_tiktoken(full, special_tokens=SPECIALS)
    assert_same_encodings(a, fresh)
    moved = tmp_path / "elsewhere.tiktoken"
    full.rename(moved)  # same content elsewhere: the same file
    nbtok.Tokenizer.from_tiktoken(moved, special_tokens=SPECIALS)
    assert len(builds) == 1 and len(files(cache)) == 1
    # the pattern does not change the arrays: one file serves every pattern
    cl100k = nbtok.Tokenizer.from_tiktoken(moved, pattern="cl100k_base", special_tokens=SPECIALS)
    assert len(builds) == 1
    ref = nbtok.Tokenizer.from_tiktoken(moved, pattern="cl100k_base", special_tokens=SPECIALS, cache=False)
    assert_same_encodings(cl100k, ref)
    # other special tokens, other content: other files
    other = nbtok.Tokenizer.from_tiktoken(moved, special_tokens={"<|endoftext|>": 50256, "<|fim|>": 50257})
    assert other.encode("<|fim|>", allowed_special="all").tolist() == [50257]
    b = nbtok.Tokenizer.from_tiktoken(smaller, pattern="gpt2", special_tokens=SPECIALS)
    assert len(builds) == 4 and len(files(cache)) == 3
    forbid_builds(monkeypatch)
    again = nbtok.Tokenizer.from_tiktoken(smaller, pattern="gpt2", special_tokens=SPECIALS)
    assert_same_arrays(again.model, b.model)
    assert again.model.piece_to_id("hello") == -1 and len(again.model.ranks) == 50255 - 1
    assert_same_encodings(nbtok.Tokenizer.from_tiktoken(moved, special_tokens=SPECIALS), fresh)


def test_bad_rank_file_still_raises(tmp_path, cache):
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(b"aGVsbG8= 0\nnot base64! 1\n")
    for _ in range(2):
        with pytest.raises(ValueError, match="bad.tiktoken:2"):
            nbtok.Tokenizer.from_tiktoken(path)
    assert files(cache) == []


def test_concurrent_readers_see_whole_files(tmp_path):
    """Writers replace the file while a reader loads it: every load is one whole version."""
    versions = [{"a": np.full(100_000, v, np.int64), "b": np.arange(v, v + 10, dtype=np.int32)} for v in range(4)]
    directory = str(tmp_path)
    seen, stop = [], threading.Event()

    def write(v):
        for _ in range(15):
            arraycache.store("x", "key", versions[v], directory)

    def read():
        while not stop.is_set():
            got = arraycache.load("x", "key", directory)
            if got is not None:
                v = int(got["b"][0])
                seen.append(v)
                assert np.array_equal(got["a"], versions[v]["a"]) and np.array_equal(got["b"], versions[v]["b"])
    reader = threading.Thread(target=read)
    reader.start()
    writers = [threading.Thread(target=write, args=(v,)) for v in range(4)]
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    stop.set()
    reader.join()
    assert seen and files(tmp_path, "") == ["x.arrays"]


@pytest.mark.parametrize("caps", [(1, 1, 1), (255, 255, 255), (256, 256, 256), (4096, 4096, 4096),
                                  (70_000, 70_000, 70_000), (1 << 21, 1 << 21, 1 << 21), (1 << 22, 300, 1 << 16),
                                  (1 << 22, 200, 1 << 16)])
def test_doc_scratch_matches_the_kernel(caps):
    """``models.bytelevel._new_doc_scratch`` allocates what ``new_doc_scratch`` does: the same
    numba types (``encode_doc`` is not compiled again), shapes, fills and sharing."""
    ours, kernel = B._new_doc_scratch(*caps), K.new_doc_scratch(*caps)
    assert numba.typeof(ours) == numba.typeof(kernel)

    def leaves(t):
        return [x for item in t for x in (leaves(item) if isinstance(item, tuple) else [item])]
    for a, b in zip(leaves(ours), leaves(kernel)):
        assert a.shape == b.shape and a.dtype == b.dtype
    piece, queue = ours[3], ours[3][5]
    assert (piece[4][:, 0] == -1).all() and (queue[3][:, 1] == -1).all()
    assert not ours[4].any() and not queue[4].any()
    assert np.shares_memory(queue[0], piece[0]) == np.shares_memory(kernel[3][5][0], kernel[3][0])


@pytest.mark.parametrize("flavor", ["regex", "tiktoken", "hf"])
def test_unicode_table_from_the_cache(cache, monkeypatch, flavor):
    from nbtok.pre_tokenizers import unicode_classes as U
    built = U._build_table(flavor)
    for state in ("built", "read", "damaged", "read"):
        if state == "damaged":
            CORRUPTIONS["flipped last byte"](cache / f"unicode-classes-{flavor}.arrays")
        monkeypatch.setattr(U, "_cache", {})
        table = U.load_table(flavor)
        assert np.array_equal(table, built) and not table.flags.writeable and table.dtype == np.uint8
    assert files(cache, "unicode") == [f"unicode-classes-{flavor}.arrays"]
    with pytest.raises(ValueError, match="unknown table flavor"):
        U.load_table("perl")


def test_key_without_home_or_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("NBTOK_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(arraycache.os.path, "expanduser", lambda path: path)
    assert arraycache.cache_dir() is None  # not "~/.cache/nbtok" under the working directory
    key = arraycache.source_key("arraycache.py")
    assert arraycache.source_key("no/such/file.py") != key
    assert arraycache.source_key("no/such/file.py") == arraycache.source_key("no/such/file.py")


@pytest.mark.parametrize("name, row, value", [
    ("slot_ids", None, 10 ** 6), ("short_map", 2, (3 | (10 ** 6 << 8))), ("merge_table", 1, 10 ** 6),
    ("pair_values", None, 10 ** 6), ("pair_codes", None, 60000)])
def test_tables_with_ids_outside_the_vocabulary_are_refused(fresh, name, row, value):
    # a cache file's digest rules out damage; from_tables still checks every id a kernel reads
    tables = {k: v.copy() for k, v in fresh.model.tables().items()}
    a = tables[name]
    if name == "pair_codes" and tables["pair_values"].shape[0] + 2 > value:
        pytest.skip("the byte-pair table is too large for this probe")
    if row is None:
        a[a.argmax()] = value
    else:
        col, free = (0, -1) if name == "merge_table" else (2, 0)  # a used row: key / meta not free
        a[np.flatnonzero(a[:, col] != free)[0], row] = value
    B.ByteLevelBPE.from_tables({k: v.copy() for k, v in fresh.model.tables().items()})  # the originals pass
    with pytest.raises(ValueError, match=name):
        B.ByteLevelBPE.from_tables(tables)
