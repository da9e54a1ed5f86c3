"""A sentencepiece model as an HF ``tokenizers`` ``tokenizer.json`` (``SentencePieceModel.to_huggingface_json``).

The layout follows HF's own converters (transformers ``convert_slow_tokenizer.py``: ``SpmConverter``,
``LlamaConverter``; tokenizers ``SentencePieceUnigramTokenizer.from_spm``), with the choices made
so that ``tokenizers`` reproduces sentencepiece's ids wherever its components can:

* **normalizer** (sentencepiece normalizes the whole sentence before the model sees it):
  ``Precompiled(charsmap)`` when the model has one; with ``remove_extra_whitespaces``, runs of
  U+0020 collapse (``Replace(" {2,}", " ")``) and one leading / trailing U+0020 is removed
  (``Replace("\\A |[ ▁]+(?![\\s\\S])", "")``: only U+0020, and at the end also "▁", as
  sentencepiece, where HF's ``Strip`` would also remove tabs and other Unicode spaces);
  ``Prepend("▁")`` for ``add_dummy_prefix`` (HF's ``Prepend`` skips an empty string, as
  sentencepiece does); ``Replace(" ", "▁")`` for
  ``escape_whitespaces``. This is LlamaConverter's legacy form generalized; ``Metaspace``'s
  own prepending is not used because it skips texts that already start with "▁".
* **pre_tokenizer**: ``Metaspace(prepend_scheme="never", split=true)`` when splitting at "▁"
  cannot change a result (every piece holds "▁" only as its first character, and "▁" is a
  piece); otherwise none, so the model runs over the whole sentence as sentencepiece does.
* **model**: ``Unigram`` (vocab with the model's float32 scores, ``unk_id``, ``byte_fallback``)
  or ``BPE`` with merges derived from the pieces as HF's ``generate_merges`` does: every split of a
  piece into two pieces, ranked by the score of the piece (higher first), splits of one piece by
  the ids of their halves. Reserved pieces (control, unknown, byte) never take part in merges,
  as in sentencepiece. ``fuse_unk`` on (sentencepiece merges consecutive unknowns).
* **added_tokens**: control and unknown pieces as special tokens. User-defined pieces are not added
  tokens (HF matches those in the raw text and normalizes each segment on its own, or matches the
  content run through the whole normalizer): Unigram keeps them in the vocabulary with
  sentencepiece's user-defined lattice score; BPE isolates them in the normalized text with a
  ``Split`` pre-tokenizer (longest first, i.e. leftmost-longest as sentencepiece's prefix matcher)
  and sets ``ignore_merges`` so that they come out whole.
* **decoder**: ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse`` and ``Strip(left=1)`` when a
  dummy prefix is added or leading whitespace removed (sentencepiece's decoder then drops the
  first space).
* **post_processor**: none by default (``sentencepiece.encode`` adds nothing); ``add_bos`` /
  ``add_eos`` give a ``TemplateProcessing`` with the model's ``<s>`` / ``</s>``.

Known deviations of ``tokenizers`` from sentencepiece that no tokenizer.json can remove (they are
HF's, and HF's own converter has them too) are listed in ``KNOWN_DEVIATIONS``.
"""
import base64

import numpy as np

from .sentencepiece_model import BPE, CONTROL, NORMAL, UNIGRAM, UNKNOWN, UNUSED, USER_DEFINED

SPACE = "\u2581"

KNOWN_DEVIATIONS = {
    "precompiled": "HF's Precompiled normalizer applies the charsmap per grapheme cluster (a rule for a "
                   "whole cluster shorter than 6 bytes, else per character); sentencepiece takes the "
                   "longest match over the byte stream. Texts with combining / joining sequences can "
                   "normalize differently.",
    "unigram_tie": "HF's Unigram sums scores in float64 per pre-token, sentencepiece in float32 over the "
                   "sentence: segmentations whose scores differ by float32 rounding can flip.",
    "bpe_split_order": "HF ranks each split of a piece separately (by the ids of its halves); sentencepiece "
                       "gives all splits of a piece the same priority and takes the leftmost. Two "
                       "overlapping candidate pairs forming the same piece ([x, y, z] with x+y == y+z) can "
                       "merge differently.",
    "bpe_score_tie": "pieces with equal scores: sentencepiece merges the leftmost candidate, HF the "
                     "lower-ranked merge (id order).",
    "user_defined_raw": "sentencepiece matches user-defined pieces in the raw text before the charsmap and "
                        "copies them unchanged; HF normalizes first. A piece the charsmap changes (\"▁the\" "
                        "under nmt_nfkc) or one whose last character composes with what follows "
                        "(\"ing\" + U+0301 -> \"in\u01f5\" under NFKC) is then not found.",
    "bpe_ignore_merges": "a BPE model with user-defined pieces is written with ignore_merges (so that the "
                         "isolated user-defined pre-tokens come out whole): any pre-token (a word with "
                         "Metaspace splitting) that is itself a piece is then emitted whole, where "
                         "sentencepiece's merges might not reach it.",
    "reserved_text": "literal text spelling a control / unknown piece (\"<s>\", \"<unk>\") is that special "
                     "token in HF; a Unigram model can also match byte pieces (\"<0x41>\") spelled in the "
                     "text. sentencepiece never matches reserved pieces in text.",
    "deleted_only": "without remove_extra_whitespaces, a text the charsmap deletes entirely (\"\\x01\" "
                    "under nmt_nfkc) is \"▁\" for sentencepiece and empty for HF (Prepend skips empty text).",
    "leading_ws_decode": "with remove_extra_whitespaces, sentencepiece's decoder drops one leading \"▁\" "
                         "per piece until text appears; the Strip decoder drops all leading spaces, which "
                         "differs for a whitespace-only piece (\"▁▁\") at the start of the ids.",
    "unk_decode": "HF decodes the unknown id as its piece (\"<unk>\"), sentencepiece as \" \u2047 \".",
}


def _piece_strings(model):
    vocab = model.vocab
    out = []
    for i in range(len(vocab)):
        p = vocab.piece(i)
        try:
            out.append(p.decode("utf-8"))
        except UnicodeDecodeError:
            raise ValueError(f"sentencepiece piece {i} ({p!r}) is not valid UTF-8: a tokenizer.json "
                             "vocabulary holds strings") from None
    return out


def _word_split_ok(pieces, kinds, V):
    """True when splitting the normalized text before each "▁" cannot change the result."""
    space_ok = False
    for i in range(V):
        k = kinds[i]
        if k not in (NORMAL, USER_DEFINED, UNUSED):
            continue
        p = pieces[i]
        if p == SPACE and k == NORMAL:
            space_ok = True
        if SPACE in p[1:]:
            return False
    return space_ok


def bpe_merges(pieces, kinds, scores):
    """HF's ``generate_merges`` over the mergeable pieces: ``[(left, right)]`` in rank order.

    Each NORMAL / UNUSED piece contributes every split into two mergeable pieces (character
    boundaries), ordered by (id of left, id of right); pieces are ordered by score, higher first,
    then by id. Also returns the number of multi-character pieces no split can form (a half is not
    a piece: sentencepiece can still reach some of them through an unknown character)."""
    mergeable = {p: i for i, p in enumerate(pieces) if kinds[i] in (NORMAL, UNUSED)}
    order = sorted((i for i, p in enumerate(pieces) if kinds[i] in (NORMAL, UNUSED) and len(p) > 1),
                   key=lambda i: (-float(scores[i]), i))
    merges = []
    unreachable = 0
    for i in order:
        p = pieces[i]
        local = []
        for k in range(1, len(p)):
            a = mergeable.get(p[:k])
            if a is None:
                continue
            b = mergeable.get(p[k:])
            if b is not None:
                local.append((a, b))
        if not local:
            unreachable += 1
        local.sort()
        merges.extend((pieces[a], pieces[b]) for a, b in local)
    return merges, unreachable


def _regex_escape(s):
    """``s`` as a literal in both Oniguruma (HF) and Python ``regex`` (nbtok)."""
    return "".join("\\" + c if c in "\\^$.|?*+()[]{}-/#&~ " else c for c in s)


def _added_token(i, content, special, normalized):
    return {"id": int(i), "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": bool(normalized), "special": bool(special)}


def spm_to_huggingface_json(model, add_bos=False, add_eos=False):
    """The ``tokenizer.json`` dict for a ``SentencePieceModel`` (see the module docstring)."""
    proto = model.proto
    t, nspec = proto.trainer, proto.normalizer
    mt = t["model_type"]
    if mt not in (UNIGRAM, BPE):
        raise NotImplementedError(f"sentencepiece model_type {mt}: only Unigram and BPE convert to tokenizer.json")
    escape = bool(nspec["escape_whitespaces"])
    dummy = bool(nspec["add_dummy_prefix"])
    rm_ws = bool(nspec["remove_extra_whitespaces"])
    suffix = bool(t["treat_whitespace_as_suffix"])
    if suffix and dummy:
        raise NotImplementedError("treat_whitespace_as_suffix with add_dummy_prefix: HF tokenizers has no "
                                  "normalizer that appends the dummy \"▁\" (and HF's converters do not handle it)")
    if model.denorm is not None:
        raise NotImplementedError("a sentencepiece denormalizer_spec charsmap has no tokenizer.json equivalent")
    kinds = model.vocab.kinds
    V = model.V
    pieces = _piece_strings(model)
    scores = model.vocab.scores
    if len(set(pieces)) != V:
        raise ValueError("sentencepiece model has duplicate pieces; a tokenizer.json vocabulary cannot hold them")
    if np.any(kinds == UNUSED):
        raise NotImplementedError(
            "the model has UNUSED pieces: sentencepiece leaves them out of the Unigram lattice / re-splits "
            "them after BPE merging, and a tokenizer.json model has no such pieces")
    ws = SPACE if escape else " "

    # ---- user-defined pieces. sentencepiece copies them through the normalizer untouched and
    # then (Unigram) scores them in the lattice like any piece, or (BPE) cuts them out of the
    # normalized sentence leftmost-longest as frozen symbols. Neither is an HF added token: HF
    # matches added tokens in the raw text (then normalizes each segment on its own: dummy prefix
    # and whitespace stripping per segment) or in the normalized text against the token's content
    # *run through the whole normalizer* (so "ing" would become "▁ing").
    vocab_scores = [float(x) for x in scores]
    added = []
    ud = []
    for i in range(V):
        k = kinds[i]
        if k in (CONTROL, UNKNOWN):
            added.append(_added_token(i, pieces[i], True, False))
        elif k == USER_DEFINED:
            ud.append(pieces[i])
            if mt == UNIGRAM:
                # exactly sentencepiece's lattice: the piece with its user-defined score
                vocab_scores[i] = float(model.lscore[i])
    if ud and mt == BPE and any(" " in p for p in ud):
        raise NotImplementedError("a user-defined piece containing U+0020 cannot be isolated in the normalized text")

    # ---- normalizer
    norms = []
    charsmap = nspec["precompiled_charsmap"]
    if charsmap:
        norms.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(bytes(charsmap)).decode("ascii")})
    if rm_ws:
        norms.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
        # one leading U+0020; at the end every trailing space, and with escaping also a literal
        # "▁" (sentencepiece strips trailing kSpaceSymbols from its output, whatever their origin)
        tail = "[ \u2581]+" if escape else " "
        norms.append({"type": "Replace", "pattern": {"Regex": r"\A |" + tail + r"(?![\s\S])"}, "content": ""})
    if dummy:
        norms.append({"type": "Prepend", "prepend": ws})
    if escape:
        norms.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    normalizer = {"type": "Sequence", "normalizers": norms} if norms else None

    # ---- pre-tokenizer
    pres = []
    if ud and mt == BPE:
        # the user-defined pieces as their own pre-tokens (longest first = leftmost-longest); the
        # BPE model emits a pre-token that is a piece as is (ignore_merges), see "bpe_ignore_merges"
        alts = sorted(set(ud), key=lambda p: (-len(p), p))
        pres.append({"type": "Split", "pattern": {"Regex": "|".join(_regex_escape(p) for p in alts)},
                     "behavior": "Isolated", "invert": False})
    if escape and not suffix and _word_split_ok(pieces, kinds, V):
        pres.append({"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "never", "split": True})
    pre = None if not pres else pres[0] if len(pres) == 1 else {"type": "Sequence", "pretokenizers": pres}

    # ---- model
    bf = bool(t["byte_fallback"])
    unk_id = model.unk_id
    if mt == UNIGRAM:
        hf_model = {"type": "Unigram", "unk_id": int(unk_id),
                    "vocab": [[pieces[i], vocab_scores[i]] for i in range(V)], "byte_fallback": bf}
    else:
        merges, _ = bpe_merges(pieces, kinds, scores)
        hf_model = {"type": "BPE", "dropout": None, "unk_token": pieces[unk_id], "continuing_subword_prefix": None,
                    "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": bf, "ignore_merges": bool(ud),
                    "vocab": {p: i for i, p in enumerate(pieces)}, "merges": [[a, b] for a, b in merges]}

    # ---- decoder
    decs = []
    if escape:
        decs.append({"type": "Replace", "pattern": {"String": SPACE}, "content": " "})
    if bf:
        decs.append({"type": "ByteFallback"})
    decs.append({"type": "Fuse"})
    if dummy or rm_ws:
        # while no text is out, sentencepiece's decoder drops the leading "▁" of a piece: of the
        # first piece only without remove_extra_whitespaces, else of each one (all leading
        # spaces here; it differs only for a whitespace-only piece such as "▁▁" at the start)
        decs.append({"type": "Strip", "content": " ", "start": (1 << 30) if rm_ws else 1, "stop": 0})
    decoder = {"type": "Sequence", "decoders": decs}

    # ---- post-processor
    post = None
    if add_bos or add_eos:
        specials = []
        single = []
        pair = []
        if add_bos:
            if model.bos_id == unk_id or kinds[model.bos_id] != CONTROL:
                raise ValueError(f"add_bos: the model has no control piece {t['bos_piece']!r}")
            bos = pieces[model.bos_id]
            specials.append((bos, model.bos_id))
        if add_eos:
            if model.eos_id == unk_id or kinds[model.eos_id] != CONTROL:
                raise ValueError(f"add_eos: the model has no control piece {t['eos_piece']!r}")
            eos = pieces[model.eos_id]
            specials.append((eos, model.eos_id))
        for seq, tid in (("A", 0), ("B", 1)):
            part = []
            if add_bos:
                part.append({"SpecialToken": {"id": bos, "type_id": tid}})
            part.append({"Sequence": {"id": seq, "type_id": tid}})
            if add_eos:
                part.append({"SpecialToken": {"id": eos, "type_id": tid}})
            if seq == "A":
                single = list(part)
            pair.extend(part)
        post = {"type": "TemplateProcessing", "single": single, "pair": pair,
                "special_tokens": {tok: {"id": tok, "ids": [int(i)], "tokens": [tok]} for tok, i in specials}}

    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post, "decoder": decoder,
            "model": hf_model}
