"""tokenizer.json pipelines that are one of nbtok's native models run on that model's kernels.

A ``tokenizer.json`` names its stages one by one, and ``HuggingFaceModel`` can run any
combination of them stage by stage. Most real files, though, are one of a few combinations
that nbtok already runs as one fused kernel pass, whatever file they came from:

* **byte-level BPE** (GPT-2, RoBERTa, Llama 3, Qwen2, OLMo, Claude, ...): normalizer none or a
  Unicode normal form; pre-tokenizer ``ByteLevel`` with its regex, or a ``Split`` by a pattern
  nbtok's scanner knows followed by ``ByteLevel(use_regex=false)``; ``BPE`` without dropout,
  subword prefix or suffix. This is ``ByteLevelBPE`` (``models/bpe/bytelevel.py``) with the added
  tokens as its special tokens (both are found leftmost-longest before pre-tokenizing) and HF's
  Unicode tables.

``fuse(hf_model)`` returns the fused runner, or None when the file is none of these. The
``HuggingFaceModel`` keeps everything around the model step: the post-processor (template
tokens, ByteLevel offset trimming), the decoder, the vocabulary. Texts the fused pass would not
reproduce exactly run stage by stage: one holding an added token with ``lstrip`` / ``rstrip``
/ ``single_word`` (RoBERTa's ``<mask>``); one the normalizer changes, when offsets are asked
or an added token is in it (HF finds non-normalized added tokens *before* normalizing).
Checking a text is quick (``str.__contains__``, ``unicodedata.is_normalized``).
"""
import unicodedata

import numpy as np

from ..post_processors.components import whitespace_ends

_NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")


def fuse(hf):
    """The fused runner for a built ``HuggingFaceModel``, or None."""
    from .hf_fused_spm import fuse_sentencepiece_bpe, fuse_sentencepiece_unigram
    return _bytelevel(hf) or fuse_sentencepiece_bpe(hf) or fuse_sentencepiece_unigram(hf)


def _normal_form(cfg):
    """None (no normalizer), a normal form name, or False (something else)."""
    if cfg is None:
        return None
    t = cfg.get("type")
    if t in _NORMAL_FORMS:
        return t
    if t == "Sequence":
        items = cfg.get("normalizers") or []
        if not items:
            return None
        if len(items) == 1:
            return _normal_form(items[0])
    return False


def _bytelevel_pattern(cfg):
    """The regex of a byte-level pre-tokenizer nbtok's scanner runs, or None."""
    from ..pre_tokenizers.bytelevel import scanner_config
    from ..pre_tokenizers.components import GPT2_HF
    if not isinstance(cfg, dict):
        return None
    items = cfg.get("pretokenizers") if cfg.get("type") == "Sequence" else [cfg]
    if not isinstance(items, list) or not items:
        return None
    last = items[-1]
    if last.get("type") != "ByteLevel" or last.get("add_prefix_space", True):
        return None
    if len(items) == 1:
        pattern = GPT2_HF if last.get("use_regex", True) else None
    elif len(items) == 2 and not last.get("use_regex", True):
        split = items[0]
        pat = split.get("pattern")
        # the matches as pieces: Isolated keeps unmatched text as pieces of its own, Removed
        # with invert drops it; the scanner's patterns match every character, so both are one
        mode = (split.get("behavior"), bool(split.get("invert", False)))
        if (split.get("type") != "Split" or mode not in (("Isolated", False), ("Removed", True))
                or not isinstance(pat, dict) or not isinstance(pat.get("Regex"), str)):
            return None
        pattern = pat["Regex"]
    else:
        return None
    return pattern if pattern is not None and scanner_config(pattern) is not None else None


def _bytelevel(hf):
    from ..pre_tokenizers.bytelevel import Pretokenizer
    from .bytelevel import ByteLevelBPE
    cfg = hf.config
    form = _normal_form(cfg.get("normalizer"))
    pattern = _bytelevel_pattern(cfg.get("pre_tokenizer"))
    if hf.kind != "BPE" or hf.bpe_prefix or hf.bpe_suffix or form is False or pattern is None:
        return None
    if form is not None and not all(unicodedata.is_normalized(form, a["content"]) for a in hf.added):
        return None
    from ..formats.gpt2 import alphabet_bytes
    tokens = {}
    for i, t in enumerate(hf.model_tokens):
        data = alphabet_bytes(t) if t else None
        if data is not None:
            tokens[data] = i
    added = {a["content"]: a["id"] for a in hf.added}
    model_ids = np.fromiter(tokens.values(), np.int64, len(tokens))
    keys, values = hf.merge_ids
    low = np.int64(0xFFFFFFFF)
    if not np.isin(np.concatenate([keys >> 32, keys & low, values & low]), model_ids).all():
        return None   # a merge of tokens outside the byte alphabet
    in_vocab = set(tokens.values())
    try:
        model = ByteLevelBPE.from_merge_ids(tokens, keys, values, pattern,
                                            {t: i for t, i in added.items() if i not in in_vocab},
                                            whole_piece=hf.ignore_merges, utf8_only=True)
    except ValueError:
        return None   # e.g. a byte without a token: the stage-by-stage path reports it
    model.pre = Pretokenizer(pattern, unicode="hf")   # HF's Oniguruma classes, not tiktoken's
    if not model.whole_piece and _merges_reach_every_token(model, added):
        model.look_up_whole_pieces()
    model.match_special_tokens(added)
    return FusedByteLevel(hf, model, form)


def _merges_reach_every_token(model, added):
    """Whether BPE over each token's own bytes gives that token: then a pre-token that is a token
    comes out whole whether or not merges run (HF's ``ignore_merges`` false or true), and the
    kernel may look it up directly, as tiktoken does. One kernel pass over the vocabulary's
    bytes. Added tokens that the pre-tokenizer splits (``<|endoftext|>``) are never a pre-token
    and need not pass."""
    from .bpe import bytelevel as K
    from ..vocab import NORMAL
    v = model.vocab
    kinds = v.kinds.copy()
    for text, i in added.items():
        if i < kinds.size and len(model.pre.ends(text.encode("utf-8"))) > 1:
            kinds[i] = -1
    normal = np.flatnonzero(kinds == NORMAL)
    lens = np.diff(v.piece_offsets)[normal]
    ends = np.cumsum(lens)
    # the bytes of the normal tokens, one after the other
    index = np.arange(int(ends[-1]) if ends.size else 0) + np.repeat(v.piece_offsets[normal] - (ends - lens), lens)
    ids = K.encode_one_ends(v.piece_bytes[index], ends, model._M)
    return ids.shape == normal.shape and bool((ids == normal).all())


class FusedByteLevel:
    """A byte-level BPE tokenizer.json on ``ByteLevelBPE``'s kernels (see the module docstring)."""

    def __init__(self, hf, model, form):
        self.model = model
        self.form = form
        added = {a["content"]: a["id"] for a in hf.added}
        self._allowed = {False: frozenset(added),
                         True: frozenset(a["content"] for a in hf.added if not a["special"])}
        self._contents = list(added)
        self._flagged = [a["content"] for a in hf.added if a["lstrip"] or a["rstrip"] or a["single_word"]]
        # offset trimming (ByteLevel post-processor): a model token by the token table (-1), an
        # added token by the whitespace at the ends of its text; where an id is both and the
        # two differ, the fused pass cannot tell which it produced
        n = len(hf.tokens)
        self._lead, self._trail = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        self._ambiguous = np.zeros(n, np.bool_)
        for text, i in added.items():
            lead, trail = whitespace_ends(text, byte_space=False)   # as pipeline.unit_kernels.added_split
            trail = 0 if lead == len(text) else trail
            self._lead[i], self._trail[i] = lead, trail
            if i < len(hf.model_tokens) and hf.post.trim and (hf._lead[i], hf._trail[i]) != (lead, trail):
                self._ambiguous[i] = True

    def _fused_text(self, text, offsets):
        """The text the fused pass encodes for ``text`` (normalized), or None when only the
        stage-by-stage path reproduces HF: the text holds an added token that strips the
        whitespace around it or must be a single word, or the normalizer changes it and either
        offsets are asked (they index the text as given) or an added token is near."""
        if self._flagged and any(c in text for c in self._flagged):
            return None
        if self.form is None or unicodedata.is_normalized(self.form, text):
            return text
        if offsets:
            return None
        normal = unicodedata.normalize(self.form, text)
        if any(c in text or c in normal for c in self._contents):
            return None
        return normal

    def encode(self, text, split_special_tokens):
        """The model ids of one text, or None when it must run stage by stage."""
        text = self._fused_text(text, False)
        if text is None:
            return None
        return self.model.encode(text, allowed_special=self._allowed[split_special_tokens],
                                 disallowed_special=())

    def encode_batch(self, texts, split_special_tokens, num_threads, offsets):
        """``(rows, (ids, starts, ends, doc_offsets, lead, trail))`` for the texts at ``rows``
        (None: all of them), or None when none of them can be fused. ``starts``/``ends`` are
        None unless ``offsets``; so are ``lead``/``trail``, the whitespace the post-processor
        trims: -1 for a model token (its token table), the counts at an added token's ends."""
        rows, part = None, texts
        if self._flagged or self.form is not None:
            fused = [self._fused_text(t, offsets) for t in texts]
            if any(t is None for t in fused):
                rows = [k for k, t in enumerate(fused) if t is not None]
                if not rows:
                    return None
            part = fused if rows is None else [fused[k] for k in rows]
        opts = dict(allowed_special=self._allowed[split_special_tokens], disallowed_special=(),
                    num_threads=num_threads)
        if offsets:
            ids, doc_off, st, en = self.model.encode_batch_offsets(part, **opts)
            if self._ambiguous[ids].any():
                return None
        else:   # without offsets nothing is trimmed: no lead / trail
            ids, doc_off = self.model.encode_batch_ragged(part, **opts)
            return rows, (ids, None, None, doc_off, None, None)
        return rows, (ids, st, en, doc_off, self._lead[ids], self._trail[ids])
