"""A first run compiles only what it uses (issue 18): a short text compiles the short-text
kernel (no merge loop, no code for long pre-tokens), a plain rank file parses without a kernel,
and the arrays NumPy now builds are the ones the kernels built."""
import base64
import gzip
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nbtok
from nbtok.formats import rankfile as rf
from nbtok.models import bytelevel_tables as T
from nbtok.models.bpe import bytelevel as K

ROOT = Path(nbtok.__file__).resolve().parents[1]

COMPILED = """
import sys
import numba.core.event as ev
names = []
class L(ev.Listener):
    def on_start(self, e): names.append(e.data["dispatcher"].py_func.__name__)
    def on_end(self, e): pass
ev.register("numba:compile", L())
import nbtok
assert nbtok.get_encoding("gpt2").encode(sys.argv[1]).tolist() == [15496, 995]
print(" ".join(names))
"""


def compiled_by(text, env):
    proc = subprocess.run([sys.executable, "-c", COMPILED, text], env=env, capture_output=True, text=True,
                          cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return set(proc.stdout.split())


def test_first_encode_compiles_only_the_short_path(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               NBTOK_CACHE_DIR=str(tmp_path / "arrays"), NBTOK_QUIET="1")
    first = compiled_by("Hello world", env)
    never = {"bpe_piece", "encode_long_doc", "encode_long_piece", "encode_pieces", "parse_rank_lines",
             "pieces_by_id", "token_filter", "byte_pair_table", "np_unique_impl"}
    assert not first & never, first & never
    assert {"encode_doc", "pretokenize", "find_special"} <= first
    assert compiled_by("Hello world", env) == set()  # a second process loads them all from the cache


def tiktoken_gpt2():
    tiktoken = pytest.importorskip("tiktoken")
    from reference import tiktoken_pattern
    tok = nbtok.get_encoding("gpt2")
    return tok, tiktoken.Encoding("gpt2", pat_str=tiktoken_pattern("gpt2"), mergeable_ranks=tok.model.ranks,
                                  special_tokens={"<|endoftext|>": 50256})


def test_short_text_kernel_stops_at_a_long_pre_token():
    """``encode_doc`` returns -1 at a pre-token of more than 16 bytes it has not seen; ``encode``
    then gives the text to ``encode_long_doc`` and keeps it for every later text."""
    tok, ref = tiktoken_gpt2()
    model = nbtok.get_encoding("gpt2").model  # a model of its own: its kernel choice starts afresh
    args = (model._M, (model.pre.table, model.pre.cfg), model._S(frozenset()))
    doc = K.new_doc_scratch(4096, 4096, 4096)
    assert K.encode_doc(np.frombuffer(b"hi there", np.uint8), *args, doc) == len(ref.encode_ordinary("hi there"))
    long_text = "an internationalization of " + "x" * 300 + " and " + " " * 40 + "end"
    assert K.encode_doc(np.frombuffer(long_text.encode(), np.uint8), *args, doc) == -1
    texts = ["hi", "Hello world", long_text, "hi", "internationalization", "sixteen bytes ok", "a" * 17]
    for i, text in enumerate(texts):
        assert model.encode(text).tolist() == ref.encode_ordinary(text), text
        assert model._long_pieces == (i >= 2)
    # pre-tokens of 17..32 bytes: encoded by encode_long_piece, then read from the pre-token cache
    words = ["x" * n for n in range(14, 40)] + ["\u0120" * 9, "internationalizations", "ab" * 12]
    text = " ".join(words * 3)
    assert model.encode(text).tolist() == ref.encode_ordinary(text)
    ids, offsets = model.encode_batch_ragged([text, text[:100], ""] * 2)
    assert ids[offsets[0]:offsets[1]].tolist() == ref.encode_ordinary(text)


def bundled_ranks():
    return gzip.decompress((ROOT / "nbtok" / "data" / "gpt2.tiktoken.gz").read_bytes())


def parsed_alike(data):
    """Both parsers on ``data``: the NumPy one reads it exactly when the kernel reads it
    without error and gives the same arrays, or declines (None)."""
    a = np.frombuffer(data, np.uint8)
    plain = rf.parse_plain_rank_lines(a)
    piece_bytes, piece_offsets, ranks, line, error = rf.parse_rank_lines(a)
    if plain is not None:
        assert error == rf.OK
        for ours, theirs in zip(plain, (piece_bytes, piece_offsets, ranks)):
            assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    return plain is not None, error


def test_plain_rank_file_parses_as_the_kernel_does():
    data = bundled_ranks()
    assert parsed_alike(data) == (True, rf.OK)
    assert parsed_alike(data.rstrip(b"\n")) == (True, rf.OK)
    assert parsed_alike(data.replace(b"\n", b"\r\n")) == (False, rf.OK)  # the kernel reads the rest
    rng = random.Random(18)
    seen = set()
    for _ in range(1500):
        tokens = [bytes(rng.randrange(256) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(1, 5))]
        lines = [base64.b64encode(t) + b" %d" % rng.randrange(10 ** rng.randint(1, 11)) for t in tokens]
        data = bytearray(b"\n".join(lines) + rng.choice([b"\n", b""]))
        for _ in range(rng.randint(0, 2)):
            data[rng.randrange(len(data))] = rng.choice(b"= \n\r\tA/+09-x\x00")
        seen.add(parsed_alike(bytes(data)))
    assert {(True, rf.OK), (False, rf.BAD_BASE64), (False, rf.BAD_FIELDS)} <= seen


def test_numpy_tables_match_their_definitions():
    """``token_filter``, ``byte_pair_table`` and ``pieces_by_id`` (NumPy since issue 18) against
    loops over their definitions, on a vocabulary with a merge given twice."""
    from nbtok.kernels.hashmap import pack_key, short_key_hash
    pieces = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"bc", b"x" * 16, b"x" * 17, b"zz"]
    offsets = np.cumsum([0] + [len(p) for p in pieces]).astype(np.int64)
    data = np.frombuffer(b"".join(pieces), np.uint8)
    byte_ids = np.arange(256, dtype=np.int32)
    ids = {p: i for i, p in enumerate(pieces)}
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"b")]
    keys = np.array([ids[a] << 32 | ids[b] for a, b in merges], np.int64)
    values = np.array([r << 32 | ids[a + b] for r, (a, b) in enumerate(merges)], np.int64)

    bits = np.zeros(1 << 6, np.uint64)
    for p in pieces:
        if 2 <= len(p) <= 16:
            h = short_key_hash(*pack_key(np.frombuffer(p, np.uint8), 0, len(p)), len(p))
            bits[(h >> 6) & 63] |= np.uint64(1) << np.uint64(h & 63)
    assert np.array_equal(T.token_filter(data, offsets, 1 << 6), bits)

    codes, pair_values = T.byte_pair_table(data, offsets, byte_ids, keys, values)
    want_values = []
    inside = {p[i:i + 2] for p in pieces for i in range(len(p) - 1)}
    for pair in range(65536):
        a, b = bytes([pair >> 8]), bytes([pair & 255])
        if a + b not in inside:
            assert codes[pair] == 0
        elif (a, b) in merges:  # the first of a merge given twice
            want_values.append(int(values[merges.index((a, b))]))
            assert codes[pair] == len(want_values) + 1
        else:
            assert codes[pair] == 1
    assert pair_values.tolist() == want_values == [0 << 32 | ids[b"ab"], 1 << 32 | ids[b"bc"]]

    order = np.array([5, 0, 9, 2, 7], np.int64)  # piece k at id order[k] of 11
    placed, placed_offsets = rf.pieces_by_id(data, offsets[:6], order, 11)
    by_id = [b""] * 11
    for k, i in enumerate(order):
        by_id[i] = pieces[k]
    assert placed.tobytes() == b"".join(by_id) and np.diff(placed_offsets).tolist() == list(map(len, by_id))
