"""``nbtok.compat.tiktoken`` against tiktoken itself: every public call, same answers, same
exception types. On the bundled GPT-2 ranks always; on OpenAI's cl100k / o200k / p50k files
through tiktoken's own cache layout when ``../shared/data/zoo`` has them."""
import hashlib
import pickle
import shutil
from importlib import resources

import numpy as np
import pytest

import nbtok.compat.tiktoken as compat
from conftest import FIXTURES, shared_data_dir

tiktoken = pytest.importorskip("tiktoken")

TEXTS = [line for line in (FIXTURES / "text" / "udhr_eng.txt").read_text(encoding="utf-8").splitlines() if line][:30] + [
    "", "hello world", "<|endoftext|> and <|endoftext|>", "  spaces\n\n\tand tabs  ", "Héllò 🙃 wörld 日本語",
    "don't I'LL 12345678", "\ud800 lone surrogate", "a" * 500]


def _reference_gpt2():
    from nbtok.formats.tiktoken import load_tiktoken_ranks
    from tiktoken_ext.openai_public import r50k_pat_str
    with resources.as_file(resources.files("nbtok") / "data" / "gpt2.tiktoken.gz") as p:
        ranks = load_tiktoken_ranks(p)
    return tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256})


@pytest.fixture(scope="module")
def pair():
    return compat.get_encoding("gpt2"), _reference_gpt2()


def test_encode_calls_match(pair):
    ours, ref = pair
    for text in TEXTS:
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
        assert ours.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        if "\ud800" not in text:   # tiktoken's encode_to_numpy lacks its encode's surrogate fix
            assert np.array_equal(ours.encode_to_numpy(text, disallowed_special=()),
                                  ref.encode_to_numpy(text, disallowed_special=()))
        assert ours.encode_to_numpy(text, disallowed_special=()).dtype == np.uint32
    assert ours.encode_batch(TEXTS, allowed_special="all") == ref.encode_batch(TEXTS, allowed_special="all")
    assert ours.encode_ordinary_batch(TEXTS) == ref.encode_ordinary_batch(TEXTS)
    for text in ("hello", "qqqq", " world", "<|endoftext|>"):
        assert ours._encode_single_piece(text) == ref._encode_single_piece(text)
    for data in (b"hello world", b"hello \xff\xfe", b"\xe2\x82", b"abc \xe2\x82", b"\n\n \xff", b"", b"\xf0\x9f\x99"):
        assert ours._encode_bytes(data) == ref._encode_bytes(data), data


def test_errors_match(pair):
    ours, ref = pair
    for enc in (ours, ref):
        with pytest.raises(ValueError, match="disallowed special token"):
            enc.encode("<|endoftext|>")
        with pytest.raises(KeyError):
            enc.encode_single_token("qqqqzz")
        with pytest.raises(KeyError):
            enc.decode_single_token_bytes(60000)
        with pytest.raises(KeyError):
            enc.decode_bytes([60000])
    with pytest.raises(NotImplementedError, match="encode_with_unstable"):
        ours.encode_with_unstable("hello fanta")


def test_decode_calls_match(pair):
    ours, ref = pair
    batch = [ref.encode(t, allowed_special="all") for t in TEXTS]
    for ids in batch:
        assert ours.decode(ids) == ref.decode(ids)
        assert ours.decode_bytes(ids) == ref.decode_bytes(ids)
        assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
        assert ours.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    assert ours.decode_batch(batch) == ref.decode_batch(batch)
    assert ours.decode_bytes_batch(batch) == ref.decode_bytes_batch(batch)
    partial = ref.encode("🙃")[:1]
    assert ours.decode(partial) == ref.decode(partial)
    assert ours.decode(partial, errors="ignore") == ref.decode(partial, errors="ignore")
    for token in (0, 31373, 50256):
        assert ours.decode_single_token_bytes(token) == ref.decode_single_token_bytes(token)
        assert ours.encode_single_token(ref.decode_single_token_bytes(token)) == token


def test_vocabulary_calls_match(pair):
    ours, ref = pair
    assert ours.n_vocab == ref.n_vocab and ours.max_token_value == ref.max_token_value
    assert ours.eot_token == ref.eot_token and ours.special_tokens_set == ref.special_tokens_set
    assert ours.token_byte_values() == ref.token_byte_values()
    assert ours._mergeable_ranks == ref._mergeable_ranks and ours._special_tokens == ref._special_tokens
    # tiktoken's README way of extending an encoding
    extended = compat.Encoding("gpt2_im", pat_str=ours._pat_str, mergeable_ranks=ours._mergeable_ranks,
                               special_tokens={**ours._special_tokens, "<|im_start|>": 50257})
    assert extended.encode("<|im_start|>hi", allowed_special="all") == [50257, 5303]
    assert ours.is_special_token(50256) and not ours.is_special_token(0)
    assert ours.name == "gpt2" and repr(ours) == "<Encoding 'gpt2'>"
    again = pickle.loads(pickle.dumps(ours))
    assert again.encode("hello world") == ours.encode("hello world")


def test_encoding_from_ranks():
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    specials = {"<|x|>": 257}
    ours = compat.Encoding("tiny", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens=specials)
    ref = tiktoken.Encoding("tiny", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens=specials)
    for text in ("abab ab", "xab<|x|>", ""):
        assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    with pytest.raises(ValueError):
        compat.Encoding("tiny", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens=specials, explicit_n_vocab=10)
    pickled = pickle.loads(pickle.dumps(ours))
    assert pickled.encode("abab") == ours.encode("abab")


def test_model_tables_match_tiktoken():
    from tiktoken import model
    assert compat.MODEL_TO_ENCODING == model.MODEL_TO_ENCODING
    assert compat.MODEL_PREFIX_TO_ENCODING == model.MODEL_PREFIX_TO_ENCODING
    for name in ("gpt-4o", "gpt-4o-2024-05-13", "gpt-3.5-turbo-0301", "text-davinci-003", "gpt2", "gpt-oss-120b"):
        assert compat.encoding_name_for_model(name) == model.encoding_name_for_model(name)
    with pytest.raises(KeyError):
        compat.encoding_name_for_model("no-such-model")
    assert set(compat.list_encoding_names()) == set(tiktoken.list_encoding_names())
    with pytest.raises(ValueError):
        compat.get_encoding("no_such_encoding")


def test_missing_rank_file_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NBTOK_TIKTOKEN_DIR", raising=False)
    compat._ENCODINGS.pop("cl100k_base", None)
    with pytest.raises(FileNotFoundError, match="cl100k_base.tiktoken.*NBTOK_TIKTOKEN_DIR"):
        compat.get_encoding("cl100k_base")
    (tmp_path / "cl100k_base.tiktoken").write_bytes(b"not the file")
    monkeypatch.setenv("NBTOK_TIKTOKEN_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="sha256"):
        compat.get_encoding("cl100k_base")


OPENAI = shared_data_dir() / "zoo" / "openai-tiktoken" if shared_data_dir() else None


@pytest.mark.skipif(OPENAI is None or not OPENAI.is_dir(), reason="../shared/data/zoo is absent (OpenAI's rank files)")
@pytest.mark.parametrize("name", ["p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"])
def test_openai_encodings_from_tiktoken_cache(name, tmp_path, monkeypatch):
    """The files in tiktoken's own cache layout (sha1 of the URL): both libraries read them offline."""
    for path in OPENAI.glob("*.tiktoken"):
        url = "https://openaipublic.blob.core.windows.net/encodings/" + path.name
        shutil.copy(path, tmp_path / hashlib.sha1(url.encode()).hexdigest())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("NBTOK_TIKTOKEN_DIR", raising=False)
    compat._ENCODINGS.pop(name, None)
    ours = compat.get_encoding(name)
    ref = tiktoken.get_encoding(name)
    assert ours.special_tokens_set == ref.special_tokens_set and ours.n_vocab == ref.n_vocab
    assert ours.encode_batch(TEXTS, allowed_special="all") == ref.encode_batch(TEXTS, allowed_special="all")
    for text in TEXTS:
        assert ours.decode(ours.encode_ordinary(text)) == ref.decode(ref.encode_ordinary(text))
    assert compat.encoding_for_model("gpt-4").name == "cl100k_base"
    if name == "o200k_harmony":   # two texts, one id (tiktoken decodes it as either, by hash order)
        assert ours.encode("<|endofprompt|><|reserved_200018|>", allowed_special="all") == [200018, 200018]
        assert ours.decode([200018]) in ("<|endofprompt|>", "<|reserved_200018|>")
