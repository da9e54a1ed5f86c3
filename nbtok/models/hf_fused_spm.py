"""tokenizer.json files converted from SentencePiece BPE run on ``SentencePieceModel``'s kernels.

Llama 2, Mistral, Phi-3, Yi and most SentencePiece-derived BPE files have one shape: the
normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")`` (or only the ``Replace``; or no normalizer and
a ``Metaspace`` pre-tokenizer that does not split), no other pre-tokenizer, and a ``BPE`` model
with ``byte_fallback``, no dropout, subword prefix or suffix. HF runs BPE over the whole text as
one word: characters in the vocabulary are symbols, any other character is its ``<0xXX>``
bytes, and adjacent symbols merge by their rank in ``merges``, the lowest first and the
leftmost on a tie. SentencePiece BPE is the same loop with the rank of a pair taken from the
score of its result (``kernels.spm_bpe``); given the file's merge ranks instead
(``SentencePieceModel(proto, merges=...)``) it computes exactly HF's merges. The normalizer is
SentencePiece's with no charsmap, ``escape_whitespaces`` on, ``remove_extra_whitespaces`` off
and ``add_dummy_prefix`` as the ``Prepend`` (HF prepends only to a non-empty text, as
SentencePiece does; HF's ``Metaspace`` also skips a text that starts with a space or ``▁``).

Texts that hold an added token, or the unknown token's text, run stage by stage: HF cuts them
out before normalizing, and SentencePiece does not know them. Checking a text costs one pass of
``kernels.charsmap.flagged_rows`` over the batch's bytes.
"""
import numpy as np

from .._jit import thread_limit
from ..kernels.charsmap import flagged_rows
from ..text import pack_utf8

SPACE = "\u2581"
_NO_CHARS = np.zeros(0, np.bool_)


def _string(pattern):
    return pattern.get("String") if isinstance(pattern, dict) else None


def _is_space_replace(cfg):
    return (isinstance(cfg, dict) and cfg.get("type") == "Replace" and _string(cfg.get("pattern")) == " "
            and cfg.get("content") == SPACE)


def _metaspace_prefix(cfg, split):
    """Whether a ``Metaspace`` pre-tokenizer with the given ``split`` prepends ``▁`` (None: it is
    not such a Metaspace)."""
    if not isinstance(cfg, dict) or cfg.get("type") != "Metaspace" or cfg.get("replacement", SPACE) != SPACE:
        return None
    if bool(cfg.get("split", True)) != split:
        return None
    scheme = cfg.get("prepend_scheme")
    if scheme is None:
        scheme = "always" if cfg.get("add_prefix_space", True) else "never"
    return {"always": True, "first": True, "never": False}.get(scheme)


def _bpe_dummy_prefix(normalizer, pre):
    """``add_dummy_prefix`` of the SentencePiece normalizer that equals these stages, or None."""
    if pre is None:
        items = normalizer.get("normalizers") if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence" \
            else [normalizer]
        if not isinstance(items, list):
            return None
        prepend = [c for c in items if isinstance(c, dict) and c.get("type") == "Prepend"]
        rest = [c for c in items if c not in prepend]
        if len(rest) != 1 or not _is_space_replace(rest[0]) or len(prepend) > 1:
            return None
        if prepend and prepend[0].get("prepend") != SPACE:
            return None
        return bool(prepend)
    if normalizer is None:
        return _metaspace_prefix(pre, split=False)
    return None


def _strings(texts):
    """(bytes uint8[], offsets int64[k + 1]) of non-empty strings, for ``flagged_rows``."""
    data = [t.encode("utf-8") for t in texts if t]
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return np.frombuffer(b"".join(data), np.uint8).copy(), offsets


def _proto(hf, model_type, pieces, scores, kinds, dummy_prefix, charsmap=b"", remove_extra=False):
    """The ``ModelProtoData`` of a SentencePiece model with these pieces and normalizer."""
    from ..formats import sentencepiece_model as spm
    data = [p.encode("utf-8") for p in pieces]
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    trainer = {"model_type": model_type, "vocab_size": len(data), "unk_id": hf.unk_id,
               "unk_piece": pieces[hf.unk_id], "bos_id": -1, "eos_id": -1, "pad_id": -1,
               "byte_fallback": bool(np.any(kinds == spm.BYTE))}
    normalizer = {"name": "user_defined" if charsmap else "identity", "precompiled_charsmap": charsmap,
                  "add_dummy_prefix": dummy_prefix, "remove_extra_whitespaces": remove_extra,
                  "escape_whitespaces": True}
    blob = spm.write_model_proto(spm.ModelProtoData(
        np.frombuffer(b"".join(data), np.uint8).copy(), offsets, np.asarray(scores, np.float32), kinds,
        None, None, None, raw_trainer=spm.encode_spec(b"", spm.TRAINER_FIELDS, trainer),
        raw_normalizer=spm.encode_spec(b"", spm.NORMALIZER_FIELDS, normalizer)))
    return spm.read_model_proto(blob)


def fuse_sentencepiece_bpe(hf):
    """The fused runner for a Llama-style BPE ``HuggingFaceModel``, or None (module docstring)."""
    from ..formats import sentencepiece_model as spm
    from .sentencepiece import SentencePieceModel
    cfg = hf.config
    if (hf.kind != "BPE" or hf.bpe_prefix or hf.bpe_suffix or hf.ignore_merges or not hf.byte_fallback
            or hf.unk_id < 0 or (hf.byte_tok < 0).any()):
        return None
    prefix = _bpe_dummy_prefix(cfg.get("normalizer"), cfg.get("pre_tokenizer"))
    if prefix is None or any(t is None or t == "" for t in hf.model_tokens):
        return None
    n = len(hf.model_tokens)
    kinds = np.full(n, spm.NORMAL, np.int8)
    kinds[hf.byte_tok] = spm.BYTE
    kinds[hf.unk_id] = spm.UNKNOWN
    keys, values = hf.merge_ids
    low = np.int64(0xFFFFFFFF)
    parts = np.concatenate([keys >> 32, keys & low, values & low])
    if parts.size and (kinds[parts] != spm.NORMAL).any():
        return None   # a merge of byte pieces or of the unknown piece: SentencePiece never merges them
    try:   # HF's own pair -> rank table (a repeated pair keeps its last rank)
        model = SentencePieceModel(_proto(hf, spm.BPE, hf.model_tokens, np.zeros(n), kinds, prefix),
                                   merges=hf._keep[1])
    except ValueError:
        return None   # e.g. a piece twice: the stage-by-stage path reports what it reports
    contents = [a["content"] for a in hf.added] + [hf.model_tokens[hf.unk_id]]
    lead = _NO_CHARS
    if cfg.get("pre_tokenizer") is not None and prefix:
        # HF's Metaspace prepends "▁" only to a text that does not start with one (or a space)
        lead = np.zeros(0x110000, np.bool_)
        lead[[0x20, 0x2581]] = True
    return FusedSentencePiece(model, _NO_CHARS, lead, *_strings(contents))


class FusedSentencePiece:
    """A SentencePiece-shaped tokenizer.json on ``SentencePieceModel``'s kernels, for the texts
    where the two compute the same (``flags`` / ``lead_flags`` / ``strings``: see
    ``kernels.charsmap.flagged_rows``; a flagged text runs stage by stage)."""

    def __init__(self, model, flags, lead_flags, strings, string_offsets):
        self.model = model
        self._check = (flags, lead_flags, strings, string_offsets)

    def _flagged(self, buf, offsets):
        return flagged_rows(buf, offsets, *self._check)

    def encode(self, text, split_special_tokens):
        """The model ids of one text, or None when it must run stage by stage."""
        buf, offsets, _ = pack_utf8([text])
        if self._flagged(buf, offsets)[0]:
            return None
        return self.model.encode(text)

    def encode_batch(self, texts, split_special_tokens, num_threads, offsets):
        """As ``hf_fused.FusedByteLevel.encode_batch``; None with ``offsets`` (they run stage by stage)."""
        if offsets:
            return None
        buf, off, _ = pack_utf8(texts)
        flagged = self._flagged(buf, off)
        rows = None
        if flagged.any():
            rows = np.flatnonzero(~flagged).tolist()
            if not rows:
                return None
            texts = [texts[k] for k in rows]
            buf, off, _ = pack_utf8(texts)
        with thread_limit(num_threads):
            ids, doc_off = self.model.encode_packed(buf, off, texts)
        return rows, (ids, None, None, doc_off, None, None)
