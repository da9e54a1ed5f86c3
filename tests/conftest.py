"""Shared test helpers.

The full parity runs read the real corpora in ``../shared/data`` (or ``$NBTOK_SHARED_DATA``);
they skip with a visible reason when that folder is absent. The committed fixtures under
``tests/data`` exercise every code path on their own.
"""
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "data"


# nbtok's array cache (nbtok/arraycache.py) goes to a directory of this session, never the
# user's ~/.cache: set on import, before test modules that build tokenizers when collected
# (child processes inherit it)
_ARRAY_CACHE = tempfile.mkdtemp(prefix="nbtok-test-cache-")
os.environ["NBTOK_CACHE_DIR"] = _ARRAY_CACHE


def pytest_unconfigure(config):
    shutil.rmtree(_ARRAY_CACHE, ignore_errors=True)


def shared_data_dir():
    env = os.environ.get("NBTOK_SHARED_DATA")
    path = Path(env) if env else TESTS.parent.parent / "shared" / "data"
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def shared_data():
    path = shared_data_dir()
    if path is None:
        pytest.skip("../shared/data is absent (set NBTOK_SHARED_DATA): full-corpus parity skipped")
    return path


def corpus_files(root):
    """Every text file under corpora/, sorted (the parity runs go over all of them)."""
    corpora = root / "corpora"
    return sorted(p for p in corpora.rglob("*") if p.is_file() and p.suffix in (".txt", ".en", "") and p.name != "MANIFEST.tsv")


def corpus_lines(root):
    """Yield (path, line) for every line of every corpus file (line ends kept off)."""
    for path in corpus_files(root):
        text = path.read_bytes().decode("utf-8", errors="replace")
        for line in text.splitlines():
            yield path, line


# The classes the byte-level scanners read (nbtok/pre_tokenizers/unicode_classes.py), as regex patterns
_CLASS_BITS = {1: [r"\p{L}"], 2: [r"\p{N}"], 4: [r"\s"], 8: [r"\p{Lu}", r"\p{Lt}"], 16: [r"\p{Ll}"],
               32: [r"\p{Lm}", r"\p{Lo}", r"\p{M}"], 64: [r"\p{M}"]}
_disagreeing = None


def regex_disagreements():
    """``bool[0x110000]``: the code points whose classes in the *installed* ``regex`` module
    differ from nbtok's pinned ``load_table("regex")`` (regex 2026.5.9, Unicode 17.0).

    A newer ``regex`` knows a newer Unicode version (regex 2026.11 assigns letters such as
    U+3D000 that 17.0 does not have), so a test that compares the scanner with ``regex.findall``
    must not depend on those code points: the scanner follows the pinned table, the oracle
    follows whatever release is installed. Probed once per session (about a second)."""
    global _disagreeing
    if _disagreeing is None:
        import regex
        from nbtok.pre_tokenizers.unicode_classes import load_table
        cps = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
        text = cps.tobytes().decode("utf-32-le")
        probed = np.zeros(0x110000, np.uint8)
        for bit, pats in _CLASS_BITS.items():
            for p in pats:
                found = np.frombuffer("".join(regex.findall(p, text)).encode("utf-32-le"), "<u4")
                probed[found] |= bit
        _disagreeing = probed != load_table("regex")
    return _disagreeing


def regex_agrees(text):
    """True unless ``text`` holds a code point the installed ``regex`` classifies differently
    from nbtok's pinned table (``regex_disagreements``)."""
    bad = regex_disagreements()
    return not any(bad[ord(c)] for c in set(text))
