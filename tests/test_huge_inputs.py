"""Huge inputs (issue 23): a long document's scratch is bounded, not ~56 bytes per input byte.

A document over ``LONG_TEXT`` bytes pre-tokenizes in windows of ``ENDS_WINDOW`` pre-tokens and
sizes its merge scratch by its longest pre-token. Checked in a subprocess whose address space
is capped (``RLIMIT_AS``) a little above what it uses once warm: a 12 MB text fits in 400 MB
more (it used to reserve 670 MB), with tiktoken's ids; and an allocation that fails inside the
parallel batch kernel raises ``MemoryError`` (it was a ``SystemError``, or a silent empty row).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import nbtok
from nbtok.models.bpe import bytelevel as K
from reference import tiktoken_gpt2_ranks_with

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "text"

CHILD = r'''
import json, resource, sys
import numpy as np
import nbtok
task, path, allowance = sys.argv[1], sys.argv[2], int(sys.argv[3])
tok = nbtok.get_encoding("gpt2")
text = open(path, encoding="utf-8").read()
# warm: load (or compile) every kernel the capped calls reach, outside the cap
tok.encode(text[:3_000_000], allowed_special="all")
tok.encode_batch_ragged([text[:3_000_000], "hi"], allowed_special="all")
big = ("a" * (64 << 20)) if task == "letters" else text
def vm_size():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm_size() + allowance, resource.RLIM_INFINITY))
if task == "letters":
    try:
        tok.encode_batch_ragged([big, "hi"])
        print(json.dumps({"raised": None}))
    except BaseException as e:
        print(json.dumps({"raised": type(e).__name__, "message": str(e)}))
    sys.exit(0)
one = tok.encode(big, allowed_special="all")
ids, offsets = tok.encode_batch_ragged([big, "hi"], allowed_special="all")
np.save(sys.argv[4], one)
np.save(sys.argv[5], ids[offsets[0]:offsets[1]])
'''


def big_text(tmp_path, mb=12):
    """English with a special token every ~1 MB and some long runs: > ENDS_WINDOW pre-tokens."""
    base = (DATA / "udhr_eng.txt").read_text(encoding="utf-8")
    parts, size = [], 0
    while size < mb * 1_000_000:
        parts.append(base)
        size += len(base)
        if len(parts) % 80 == 0:
            parts.append("<|endoftext|>" + "x" * 5000 + " " * 3000)
    path = tmp_path / "big.txt"
    path.write_text("".join(parts), encoding="utf-8")
    return path


def run_child(task, path, allowance, *outputs):
    env = dict(os.environ, NBTOK_QUIET="1", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", CHILD, task, str(path), str(allowance), *map(str, outputs)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_long_text_encodes_in_bounded_memory(tmp_path):
    """12 MB: the old scratch (56 bytes per byte reserved up front) did not fit in 400 MB."""
    path = big_text(tmp_path)
    run_child("english", path, 400 << 20, tmp_path / "one.npy", tmp_path / "batch.npy")
    one, batch = np.load(tmp_path / "one.npy"), np.load(tmp_path / "batch.npy")
    assert np.array_equal(one, batch)
    ref = tiktoken_gpt2_ranks_with("gpt2")
    assert one.tolist() == ref.encode(path.read_text(encoding="utf-8"), allowed_special="all")


def test_memory_error_inside_the_batch_kernel_is_a_memory_error(tmp_path):
    """A 64 MB pre-token needs ~4 GB of merge scratch, allocated inside the prange loop."""
    out = json.loads(run_child("letters", DATA / "udhr_eng.txt", 1 << 30).strip().splitlines()[-1])
    assert out["raised"] == "MemoryError", out


def test_windowed_pretokens_give_the_same_ids():
    """Just over LONG_TEXT, with specials, long runs and more than ENDS_WINDOW pre-tokens:
    ``encode``, ``encode_batch_ragged`` and a text under the limit agree with tiktoken."""
    ref = tiktoken_gpt2_ranks_with("gpt2")
    tok = nbtok.get_encoding("gpt2")
    base = (DATA / "udhr_eng.txt").read_text(encoding="utf-8") + (DATA / "udhr_jpn.txt").read_text(encoding="utf-8")
    text = ""
    while len(text.encode()) <= K.LONG_TEXT + 1000:
        text += base + "<|endoftext|>" + "\U0001F642" * 700 + "  \n\n " + "9" * 999
    assert len(text) // 2 > K.ENDS_WINDOW
    want = ref.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special="all").tolist() == want
    ids, offsets = tok.encode_batch_ragged(["x", text, "y " * 10], allowed_special="all")
    assert ids[offsets[1]:offsets[2]].tolist() == want
