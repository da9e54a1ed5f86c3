"""``nbtok warmup``: compile the kernels of each feature ahead of time (a Docker build step, a
cluster image), so that no later process waits for Numba. Numba's on-disk cache
(``cache=True``) keeps the result; a warm run only loads it.

Each feature runs the calls a user makes on a tiny model built in memory, so every kernel they
reach is compiled with the argument types real models give it.

Examples:
    >>> from nbtok.warmup import warmup
    >>> [name for name, seconds in warmup(["bytelevel"])]
    ['bytelevel']
"""
import time


TEXTS = ["Hello world, hello wörld!", "日本語のテキスト 123", "", "a\tb  c\n"]


def _exercise(tok, stream=True):
    tok.encode(TEXTS[0])
    tok.encode_batch(TEXTS)
    tok.encode_batch_ragged(TEXTS)
    tok.encode_batch(TEXTS, padding="longest", truncation=True, max_length=4, return_offsets=True)
    ids = tok.encode(TEXTS[1])
    tok.decode(ids)
    if stream:
        decoder = tok.decode_stream()
        for i in ids:
            decoder.step(i)


def _bytelevel():
    import nbtok
    _exercise(nbtok.get_encoding("gpt2"))


def _spm_proto(model_type):
    """A serialized ModelProto of a few pieces (Unigram: 1, BPE: 2) with byte fallback."""
    from .formats.sentencepiece_model import FIXED32, VARINT, _key, _len_field, _varint, pack_float
    pieces = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    pieces += [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    pieces += [(p, -1.0 - k, 1) for k, p in enumerate(["\u2581", "l", "o", "lo", "\u2581h", "e", "h", "he", "llo"])]
    body = b""
    for piece, score, kind in pieces:
        entry = _len_field(1, piece.encode()) + _key(2, FIXED32) + pack_float(score)
        if kind != 1:
            entry += _key(3, VARINT) + _varint(kind)
        body += _len_field(1, entry)
    trainer = _key(3, VARINT) + _varint(model_type) + _key(35, VARINT) + _varint(1)
    normalizer = _len_field(1, b"identity")
    return body + _len_field(2, trainer) + _len_field(3, normalizer)


def _sentencepiece():
    from .formats.sentencepiece_model import tokenizer_from_proto
    for model_type in (1, 2):
        tok = tokenizer_from_proto(_spm_proto(model_type))
        _exercise(tok)
        tok.encode_as_pieces(TEXTS[0])
        tok.sample_encode(TEXTS[0], alpha=0.1, seed=0)


def _huggingface():
    import nbtok
    from .formats.huggingface import to_huggingface_json, tokenizer_from_config
    from .formats.sentencepiece_model import tokenizer_from_proto
    tok = tokenizer_from_config(to_huggingface_json(nbtok.get_encoding("gpt2").model))
    _exercise(tok, stream=False)  # (streaming decode of tokenizer.json models: issue 20)
    # SentencePiece-shaped files, which run fused (models/hf_fused_spm.py): Llama-style BPE as
    # nbtok writes it, and T5's shape around the Unigram model
    for model_type in (2, 1):
        cfg = tokenizer_from_proto(_spm_proto(model_type)).model.to_huggingface_json()
        if model_type == 2:
            cfg["normalizer"] = {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u2581"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
            cfg["pre_tokenizer"] = None
        else:
            cfg["model"]["byte_fallback"] = False
            cfg["normalizer"] = {"type": "Sequence", "normalizers": [
                {"type": "Precompiled", "precompiled_charsmap": None},
                {"type": "Strip", "strip_left": False, "strip_right": True},
                {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]}
            cfg["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                                    "split": True}
        tok = tokenizer_from_config(cfg)
        if tok.model.fused is None:
            raise RuntimeError("nbtok warmup: a SentencePiece-shaped tokenizer.json did not take the fused path")
        _exercise(tok, stream=False)


def _train():
    import nbtok
    text = [" ".join(TEXTS)] * 20
    nbtok.train_bpe(iter(text), 300, special_tokens=["<|endoftext|>"], progress=False)


FEATURES = {"bytelevel": _bytelevel, "sentencepiece": _sentencepiece, "huggingface": _huggingface,
            "train": _train}


def warmup(features=None, fork_twins=True):
    """Compile (or load from Numba's cache) the kernels of ``features`` (default: all);
    returns ``[(feature, seconds)]``. ``fork_twins``: also the serial twin of each batch
    kernel, which a child forked after the parent used a batch call runs instead
    (``nbtok._jit``, "Fork safety"); else a ``DataLoader`` worker compiles them on its first
    batch."""
    from ._jit import serial_batches
    names = list(FEATURES) if not features else list(features)
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise ValueError(f"unknown feature {unknown[0]!r}; choose from {', '.join(FEATURES)}")
    done = []
    for name in names:
        start = time.perf_counter()
        FEATURES[name]()
        if fork_twins:
            with serial_batches():
                FEATURES[name]()
        done.append((name, time.perf_counter() - start))
    return done
