"""The documentation a user reads: every public name has a docstring, the examples in them run
and give what they show, and the API reference builds without warnings (when mkdocs is here)."""
import doctest
import importlib
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nbtok

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["nbtok", "nbtok.tokenizer", "nbtok.batch", "nbtok.warmup", "nbtok.text"]


@pytest.mark.parametrize("name", MODULES)
def test_examples_in_docstrings_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def public_members():
    yield "nbtok", nbtok
    for name in nbtok.__all__:
        yield f"nbtok.{name}", getattr(nbtok, name)
    for name, member in vars(nbtok.Tokenizer).items():
        if not name.startswith("_"):
            yield f"Tokenizer.{name}", member


@pytest.mark.parametrize("name, member", list(public_members()))
def test_every_public_name_has_a_docstring(name, member):
    doc = inspect.getdoc(member.fget if isinstance(member, property) else
                         member.__func__ if isinstance(member, classmethod) else member)
    assert doc and len(doc) > 20, f"{name} has no docstring"


def test_top_level_calls_have_examples():
    for name in ["Tokenizer", "get_encoding", "train_bpe", "train_sentencepiece"]:
        assert "Examples:" in inspect.getdoc(getattr(nbtok, name)), name


@pytest.mark.skipif(shutil.which("mkdocs") is None and not (Path(sys.executable).parent / "mkdocs").exists(),
                    reason="mkdocs is not installed (the docs extra); .ci/run builds the docs")
def test_api_reference_builds_without_warnings(tmp_path):
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    out = subprocess.run([mkdocs, "build", "--strict", "-q", "-d", str(tmp_path / "site")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
