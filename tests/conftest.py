"""Shared test helpers.

The full parity runs read the real corpora in ``../shared/data`` (or ``$NBTOK_SHARED_DATA``);
they skip with a visible reason when that folder is absent. The committed fixtures under
``tests/data`` exercise every code path on their own.
"""
import os
import shutil
import tempfile
from pathlib import Path

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
