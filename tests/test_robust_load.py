"""Memory and time bounded by a file's content (issue 23, items 3 and 4).

One edited number must not exhaust memory: a ``.tiktoken`` rank, a ``tokenizer.json`` vocab id
or a GPT-2 ``vocab.json`` id set to 1073741823 used to size dense per-id arrays (12 GB); now the
load refuses ids that sparse (``vocab.check_dense_ids``). A ``.tiktoken`` with one 1 MB token
used to take about 40 minutes (``merge_table_from_ranks`` hashed both parts of every split).

Each hostile load runs in a subprocess (``python test_robust_load.py CASE DIR``) that first
loads the intact file of the same format (so kernels are loaded and caches warm), then the
hostile one under an address-space limit of 1.5 GB above its current size (the old code fails
fast with ``MemoryError`` instead of taking the machine), and reports the outcome, the seconds
and the growth of peak RSS. Files are built from the committed GPT-2 ranks.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nbtok
from nbtok.formats.huggingface import to_huggingface_json

HUGE = 1073741823


def _write_files(d):
    """The intact and hostile files of every case in ``d``: ``{case: (intact, hostile, loader)}``."""
    gpt2 = nbtok.get_encoding("gpt2")
    gpt2.save_tiktoken(d / "gpt2.tiktoken")
    lines = (d / "gpt2.tiktoken").read_bytes().splitlines()
    token, _ = lines[1000].split()
    (d / "big-rank.tiktoken").write_bytes(b"\n".join(lines[:1000] + [token + b" %d" % HUGE] + lines[1001:]) + b"\n")
    import base64
    long_line = base64.b64encode(b"ab" * (1 << 19)) + b" %d" % len(lines)  # a 1 MB token
    (d / "long-token.tiktoken").write_bytes(b"\n".join(lines + [long_line]) + b"\n")

    cfg = to_huggingface_json(gpt2.model)
    (d / "gpt2.json").write_text(json.dumps(cfg), encoding="utf-8")
    vocab = cfg["model"]["vocab"]
    vocab[next(t for t, i in vocab.items() if i == 1000)] = HUGE
    (d / "big-id.json").write_text(json.dumps(cfg), encoding="utf-8")

    wordlevel = {"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
                 "pre_tokenizer": {"type": "Whitespace"}, "decoder": None,
                 "model": {"type": "WordLevel", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "a": 1, "b": 2}}}
    (d / "wordlevel.json").write_text(json.dumps(wordlevel), encoding="utf-8")
    wordlevel["model"]["vocab"]["b"] = HUGE
    (d / "wordlevel-big-id.json").write_text(json.dumps(wordlevel), encoding="utf-8")

    gpt2.save_gpt2(d / "vocab.json", d / "merges.txt")
    vocab = json.loads((d / "vocab.json").read_text(encoding="utf-8"))
    vocab[next(t for t, i in vocab.items() if i == 1000)] = HUGE
    (d / "big-id-vocab.json").write_text(json.dumps(vocab), encoding="utf-8")


def _load(kind, d, name):
    if kind == "tiktoken":
        return nbtok.Tokenizer.from_tiktoken(d / name, pattern="gpt2", cache=False)
    if kind == "tokenizer.json":
        return nbtok.Tokenizer.from_huggingface(d / name)
    return nbtok.Tokenizer.from_gpt2(d / name, d / "merges.txt")


# case -> (loader kind, intact file, hostile file, seconds allowed, what a refusal must say)
SPARSE = (str(HUGE), "entries", "sparsely")
CASES = {
    "tiktoken-rank-1073741823": ("tiktoken", "gpt2.tiktoken", "big-rank.tiktoken", 1.0,
                                 SPARSE + ("big-rank.tiktoken", "50256 entries")),
    "tiktoken-1MB-token": ("tiktoken", "gpt2.tiktoken", "long-token.tiktoken", 2.0, ()),
    "tokenizer.json-id-1073741823": ("tokenizer.json", "gpt2.json", "big-id.json", 1.0, SPARSE + ("BPE vocab",)),
    "wordlevel-id-1073741823": ("tokenizer.json", "wordlevel.json", "wordlevel-big-id.json", 1.0,
                                SPARSE + ("WordLevel vocab", "3 entries")),
    "vocab.json-id-1073741823": ("vocab.json", "vocab.json", "big-id-vocab.json", 1.0, SPARSE),
}
EXTRA_RSS_MB = 100


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    _write_files(d)
    return d


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_file_loads_fast_and_small_or_is_refused(case, files):
    proc = subprocess.run([sys.executable, __file__, case, str(files)], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcome, seconds, extra_mb, message = proc.stdout.rstrip("\n").splitlines()[-1].split("\t")
    assert outcome in ("loaded", "ValueError"), (outcome, message)
    assert float(seconds) < CASES[case][3], f"{case}: {outcome} after {seconds} s"
    assert float(extra_mb) < EXTRA_RSS_MB, f"{case}: peak RSS grew by {extra_mb} MB"
    if outcome == "ValueError":  # the refusal names the id, the entry count and why
        assert all(part in message for part in CASES[case][4]), message


def _measure(case, d):
    """(subprocess) print ``outcome``, seconds, growth of peak RSS in MB and the error message,
    tab-separated, for ``case``."""
    import resource
    import time
    kind, intact, hostile = CASES[case][:3]
    _load(kind, d, intact)
    vm = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (vm + (3 << 29), resource.getrlimit(resource.RLIMIT_AS)[1]))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()   # CPU time: what the load costs, whatever else the machine runs
    message = ""
    try:
        _load(kind, d, hostile)
        outcome = "loaded"
    except Exception as e:  # reported to the test, which decides
        outcome, message = type(e).__name__, " ".join(str(e).split())
    seconds = time.process_time() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{outcome}\t{seconds:.3f}\t{grown:.1f}\t{message}", flush=True)


# ---------------------------------------------------------------------------------------------
# what still loads (nothing hostile in this process, whatever the code under test)

def test_holes_within_the_slack_still_load(files, tmp_path):
    """A rank file with holes (tiktoken's published files skip ids) loads while its ids stay
    within ``2 * entries + ID_SLACK``."""
    from nbtok.vocab import ID_SLACK
    lines = (files / "gpt2.tiktoken").read_bytes().splitlines()
    token, _ = lines[-1].split()
    far = 2 * len(lines) + ID_SLACK - 1
    (tmp_path / "holes.tiktoken").write_bytes(b"\n".join(lines[:-1] + [token + b" %d" % far]) + b"\n")
    tok = _load("tiktoken", tmp_path, "holes.tiktoken")
    assert tok.n_vocab == far + 1
    text = "Hello world, the hostile files are refused."
    assert tok.encode(text).tolist() == nbtok.get_encoding("gpt2").encode(text).tolist()


def test_long_token_encodes_as_one_id(files):
    """A pre-token equal to the 1 MB token is that token (tiktoken's whole-piece rule), and the
    other tokens are unchanged."""
    tok = _load("tiktoken", files, "long-token.tiktoken")
    long_rank = len((files / "gpt2.tiktoken").read_bytes().splitlines())
    assert tok.encode_ordinary("ab" * (1 << 19)).tolist() == [long_rank]
    text = "Hello world, abab the hostile files."
    assert tok.encode_ordinary(text).tolist() == nbtok.get_encoding("gpt2").encode_ordinary(text).tolist()


def test_prefix_hashes_match_hash_bytes():
    """The NumPy hashes of every prefix (``hashbuild.fnv_spans`` keeping the state after each
    byte) are the kernel's ``hash_bytes`` of those prefixes."""
    from nbtok.kernels import hashbuild as hb
    from nbtok.kernels.hashmap import hash_bytes

    data = np.frombuffer(os.urandom(1300), np.uint8)
    cuts = np.array([0, 1, 120, 121, 300, 1300])  # a span past hashbuild.LONG_SPAN goes through fnv_run
    prefixes = hb.fnv_spans(data, cuts[:-1], np.diff(cuts), keep_prefixes=True)[1]
    for s, e in zip(cuts[:-1], cuts[1:]):
        lengths = np.arange(1, e - s + 1)
        assert hb.fnv_finish(prefixes[s:e], lengths).tolist() == [hash_bytes(data, s, s + k) for k in lengths]


if __name__ == "__main__":
    _measure(sys.argv[1], Path(sys.argv[2]))
