"""Full-corpus parity with ``sentencepiece`` for the models trained in ``test_sentencepiece.py``.

Same check as ``test_sentencepiece_corpora.py`` (every line of every corpus under
``../shared/data/corpora``, ids and decoded text), for the models sentencepiece trains on the
committed text: unigram / bpe, byte_fallback, each normalization rule, the whitespace options,
user-defined and control symbols, 32k vocabularies.
"""
import pytest

pytest.importorskip("sentencepiece")

from test_sentencepiece import CONFIGS, spm_models  # noqa: E402,F401  (session fixture)
from test_sentencepiece_corpora import check_all_corpora  # noqa: E402


@pytest.mark.parametrize("name", list(CONFIGS))
def test_trained_model_corpus_parity(shared_data, spm_models, name):  # noqa: F811
    check_all_corpora(spm_models[name], shared_data)
