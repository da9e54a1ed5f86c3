"""Full-corpus parity with ``sentencepiece`` for every ``.model`` in ``../shared/data``.

Every line of every corpus under ``corpora/`` (UDHR, xquad, the sentencepiece texts, cs336,
tinyshakespeare, unicode, bench/) is one document; ids and decoded text must match for all
of them. Skips with a visible reason when ``../shared/data`` is absent.
"""
import pytest

spm = pytest.importorskip("sentencepiece")

from conftest import corpus_files, shared_data_dir  # noqa: E402
from test_sentencepiece import assert_batch_parity, load_pair  # noqa: E402

CHUNK = 20000
_ROOT = shared_data_dir()
SHARED_MODELS = sorted((_ROOT / "models" / "sentencepiece").glob("*.model")) if _ROOT else []


def corpus_chunks(root):
    """(file name, list of lines) in chunks of CHUNK lines, for every corpus file."""
    for path in corpus_files(root):
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
        for i in range(0, len(lines), CHUNK):
            yield path.name, lines[i:i + CHUNK]


def check_all_corpora(model_path, root):
    tok, sp = load_pair(model_path)
    docs = 0
    files = set()
    for name, lines in corpus_chunks(root):
        docs += assert_batch_parity(tok, sp, lines, label=f"{model_path.name} on {name}")
        files.add(name)
    # zero mismatches were asserted per chunk; make sure the whole tree was covered
    assert docs > 800_000 and len(files) > 230, (docs, len(files))
    print(f"{model_path.name}: {docs} documents from {len(files)} files, 0 mismatches (ids and decode)")


@pytest.mark.parametrize("model", SHARED_MODELS or [None], ids=lambda p: p.name if p else "absent")
def test_shared_model_corpus_parity(shared_data, model):
    if model is None:
        pytest.skip("no sentencepiece models under ../shared/data/models/sentencepiece")
    check_all_corpora(model, shared_data)
