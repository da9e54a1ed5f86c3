"""``Tokenizer.from_pretrained(folder)`` with transformers' side files (``tokenizer_config.json``,
``special_tokens_map.json``; ``nbtok/formats/hf_config.py``): special tokens, ``add_bos_token`` /
``add_eos_token``, the tokenizer.json's own padding / truncation left to the call.

Small folders written here (a byte-level BPE tokenizer.json built from the GGUF fixture) with ids
worked out by hand, and the same ids as transformers' ``AutoTokenizer`` where transformers is
installed; then a few zoo folders against ``AutoTokenizer`` (skipped, with the reason, without
``../shared`` or transformers).
"""
import json
from pathlib import Path

import pytest

import nbtok
from conftest import shared_data_dir
from nbtok.formats.gguf import GGUFVocab, gpt2_config, read_gguf

GGUF = Path(__file__).parent / "data" / "gguf" / "tiny-gpt2.gguf"
HELLO, WORLD, EOT, TOOL = 259, 264, 266, 267     # ids of tests/data/gguf/tiny-gpt2.gguf


def _folder(tmp_path, config=None, special_map=None, **changes):
    cfg = gpt2_config(GGUFVocab(read_gguf(GGUF)))
    cfg.update(changes)
    (tmp_path / "tokenizer.json").write_text(json.dumps(cfg), encoding="utf-8")
    if config is not None:
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    if special_map is not None:
        (tmp_path / "special_tokens_map.json").write_text(json.dumps(special_map), encoding="utf-8")
    return tmp_path


def _transformers():
    try:
        import transformers
    except ImportError:
        return None
    transformers.logging.set_verbosity_error()
    return transformers.AutoTokenizer


def _same_as_transformers(folder, texts):
    auto = _transformers()
    if auto is None:
        return
    ref = auto.from_pretrained(str(folder))
    tok = nbtok.Tokenizer.from_pretrained(folder)
    plain = {"add_special_tokens": False} if getattr(tok.model, "accepts_add_special_tokens", False) else {}
    for text in texts:
        assert tok.encode(text).tolist() == ref(text)["input_ids"], text
        assert tok.encode(text, **plain).tolist() == ref(text, add_special_tokens=False)["input_ids"], text


def test_add_bos_token_leaves_a_tokenizer_json_alone(tmp_path):
    # transformers 5 drops add_bos_token / add_eos_token when the folder has a tokenizer.json
    folder = _folder(tmp_path, {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|endoftext|>",
                                "eos_token": "<tool>", "add_bos_token": True, "add_eos_token": True})
    assert nbtok.Tokenizer.from_pretrained(folder).encode("hello world").tolist() == [HELLO, WORLD]
    _same_as_transformers(folder, ["hello world", "hello<|endoftext|>"])


def _spm_folder(tmp_path, config):
    """A sentencepiece .model folder: the model of tests/data/gguf/tiny-llama.gguf."""
    tok = nbtok.Tokenizer.from_gguf(GGUF.parent / "tiny-llama.gguf")
    tok.save_sentencepiece(tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


SPM_HELLO = 3 + 256 + 9


def test_add_bos_token_of_a_sentencepiece_folder(tmp_path):
    folder = _spm_folder(tmp_path, {"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
                                    "add_bos_token": True, "add_eos_token": True})
    tok = nbtok.Tokenizer.from_pretrained(folder)
    assert tok.encode("hello").tolist() == [1, SPM_HELLO, 2]
    assert tok.encode("hello", add_special_tokens=False).tolist() == [SPM_HELLO]
    _same_as_transformers(folder, ["hello", "hello x"])
    # asked for nothing: the sentencepiece model as it is (its own encode(text, add_bos=True))
    folder = _spm_folder(tmp_path, {"tokenizer_class": "LlamaTokenizer", "add_bos_token": False})
    tok = nbtok.Tokenizer.from_pretrained(folder)
    assert tok.model_type == "bpe" and tok.encode("hello").tolist() == [SPM_HELLO]
    _same_as_transformers(folder, ["hello"])


def test_special_tokens_are_added(tmp_path):
    folder = _folder(tmp_path, {"tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<pad>",
                                "additional_special_tokens": ["hello"]})
    tok = nbtok.Tokenizer.from_pretrained(folder)
    # "<pad>" is not in the vocabulary: a new id after the last; "hello" is: it keeps its id, and
    # both are now matched in the raw text and special
    assert tok.vocab_size == 269
    assert tok.encode("<pad> hello").tolist() == [268, 32, HELLO]
    assert tok.encode("xhelloworld").tolist()[1] == HELLO
    assert {"<pad>": 268, "hello": HELLO}.items() <= tok.special_tokens.items()
    assert tok.decode([268, HELLO, WORLD], skip_special_tokens=True) == " world"
    _same_as_transformers(folder, ["<pad> hello", "xhelloworld"])


def test_special_tokens_map(tmp_path):
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<a>"}
    folder = _folder(tmp_path, config, {"pad_token": {"content": "<b>", "lstrip": False}})
    tok = nbtok.Tokenizer.from_pretrained(folder)
    assert tok.encode("<a><b>").tolist()[-1] == 268 and "<a>" not in tok.special_tokens  # the map wins
    _same_as_transformers(folder, ["<a><b>"])
    # with an added_tokens_decoder in the config, transformers does not read the map
    config["added_tokens_decoder"] = {"268": {"content": "<c>", "special": True}}
    folder = _folder(tmp_path, config, {"pad_token": "<b>"})
    tok = nbtok.Tokenizer.from_pretrained(folder)
    assert tok.encode("<c><a>").tolist() == [268, 269] and "<b>" not in tok.special_tokens
    _same_as_transformers(folder, ["<c><a><b>"])


def test_file_padding_and_truncation_wait_for_the_call(tmp_path):
    padding = {"strategy": {"Fixed": 8}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": 0,
               "pad_type_id": 0, "pad_token": "!"}
    truncation = {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0}
    folder = _folder(tmp_path, {"tokenizer_class": "PreTrainedTokenizerFast"}, padding=padding,
                     truncation=truncation)
    assert nbtok.Tokenizer.from_pretrained(folder).encode("hello world hello").tolist() == [HELLO, WORLD, 32, HELLO]
    _same_as_transformers(folder, ["hello world hello"])


@pytest.mark.parametrize("config, message", [
    ("{", "invalid JSON"),
    (json.dumps({"add_bos_token": "yes"}), "add_bos_token must be true or false"),
    (json.dumps({"bos_token": 3}), "bos_token: a token must be"),
    (json.dumps({"additional_special_tokens": "<x>"}), "must be a list"),
    (json.dumps({"added_tokens_decoder": {"x": {"content": "a"}}}), "is not an id"),
    (json.dumps([1]), "expected a JSON object"),
])
def test_bad_config_files(tmp_path, config, message):
    folder = _folder(tmp_path)
    (folder / "tokenizer_config.json").write_text(config, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        nbtok.Tokenizer.from_pretrained(folder)


# ------------------------------------------------------------------ the zoo against transformers
ROOT = shared_data_dir()
ZOO = ROOT / "zoo" if ROOT is not None else None
#: folders whose tokenizer transformers builds from the folder's files as they are, and the lines
#: nbtok must encode as AutoTokenizer does (add_special_tokens True and False)
LINES = ["Hello world", "<s> x </s>", "<|endoftext|>hi<|im_end|>", "[CLS] a [SEP] <pad>", "Grüße, 你好! 🙂",
         "", "<|startoftext|>a<|endoftext|>", "<extra_id_0> z", "<unk>", "word " * 200]
ZOO_FOLDERS = dict.fromkeys(["qwen2/qwen2.5", "minilm/all-MiniLM-L6-v2", "gpt2/lenml", "llama3/llama-3.1",
                             "t5/sd3-t5xxl", "whisper/whisper-tiny", "phi2", "roberta", "bert-uncased/blip",
                             "clip/clip-vit-large-patch14", "openai-hf/gpt-3.5-turbo"], LINES)
# a Llama sentencepiece folder: transformers 5's LlamaTokenizer does not prefix "▁" to a segment that
# starts with a space (after a special token), sentencepiece and nbtok do: those lines are left out
ZOO_FOLDERS["japanese-llama"] = [t for t in LINES if not t.startswith(" ") and "> " not in t]


@pytest.mark.skipif(ZOO is None or not ZOO.is_dir(), reason="../shared/data/zoo is absent (set NBTOK_SHARED_DATA)")
@pytest.mark.skipif(_transformers() is None, reason="transformers (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(ZOO_FOLDERS))
def test_zoo_folders_as_transformers(name):
    ref = _transformers().from_pretrained(str(ZOO / name))
    tok = nbtok.Tokenizer.from_pretrained(ZOO / name)
    plain = {"add_special_tokens": False} if getattr(tok.model, "accepts_add_special_tokens", False) else {}
    for text in ZOO_FOLDERS[name]:
        assert tok.encode(text).tolist() == ref(text)["input_ids"], text
        assert tok.encode(text, **plain).tolist() == ref(text, add_special_tokens=False)["input_ids"], text


@pytest.mark.skipif(ZOO is None or not ZOO.is_dir(), reason="../shared/data/zoo is absent (set NBTOK_SHARED_DATA)")
def test_do_lower_case_of_a_bert_folder(tmp_path):
    import shutil
    src = ZOO / "minilm/all-MiniLM-L6-v2"
    for p in src.iterdir():
        shutil.copy(p, tmp_path / p.name)
    config = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] == "BertTokenizer" and config["do_lower_case"] is True
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(dict(config, do_lower_case=False)), encoding="utf-8")
    # an uncased vocabulary without lower-casing: "Hello" and "World" are unknown
    assert nbtok.Tokenizer.from_pretrained(src).encode("Hello World").tolist() == [101, 7592, 2088, 102]
    assert nbtok.Tokenizer.from_pretrained(tmp_path).encode("Hello World").tolist() == [101, 100, 100, 102]
    _same_as_transformers(tmp_path, ["Hello World", "hello world"])
