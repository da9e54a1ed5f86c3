"""The double-array trie: every key found, nothing else; unique BASEs; labelled units walk
exactly as BASE / CHECK (narrow and wide)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nbtok.kernels.trie import (LABEL_MASK, LEAF, BASE_SHIFT, build_trie, exact_match,
                                labelled_units, unit_child)


def trie_step(bc, node, c):
    """The BASE / CHECK step, the definition the labelled units must agree with."""
    nx = int(bc[2 * node]) + c
    return nx if bc[2 * nx + 1] == node else -1


def ragged_keys(keys):
    offsets = np.zeros(len(keys) + 1, np.int64)
    np.cumsum([len(k) for k in keys], out=offsets[1:])
    return np.frombuffer(b"".join(keys), np.uint8).copy(), offsets


def check_trie(keys, probes):
    kb, ko = ragged_keys(keys)
    bc, value = build_trie(kb, ko, np.arange(len(keys)))
    cells = value.size
    used = (bc[1::2] != -1)
    used[0] = True
    bases = bc[0::2][used & (bc[0::2] != 0)]
    assert np.unique(bases).size == bases.size, "two nodes share a BASE"
    first = {}
    for i, k in enumerate(keys):
        if k:
            first.setdefault(k, i)
    for k, i in first.items():
        assert exact_match(bc, value, np.frombuffer(k, np.uint8), 0, len(k)) == i
    for wide in (False, True):
        units = labelled_units(bc, value, wide=wide)
        assert units.dtype == (np.uint64 if wide else np.uint32)
        assert units.size == cells + 256
        for k in list(first) + probes:
            node = 0
            for c in k:
                a = trie_step(bc, node, c)
                b = unit_child(units, node, c)
                assert a == b, (k, wide)
                if a < 0:
                    break
                node = a
                assert bool(units[node] & LEAF) == (value[node] >= 0)
                assert units[node] & LABEL_MASK == c
            else:
                if k in first:
                    assert value[node] == first[k]
        # every cell a walk can reach by one byte from any node exists
        for s in np.flatnonzero(used).tolist():
            assert (int(units[s]) >> BASE_SHIFT) + 255 < units.size


byte_strings = st.binary(min_size=0, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(byte_strings, max_size=60), st.lists(byte_strings, max_size=20))
def test_trie_and_units_hypothesis(keys, probes):
    check_trie(keys, probes)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab\u2581\u00e9\u65e5", min_size=1, max_size=8), min_size=1, max_size=200))
def test_trie_dense_alphabet(words):
    keys = [w.encode() for w in words]
    check_trie(keys, [k + b"a" for k in keys] + [k[:-1] for k in keys])


def test_trie_many_keys_unique_bases():
    rng = np.random.default_rng(0)
    keys = [bytes(rng.integers(0, 256, rng.integers(1, 10)).astype(np.uint8)) for _ in range(20000)]
    keys += [bytes(rng.integers(97, 100, rng.integers(1, 14)).astype(np.uint8)) for _ in range(20000)]
    kb, ko = ragged_keys(keys)
    bc, value = build_trie(kb, ko, np.arange(len(keys)))
    has_children = (bc[0::2] != 0)
    assert np.unique(bc[0::2][has_children]).size == int(has_children.sum())
    units = labelled_units(bc, value)
    for i, k in enumerate(keys[:2000]):
        node = 0
        for c in k:
            node = unit_child(units, node, c)
            assert node >= 0
        assert units[node] & LEAF and value[node] <= i


def test_empty_trie():
    bc, value = build_trie(np.zeros(0, np.uint8), np.zeros(1, np.int64), np.zeros(0, np.int64))
    units = labelled_units(bc, value)
    for c in (0, 97, 255):
        assert trie_step(bc, 0, c) == -1
        assert unit_child(units, 0, c) == -1
