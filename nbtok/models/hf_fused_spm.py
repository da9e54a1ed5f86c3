"""tokenizer.json files converted from SentencePiece run on SentencePiece's kernels.

**BPE.** Llama 2, Mistral, Phi-3, Yi and most SentencePiece-derived BPE files have one shape: the
normalizer ``Prepend("▁")`` + ``Replace(" ", "▁")`` (or only the ``Replace``; or no normalizer and
a ``Metaspace`` pre-tokenizer that does not split), no other pre-tokenizer, and a ``BPE`` model
with ``byte_fallback``, no dropout, subword prefix or suffix. HF runs BPE over the whole text as
one word: characters in the vocabulary are symbols, any other character is its ``<0xXX>``
bytes, and adjacent symbols merge by their rank in ``merges``, the lowest first and the
leftmost on a tie. SentencePiece BPE is the same loop with the rank of a pair taken from the
score of its result (``models.bpe.sentencepiece``); given the file's merge ranks instead
(``SentencePieceModel(proto, merges=...)``) it computes exactly HF's merges. The normalizer is
SentencePiece's with no charsmap, ``escape_whitespaces`` on, ``remove_extra_whitespaces`` off
and ``add_dummy_prefix`` as the ``Prepend`` (HF prepends only to a non-empty text, as
SentencePiece does; HF's ``Metaspace`` also skips a text that starts with a space or ``▁``).
A BPE file converted with the model's charsmap (BARThez: the Unigram shapes below, around a
``BPE`` model) runs the same way behind SentencePiece's normalizer with the charsmap, the texts
flagged as for Unigram, when no merge makes a piece with ``▁`` past its start (HF merges word by
word).

**Unigram.** The files HF's converters write for T5 (and Marian) normalize with the model's
charsmap (``Precompiled``) and then either ``WhitespaceSplit`` + ``Metaspace``, or ``Strip`` (right) +
``Replace(" {2,}", "▁")`` + ``Metaspace``, both splitting before each ``▁``: on the texts below
that is SentencePiece's normalizer with ``add_dummy_prefix``, ``remove_extra_whitespaces`` and
``escape_whitespaces``, cut before each ``▁``. HF's Unigram then runs word by word in f64
(``models.unigram.huggingface``, with a word cache), not SentencePiece's float32 lattice over the whole
text, whose rounding differs on near-ties. The two normalizations differ where HF's
``Precompiled`` looks up a grapheme cluster whole and SentencePiece matches the longest rule
(a text holding a character that continues a multi-character rule), where a character maps to
whitespace other than U+0020 (HF's splits and ``Strip`` take all Unicode whitespace), where the
text holds ``▁`` or a character mapped to it, where a grapheme cluster of several characters
starts with one that a rule starts with (HF replaces the whole cluster by the shortest rule
that is a prefix of it), and, after ``Strip``, where the first character maps to nothing: such
texts are flagged from the charsmap's own rules (``normalizers.charsmap``).

Texts that hold an added token or the unknown token's text, or a character the charsmap maps to
text holding a character of a ``normalized`` added token, run stage by stage: HF cuts added
tokens out before normalizing (the normalized ones after), and SentencePiece does not know
them. Checking a text costs one pass of ``normalizers.charsmap.flagged_rows`` over the batch's
bytes. Offsets run stage by stage (only ids are fused).
"""
import numpy as np

from .._jit import EntryPoints, thread_limit
from ..normalizers.charsmap import flagged_rows
from ..text import pack_utf8, utf8

SPACE = "\u2581"
_NO_CHARS = np.zeros(0, np.uint8)
# what str.isspace accepts: Unicode White_Space (HF's char::is_whitespace) and U+001C..U+001F
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) \
    + "\u2028\u2029\u202f\u205f\u3000"


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
    """The fused runner for a SentencePiece-style BPE ``HuggingFaceModel``, or None (module docstring)."""
    import base64
    from ..formats import sentencepiece_model as spm
    from .sentencepiece import SentencePieceModel
    cfg = hf.config
    if (hf.kind != "BPE" or hf.bpe_prefix or hf.bpe_suffix or hf.ignore_merges or hf.unk_id < 0
            or (hf.byte_fallback and (hf.byte_tok < 0).any()) or not (hf.byte_fallback or hf.fuse_unk)
            or any(t is None or t == "" for t in hf.model_tokens)):
        return None   # (sentencepiece fuses a run of unknown characters into one unknown id)
    normalizer, pre = cfg.get("normalizer"), cfg.get("pre_tokenizer")
    prefix = _bpe_dummy_prefix(normalizer, pre)
    shape = _unigram_shape(normalizer, pre) if prefix is None else None
    if prefix is None and shape is None:
        return None
    n = len(hf.model_tokens)
    kinds = np.full(n, spm.NORMAL, np.int8)
    if hf.byte_fallback:
        kinds[hf.byte_tok] = spm.BYTE
    kinds[hf.unk_id] = spm.UNKNOWN
    keys, values = hf.merge_ids
    low = np.int64(0xFFFFFFFF)
    parts = np.concatenate([keys >> 32, keys & low, values & low])
    if parts.size and (kinds[parts] != spm.NORMAL).any():
        return None   # a merge of byte pieces or of the unknown piece: SentencePiece never merges them
    charsmap = b""
    if shape is not None:
        # HF merges word by word (Metaspace splits before each "▁"); SentencePiece over the whole
        # text, which is the same while no merge makes a piece with "▁" past its start
        if any(SPACE in hf.model_tokens[i][1:] for i in np.unique(values & low).tolist()):
            return None
        try:
            charsmap = base64.b64decode(shape[0], validate=True) if shape[0] else b""
        except (ValueError, TypeError):
            return None
    try:   # HF's own pair -> rank table (a repeated pair keeps its last rank)
        model = SentencePieceModel(_proto(hf, spm.BPE, hf.model_tokens, np.zeros(n), kinds, shape is not None or prefix,
                                          charsmap, remove_extra=shape is not None), merges=hf._keep[1])
    except ValueError:
        return None   # e.g. a piece twice: the stage-by-stage path reports what it reports
    contents = [a["content"] for a in hf.added] + [hf.model_tokens[hf.unk_id]]
    if shape is not None:
        flags = _charsmap_flags(model.N[0], model.N[1], [a["content"] for a in hf.added if a["normalized"]],
                                shape[1])
        if flags is None:
            return None
    elif pre is not None and prefix:
        # HF's Metaspace prepends "▁" only to a text that does not start with one (or a space)
        from ..normalizers.charsmap import AT_START
        flags = np.zeros(0x110000, np.uint8)
        flags[[0x20, 0x2581]] = AT_START
    else:
        flags = _NO_CHARS
    return FusedSentencePiece(model, flags, *_strings(contents))


def _unigram_shape(normalizer, pre):
    """``(charsmap base64 or None, strips)`` when the stages are one of the two Unigram shapes
    (module docstring), else None; ``strips``: the ``Strip`` + ``Replace`` shape."""
    def precompiled(cfg):
        return isinstance(cfg, dict) and cfg.get("type") == "Precompiled"
    items = normalizer.get("normalizers") if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence" \
        else [normalizer]
    if not isinstance(items, list) or not items or not precompiled(items[0]):
        return None
    charsmap = items[0].get("precompiled_charsmap")
    if len(items) == 1:
        steps = pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else None
        if (isinstance(steps, list) and len(steps) == 2 and isinstance(steps[0], dict)
                and steps[0].get("type") == "WhitespaceSplit" and _metaspace_prefix(steps[1], split=True)):
            return charsmap, False
        return None
    strip, replace = items[1:] if len(items) == 3 else (None, None)
    if (isinstance(strip, dict) and strip.get("type") == "Strip" and not strip.get("strip_left", True)
            and strip.get("strip_right", True) and isinstance(replace, dict) and replace.get("type") == "Replace"
            and isinstance(replace.get("pattern"), dict) and replace["pattern"].get("Regex") == " {2,}"
            and replace.get("content") == SPACE and _metaspace_prefix(pre, split=True)):
        return charsmap, True
    return None


def _charsmap_flags(units, pool, normalized_contents, strips):
    """The ``flags`` of ``normalizers.charsmap.flagged_rows`` for a Unigram file whose charsmap is
    ``units`` / ``pool`` (module docstring), or None when the charsmap cannot be read back (then
    the file runs stage by stage)."""
    from ..normalizers import charsmap as K
    from ..pipeline.unicode import grapheme_joiners
    value, role, ok = K.charsmap_chars(units)
    if not ok:
        return None
    raw = pool.tobytes()
    flags = np.zeros(0x110000, np.uint8)
    flags[(role & K.FOLLOWS) != 0] |= K.ANYWHERE
    # HF looks a grapheme cluster up whole and, where a rule is a prefix of it, replaces the
    # whole cluster by the first (shortest) such rule: "E" + U+0301 becomes what "E" becomes
    flags[(value >= 0) | ((role & K.STARTS) != 0)] |= K.BEFORE_JOINER
    joiners = grapheme_joiners()
    flags[joiners] |= K.JOINER
    flags[joiners & ((flags & K.BEFORE_JOINER) != 0)] |= K.ANYWHERE   # (a Prepend or CR with a rule)
    content_chars = set("".join(normalized_contents))
    for c in WHITESPACE:
        if c != " " and value[ord(c)] < 0:
            flags[ord(c)] |= K.ANYWHERE
    flags[ord(SPACE)] |= K.ANYWHERE
    for cp in np.flatnonzero(value >= 0).tolist():
        v = int(value[cp])
        try:
            mapped = raw[v:raw.index(b"\0", v)].decode("utf-8")
        except (UnicodeDecodeError, ValueError):
            return None
        c = chr(cp)
        if (SPACE in mapped or any(ch in WHITESPACE and ch != " " for ch in mapped)
                or (mapped != c and not content_chars.isdisjoint(mapped))):
            flags[cp] |= K.ANYWHERE
        if strips and not mapped:
            flags[cp] |= K.AT_START
    return flags


def fuse_sentencepiece_unigram(hf):
    """The fused runner for a SentencePiece-style Unigram ``HuggingFaceModel``, or None."""
    import base64
    from .sentencepiece import normalizer_arrays
    cfg = hf.config
    tokens = hf.model_tokens
    if (hf.kind != "Unigram" or hf.unk_id < 0 or hf.byte_fallback or any(not t for t in tokens)
            or len(set(tokens)) != len(tokens)):
        return None   # (a piece twice: HF's lookup by text picks one of the two ids)
    shape = _unigram_shape(cfg.get("normalizer"), cfg.get("pre_tokenizer"))
    if shape is None:
        return None
    charsmap, strips = shape
    try:
        blob = base64.b64decode(charsmap, validate=True) if charsmap else b""
        spec = {"precompiled_charsmap": blob, "add_dummy_prefix": True, "remove_extra_whitespaces": True,
                "escape_whitespaces": True}
        N = normalizer_arrays(spec)
    except (ValueError, TypeError):
        return None   # the stage-by-stage path reports a broken charsmap
    contents = [a["content"] for a in hf.added] + [hf.model_tokens[hf.unk_id]]
    # HF finds a normalized added token in the normalized text: a character the charsmap maps
    # to text holding one of its characters may make one (the others HF finds in the raw text)
    flags = _charsmap_flags(N[0], N[1], [a["content"] for a in hf.added if a["normalized"]], strips)
    if flags is None:
        return None
    return FusedUnigram(N, (hf._G, hf._V, _automaton(hf, N[1])), flags, *_strings(contents))


def _automaton(hf, pool):
    """The Aho-Corasick automaton of the Unigram trie (``models.unigram.huggingface.best_path_automaton``),
    or empty arrays where it cannot serve (pieces or charsmap not valid UTF-8, a limit of
    ``models.unigram.automaton``): then each word takes the trie walk."""
    from .unigram.automaton import build_automaton
    from ..kernels.trie import labelled_units
    from .unigram.viterbi import pack_lattice_trie
    from .unigram.words import lattice_utf8_ok
    none = (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.float64))
    bc, value = hf._G[0], hf._G[1]
    mv = hf.model_vocab
    if not lattice_utf8_ok(mv.piece_bytes, mv.piece_offsets, np.arange(len(hf.model_tokens)), pool):
        return none
    units = labelled_units(bc, value)
    if units.dtype != np.uint32:
        return none
    au, outs, rec = build_automaton(units, bc, pack_lattice_trie(value, hf.scores.astype(np.float32)))
    if not au.shape[0]:
        return none
    records = np.empty(rec.size, np.int64)   # (piece, HF's f64 score) per record
    records[0::2] = rec[0::2]
    records[1::2] = np.asarray(hf.scores, np.float64)[rec[0::2] >> 10].view(np.int64)
    return au, outs, records, records.view(np.float64)


class FusedSentencePiece:
    """A SentencePiece-shaped tokenizer.json on ``SentencePieceModel``'s kernels, for the texts
    where the two compute the same (``flags`` / ``strings``: see ``normalizers.charsmap.flagged_rows``;
    a flagged text runs stage by stage)."""

    def __init__(self, model, flags, strings, string_offsets):
        self.model = model
        self._check = (flags, strings, string_offsets)
        self._eps = EntryPoints()

    def _flagged(self, buf, offsets):
        return self._eps.call(flagged_rows, buf, offsets, *self._check)

    def encode(self, text, split_special_tokens):
        """The model ids of one text, or None when it must run stage by stage."""
        buf = np.frombuffer(utf8(text), np.uint8)
        if self._flagged(buf, np.array([0, buf.size], np.int64))[0]:
            return None
        return self._encode_one(text, buf)

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
            ids, doc_off = self._encode_packed(buf, off, texts)
        return rows, (ids, None, None, doc_off, None, None)

    def _encode_one(self, text, buf):
        return self.model.encode(text)

    def _encode_packed(self, buf, off, texts):
        return self.model.encode_packed(buf, off, texts)


class FusedUnigram(FusedSentencePiece):
    """A SentencePiece-style Unigram tokenizer.json on ``models.unigram.huggingface`` (module docstring)."""

    def __init__(self, N, H, flags, strings, string_offsets):
        self.N, self.H = N, H
        self._check = (flags, strings, string_offsets)
        self._eps = EntryPoints()

    def _encode_one(self, text, buf):
        from .unigram import huggingface as K
        return self._eps.call(K.encode_one, buf, self.N, self.H)

    def _encode_packed(self, buf, off, texts):
        """``(ids, doc_offsets)``: one parallel kernel call, as ``SentencePieceModel.encode_packed``."""
        import numba
        from .unigram import huggingface as K
        from ..kernels.ragged import BatchLayout
        L = BatchLayout(off, buf.shape[0], numba.get_num_threads())
        K.encode_batch((buf, off), self.N, self.H, L.bounds, L.workers, (L.out_offsets, L.out, L.counts, L.used))
        return L.ragged(lambda d: K.encode_one(buf[off[d]:off[d + 1]], self.N, self.H))
