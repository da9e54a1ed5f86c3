"""``nbtok.compat.transformers`` against transformers' own ``AutoTokenizer``: the same calls on
the same local model folder give equal ``input_ids``, ``attention_mask``, ``offset_mapping``
(and the other outputs) and decoded text. Needs the optional ``transformers`` package."""
import json

import numpy as np
import pytest

from conftest import FIXTURES, shared_data_dir

transformers = pytest.importorskip("transformers", reason="transformers is not installed (optional extra "
                                   "nbtok[transformers]): the transformers parity tests are skipped")
V5 = int(transformers.__version__.split(".")[0]) >= 5
hf = pytest.importorskip("tokenizers")
from nbtok.compat import transformers as ours  # noqa: E402
from nbtok.compat import tokenizers as ours_tokenizers  # noqa: E402

LINES = [l for l in (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines() if l.strip()]
TEXTS = LINES[:24] + ["Hello  world, how are you?", "A sentence 🤗 with <mask> </s> [SEP]", "", "Héllò 日本語"]
if shared_data_dir() is not None:   # a few lines of every shared corpus (the multilingual ones too)
    for _p in sorted((shared_data_dir() / "corpora").rglob("*.txt")):
        TEXTS += [l[:300] for l in _p.read_text(encoding="utf-8", errors="replace").splitlines() if l.strip()][:3]
CALLS = [dict(padding=True, truncation=True, return_tensors="np", return_offsets_mapping=True),
         dict(padding="max_length", truncation=True, max_length=16, return_tensors="np", return_offsets_mapping=True,
              return_special_tokens_mask=True, return_length=True),
         dict(truncation=True, max_length=12, stride=3, return_overflowing_tokens=True, return_offsets_mapping=True),
         dict(add_special_tokens=False, return_offsets_mapping=True)]


def _trained_folder(tmp):
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
    t = hf.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    t.normalizer = normalizers.BertNormalizer(lowercase=True)
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    t.decoder = decoders.WordPiece()
    t.train_from_iterator(LINES, trainers.WordPieceTrainer(vocab_size=400, special_tokens=[
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], show_progress=False))
    t.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                     special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    t.save(str(tmp / "tokenizer.json"))
    (tmp / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "BertTokenizer", "model_max_length": 32, "do_lower_case": True, "pad_token": "[PAD]",
        "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}))
    return str(tmp)


def _folders(tmp):
    out = [_trained_folder(tmp)]
    root = shared_data_dir()
    if root is not None:
        for rel in ("zoo/roberta", "models/hf_tokenizers/t5-small", "models/hf_tokenizers/phi-3-mini",
                    "zoo/bert-uncased/blip", "zoo/llama3/llama-3.1", "zoo/t5/sd3-t5xxl", "zoo/gpt2/lenml",
                    "zoo/qwen2/qwen2.5", "zoo/minilm/all-MiniLM-L6-v2", "zoo/whisper/whisper-tiny", "zoo/yi",
                    "zoo/phi2"):
            if (root / rel / "tokenizer.json").is_file():
                out.append(str(root / rel))
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return _folders(tmp_path_factory.mktemp("tf_folder"))


def _same(a, b):
    assert sorted(a.keys()) == sorted(b.keys())
    for k in b.keys():
        x, y = a[k], b[k]
        if isinstance(y, np.ndarray):
            assert isinstance(x, np.ndarray) and x.dtype == y.dtype and np.array_equal(x, y), k
        else:
            assert x == y, k


def _run(tok, texts, pairs, kw):
    try:
        return tok(texts, pairs, **kw) if pairs is not None else tok(texts, **kw)
    except ValueError as e:      # e.g. "Asking to pad but the tokenizer does not have a padding token"
        return ("ValueError", str(e))


def test_calls_match_autotokenizer(folders):
    for folder in folders:
        ref = transformers.AutoTokenizer.from_pretrained(folder)
        try:
            mine = ours.AutoTokenizer.from_pretrained(folder)
        except NotImplementedError as e:   # transformers 4 converted the slow tokenizer files: nbtok says so
            assert "slow files" in str(e) and "sd3-t5xxl" in folder and not V5, folder
            continue
        assert type(mine) is type(ref)
        assert isinstance(mine._tokenizer, ours_tokenizers.Tokenizer)
        # (loading on nbtok leaves transformers' own loading on HF tokenizers)
        assert isinstance(transformers.AutoTokenizer.from_pretrained(folder)._tokenizer, hf.Tokenizer)
        for kw in CALLS:
            # (pairs with overflowing windows: the windows of the two texts are combined, so long texts
            # give thousands of encodings; the pairs run without that call)
            for pairs in (None, TEXTS[::-1]) if "stride" not in kw else (None,):
                a, b = _run(mine, TEXTS, pairs, kw), _run(ref, TEXTS, pairs, kw)
                if isinstance(b, tuple):
                    assert a == b, (folder, kw)
                    continue
                _same(a, b)
        ids = ref(TEXTS)["input_ids"]
        for skip in (True, False):
            assert mine.batch_decode(ids, skip_special_tokens=skip) == ref.batch_decode(ids, skip_special_tokens=skip)
        assert mine.decode(ids[0]) == ref.decode(ids[0])
        assert mine.tokenize(TEXTS[0]) == ref.tokenize(TEXTS[0])
        assert mine.convert_ids_to_tokens(ids[1]) == ref.convert_ids_to_tokens(ids[1])
        assert mine.get_vocab() == ref.get_vocab() and len(mine) == len(ref)
        assert mine.all_special_ids == ref.all_special_ids


def test_pretrained_tokenizer_fast_class(folders, tmp_path):
    folder = folders[0]
    mine = ours.PreTrainedTokenizerFast(tokenizer_file=folder + "/tokenizer.json", pad_token="[PAD]")
    ref = transformers.PreTrainedTokenizerFast(tokenizer_file=folder + "/tokenizer.json", pad_token="[PAD]")
    _same(mine(TEXTS, padding=True, return_offsets_mapping=True), ref(TEXTS, padding=True, return_offsets_mapping=True))
    again = ours.PreTrainedTokenizerFast.from_pretrained(folder)
    assert isinstance(again._tokenizer, ours_tokenizers.Tokenizer)
    _same(again(TEXTS[:3]), transformers.PreTrainedTokenizerFast.from_pretrained(folder)(TEXTS[:3]))
    mine.save_pretrained(str(tmp_path / "saved"))
    _same(ours.AutoTokenizer.from_pretrained(str(tmp_path / "saved"))(TEXTS[:3]),
          transformers.AutoTokenizer.from_pretrained(str(tmp_path / "saved"))(TEXTS[:3]))


def test_folder_without_tokenizer_json_says_so(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer"}))
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n")
    assert hasattr(transformers.AutoTokenizer.from_pretrained(str(tmp_path)), "backend_tokenizer")  # (converted)
    with pytest.raises(NotImplementedError, match="slow files"):
        ours.AutoTokenizer.from_pretrained(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not download"):
        ours.AutoTokenizer.from_pretrained("bert-base-uncased")


V5_ONLY = pytest.mark.skipif(not V5, reason="settings transformers 5 builds in Python (transformers 4 applies several "
                             "of them by converting the slow files, which nbtok refuses)")
V5_PATH = pytest.mark.skipif(not V5, reason="transformers 5's loading path (nbtok/compat/_transformers5.py)")
KW_TEXTS = TEXTS[:6] + ["Hello  world, HOW are you? 123456 ÉtéÀ", " leading space", "x\n\ny  z", "-" * 55,
                        "camelCaseWordsHere and-dash"]


@V5_ONLY
@pytest.mark.parametrize("rel, kwargs", [
    ("models/hf_tokenizers/phi-3-mini", dict(add_prefix_space=False)),
    ("models/hf_tokenizers/phi-3-mini", dict(legacy=True, add_eos_token=True)),
    ("models/hf_tokenizers/t5-small", dict(add_prefix_space=False)),
    ("models/hf_tokenizers/t5-small", dict(from_slow=True)),
    ("zoo/gpt2/lenml", dict(add_prefix_space=True)),
    ("zoo/llama3/llama-3.1", dict(add_bos_token=False)),
    ("zoo/qwen2/qwen2.5", dict(add_eos_token=True)),
    ("zoo/minilm/all-MiniLM-L6-v2", dict(split_special_tokens=True))])
def test_settings_transformers_5_builds_in_python(rel, kwargs):
    root = shared_data_dir()
    if root is None or not (root / rel / "tokenizer.json").is_file():
        pytest.skip(f"needs the shared folder {rel} (NBTOK_SHARED_DATA)")
    ref = transformers.AutoTokenizer.from_pretrained(str(root / rel), **kwargs)
    mine = ours.AutoTokenizer.from_pretrained(str(root / rel), **kwargs)
    assert type(mine) is type(ref) and isinstance(mine._tokenizer, ours_tokenizers.Tokenizer)
    _same(mine(KW_TEXTS, return_offsets_mapping=True), ref(KW_TEXTS, return_offsets_mapping=True))
    ids = ref(KW_TEXTS)["input_ids"]
    assert mine.batch_decode(ids) == ref.batch_decode(ids)
    assert [mine.tokenize(t) for t in KW_TEXTS] == [ref.tokenize(t) for t in KW_TEXTS]


@V5_PATH
def test_fix_mistral_regex_on_nbtok(tmp_path):
    """transformers 5 rewrites a local Mistral tokenizer's pre-tokenizer (``fix_mistral_regex=True``,
    vocabularies over 100,000 tokens) with the ``tokenizers`` classes it imports in that function:
    nbtok's there, and the results are the same."""
    import shutil
    root = shared_data_dir()
    if root is None or not (root / "zoo/llama3/llama-3.1/tokenizer.json").is_file():
        pytest.skip("needs the shared Llama 3 folder (NBTOK_SHARED_DATA)")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(root / "zoo/llama3/llama-3.1" / name, tmp_path / name)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mistral", "transformers_version": "4.57.0"}))
    pre = {}
    for fix in (True, False):
        ref = transformers.AutoTokenizer.from_pretrained(str(tmp_path), fix_mistral_regex=fix)
        mine = ours.AutoTokenizer.from_pretrained(str(tmp_path), fix_mistral_regex=fix)
        assert isinstance(mine._tokenizer, ours_tokenizers.Tokenizer) and isinstance(ref._tokenizer, hf.Tokenizer)
        assert json.loads(mine._tokenizer.to_str())["pre_tokenizer"] == json.loads(ref._tokenizer.to_str())["pre_tokenizer"]
        _same(mine(KW_TEXTS, return_offsets_mapping=True), ref(KW_TEXTS, return_offsets_mapping=True))
        pre[fix] = json.loads(mine._tokenizer.to_str())["pre_tokenizer"]
    assert pre[True] != pre[False]
    import sys
    assert sys.modules["tokenizers"] is hf


@V5_PATH
def test_loading_on_nbtok_restores_transformers(folders, tmp_path):
    """The names swapped while loading are HF's again afterwards, also in a model module imported
    during the load; a failed load restores them too."""
    import sys
    import transformers.tokenization_utils_base as base_mod
    import transformers.tokenization_utils_tokenizers as tok_mod
    t5 = [f for f in folders if "t5-small" in f]
    if not t5:
        pytest.skip("needs the shared t5-small folder (NBTOK_SHARED_DATA)")
    assert isinstance(ours.AutoTokenizer.from_pretrained(t5[0])._tokenizer, ours_tokenizers.Tokenizer)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer"}))
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n")
    with pytest.raises(NotImplementedError, match="slow files"):
        ours.AutoTokenizer.from_pretrained(str(tmp_path))
    t5_mod = sys.modules["transformers.models.t5.tokenization_t5"]
    assert t5_mod.Tokenizer is hf.Tokenizer and t5_mod.Unigram is hf.models.Unigram
    assert t5_mod.normalizers is hf.normalizers and t5_mod.pre_tokenizers is hf.pre_tokenizers
    assert tok_mod.TokenizerFast is hf.Tokenizer and tok_mod.processors is hf.processors
    assert tok_mod.BPE is hf.models.BPE and tok_mod.AddedToken is hf.AddedToken
    assert "_from_pretrained" not in tok_mod.TokenizersBackend.__dict__
    assert base_mod.PreTrainedTokenizerBase.__dict__["_from_pretrained"].__func__.__module__ == base_mod.__name__
    assert isinstance(transformers.AutoTokenizer.from_pretrained(t5[0])._tokenizer, hf.Tokenizer)


@pytest.mark.parametrize("rel", ["models/hf_tokenizers/phi-3-mini", "models/hf_tokenizers/t5-small"])
def test_save_pretrained_round_trip(rel, tmp_path):
    """A model class loaded on nbtok saves a folder that transformers and nbtok load to the same."""
    root = shared_data_dir()
    if root is None or not (root / rel / "tokenizer.json").is_file():
        pytest.skip(f"needs the shared folder {rel} (NBTOK_SHARED_DATA)")
    mine = ours.AutoTokenizer.from_pretrained(str(root / rel))
    mine.save_pretrained(str(tmp_path))
    orig = transformers.AutoTokenizer.from_pretrained(str(root / rel))
    ref, again = transformers.AutoTokenizer.from_pretrained(str(tmp_path)), ours.AutoTokenizer.from_pretrained(str(tmp_path))
    assert type(ref) is type(orig) is type(again) and isinstance(again._tokenizer, ours_tokenizers.Tokenizer)
    want = orig(KW_TEXTS, return_offsets_mapping=True)
    _same(ref(KW_TEXTS, return_offsets_mapping=True), want)
    _same(again(KW_TEXTS, return_offsets_mapping=True), want)
