"""Fork safety (issue 23, item 1): a child process started after the parent used a model
encodes and batches with the parent's ids, for every model type and for the ``fork`` and
``spawn`` start methods, bounded by a timeout.

Before the fix a forked child of a tokenizer.json model hung on the parent's thread pool
(``pipeline/units.py``) and a forked child of a byte-level or SentencePiece model died of
SIGTERM in GNU OpenMP (``_jit.py``, "Fork safety"). Every model here is built from committed
data (the GPT-2 ranks in ``nbtok/data``, SentencePiece protos and tokenizer.json objects
written below), so the test needs nothing from ``/work/shared``.
"""
import multiprocessing as mp

import numpy as np
import pytest

import nbtok
from nbtok.formats.huggingface import tokenizer_from_config
from nbtok.warmup import _spm_proto

TEXTS = ["Hello world, the testing hello!", "a b c", "", "日本語のテキスト 123",
         "hello " * 300] * 40
TIMEOUT = 240  # s: a cold Numba cache compiles the serial batch kernels in the child

CHARS = "abcdefghijklmnopqrstuvwxyz"
WORDS = ["hello", "world", "the", "a", "##s", "##ing", "test", "[UNK]", ",", "!", "."]


def _json(model, pre, normalizer=None):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": None,
            "decoder": None, "model": model}


def _metaspace():
    return {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}


def _hf_bpe():
    vocab = {c: i for i, c in enumerate(["<unk>", "\u2581"] + list(CHARS))}
    merges = [["h", "e"], ["l", "l"], ["he", "ll"], ["hell", "o"], ["\u2581", "hello"]]
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return _json({"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": merges}, _metaspace())


def _hf_unigram():
    pieces = [["<unk>", 0.0], ["\u2581", -3.0]] + [["\u2581" + w, -2.0] for w in ("hello", "world", "the")]
    pieces += [[c, -5.0] for c in CHARS]
    return _json({"type": "Unigram", "unk_id": 0, "byte_fallback": False, "vocab": pieces}, _metaspace())


def _hf_wordpiece():
    vocab = WORDS + list(CHARS) + ["##" + c for c in CHARS]
    return _json({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {w: i for i, w in enumerate(vocab)}},
                 {"type": "BertPreTokenizer"}, {"type": "Lowercase"})


def _hf_wordlevel():
    return _json({"type": "WordLevel", "unk_token": "[UNK]", "vocab": {w: i for i, w in enumerate(WORDS)}},
                 {"type": "Whitespace"})


def _sentencepiece(tmp_path, model_type):
    path = tmp_path / f"spm{model_type}.model"
    path.write_bytes(_spm_proto(model_type))
    return nbtok.Tokenizer.from_sentencepiece(path)


MODELS = {
    "gpt2": lambda tmp: nbtok.get_encoding("gpt2"),
    "sentencepiece-unigram": lambda tmp: _sentencepiece(tmp, 1),
    "sentencepiece-bpe": lambda tmp: _sentencepiece(tmp, 2),
    "hf-bytelevel-bpe": lambda tmp: tokenizer_from_config(
        nbtok.formats.huggingface.to_huggingface_json(nbtok.get_encoding("gpt2").model)),
    "hf-bpe": lambda tmp: tokenizer_from_config(_hf_bpe()),
    "hf-unigram": lambda tmp: tokenizer_from_config(_hf_unigram()),
    "hf-wordpiece": lambda tmp: tokenizer_from_config(_hf_wordpiece()),
    "hf-wordlevel": lambda tmp: tokenizer_from_config(_hf_wordlevel()),
}


def _ids(tok):
    """(encode ids of each text, encode_batch ids) as plain lists."""
    single = [np.asarray(tok.encode(t)).tolist() for t in TEXTS]
    batch = [np.asarray(row).tolist() for row in tok.encode_batch(TEXTS)]
    return single, batch


def _child(tok, conn):
    conn.send(_ids(tok))
    conn.close()


def _run_child(method, tok):
    ctx = mp.get_context(method)
    parent_end, child_end = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(tok, child_end))
    proc.start()
    child_end.close()
    try:
        if not parent_end.poll(TIMEOUT):
            pytest.fail(f"{method} child gave no result in {TIMEOUT} s (exit code {proc.exitcode})")
        return parent_end.recv()
    except EOFError:
        proc.join(10)
        pytest.fail(f"{method} child died without a result (exit code {proc.exitcode})")
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join()


@pytest.mark.parametrize("method", ["fork", "spawn"])
@pytest.mark.parametrize("name", list(MODELS))
def test_child_after_use_encodes_like_parent(name, method, tmp_path):
    if method not in mp.get_all_start_methods():
        pytest.skip(f"start method {method!r} is not available on this platform")
    tok = MODELS[name](tmp_path)
    expected = _ids(tok)  # the parent uses the model (threads, OpenMP) before the child starts
    single, batch = _run_child(method, tok)
    assert single == expected[0]
    assert batch == expected[1]
    assert batch == single


WARMUP_CHILD = r'''
import os, sys
import numba.core.event as ev
from nbtok.warmup import warmup
from nbtok.models.bpe import bytelevel as K
warmup(["bytelevel"])
twin = K.encode_batch._serial
print("twin compiled" if twin is not None and twin.signatures else "no twin")
compiled = []

class Listener(ev.Listener):
    def on_start(self, event):
        f = getattr((event.data or {}).get("dispatcher"), "py_func", None)
        compiled.append(getattr(f, "__qualname__", "?"))

    def on_end(self, event):
        pass

ev.register("numba:compile", Listener())
import nbtok
pid = os.fork()
if pid == 0:
    nbtok.get_encoding("gpt2").encode_batch(["hello world", "again"])
    os._exit(3 if compiled else 0)
_, status = os.waitpid(pid, 0)
print("child compiled nothing" if os.waitstatus_to_exitcode(status) == 0 else "child compiled")
'''


def test_warmup_prepares_the_forked_childs_serial_kernels():
    """``nbtok warmup`` also compiles the serial twins, so a forked child's first batch
    compiles nothing (it took 3 s in such a child with a cold twin)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, NBTOK_QUIET="1", PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", WARMUP_CHILD], capture_output=True, text=True, env=env,
                       timeout=TIMEOUT * 2)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split("\n")[:2] == ["twin compiled", "child compiled nothing"], p.stdout
