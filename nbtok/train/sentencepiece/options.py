"""The trainer options: sentencepiece's TrainerSpec / NormalizerSpec fields, their defaults, and
which of them nbtok supports."""
DEFAULTS = dict(
    character_coverage=0.9995, byte_fallback=False, split_by_whitespace=True,
    split_by_unicode_script=True, split_by_number=True, split_digits=False,
    treat_whitespace_as_suffix=False, allow_whitespace_only_pieces=False,
    max_sentencepiece_length=16, max_sentence_length=4192, user_defined_symbols=(),
    control_symbols=(), required_chars="", unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
    unk_piece="<unk>", bos_piece="<s>", eos_piece="</s>", pad_piece="<pad>",
    unk_surface=" \u2047 ", normalization_rule_name="nmt_nfkc", normalization_rule_tsv="",
    add_dummy_prefix=True, remove_extra_whitespaces=True, input_sentence_size=0,
    shuffle_input_sentence=True, seed_sentencepiece_size=1000000, shrinking_factor=0.75,
    num_sub_iterations=2, hard_vocab_limit=True, vocabulary_output_piece_score=True,
    num_threads=16, progress=True,
)
# values other than the default that nbtok does not implement yet
UNSUPPORTED_UNLESS_DEFAULT = (
    "treat_whitespace_as_suffix", "allow_whitespace_only_pieces",
    "required_chars", "normalization_rule_tsv",
    "input_sentence_size", "split_by_whitespace",
)
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")


def resolve(options):
    """Merge ``options`` over the defaults; TypeError for an unknown name, NotImplementedError for
    a sentencepiece option nbtok does not implement."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"train_sentencepiece: unknown option(s) {', '.join(unknown)}")
    spec = dict(DEFAULTS)
    spec.update(options)
    bad = [k for k in UNSUPPORTED_UNLESS_DEFAULT
           if k in options and _norm(options[k]) != _norm(DEFAULTS[k])]
    if bad:
        raise NotImplementedError(f"train_sentencepiece: option(s) {', '.join(bad)} other than "
                                  "sentencepiece's default are not implemented by nbtok yet")
    if spec["normalization_rule_name"] not in RULES:
        raise ValueError(f"normalization_rule_name must be one of {RULES}")
    if not 0.0 < float(spec["character_coverage"]) <= 1.0:
        raise ValueError("character_coverage must be in (0, 1]")
    if int(spec["max_sentencepiece_length"]) < 1:
        raise ValueError("max_sentencepiece_length must be >= 1")
    ids = [spec[k] for k in ("unk_id", "bos_id", "eos_id", "pad_id") if spec[k] >= 0]
    if spec["unk_id"] < 0:
        raise ValueError("unk_id must be >= 0 (sentencepiece requires an unknown piece)")
    if len(set(ids)) != len(ids):
        raise ValueError(f"unk_id, bos_id, eos_id and pad_id must be distinct, not {ids}")
    for k in ("control_symbols", "user_defined_symbols"):
        if isinstance(spec[k], str):
            spec[k] = [w for w in spec[k].split(",") if w]
    return spec


def meta_pieces(spec, vocab_size):
    """``{id: (piece, type)}`` of the pieces that are not trained, laid out as sentencepiece's
    ``InitMetaPieces``: unk / bos / eos / pad at their ids, then the control symbols, the
    user-defined symbols and (with ``byte_fallback``) the 256 byte pieces ``<0x00>``.. at the
    lowest free ids. A symbol that is the bos / eos / pad piece changes that piece's type."""
    from ...formats import sentencepiece_model as smp
    meta = {}
    for k in ("unk", "bos", "eos", "pad"):
        i = int(spec[k + "_id"])
        if i >= 0:
            if i >= vocab_size:
                raise ValueError(f"{k}_id {i} is not below vocab_size {vocab_size}")
            meta[i] = (spec[k + "_piece"], smp.UNKNOWN if k == "unk" else smp.CONTROL)
    extra = [(w, smp.CONTROL) for w in spec["control_symbols"]]
    extra += [(w, smp.USER_DEFINED) for w in spec["user_defined_symbols"]]
    if spec["byte_fallback"]:
        extra += [(f"<0x{b:02X}>", smp.BYTE) for b in range(256)]
    by_piece = {p: i for i, (p, _) in meta.items() if i != spec["unk_id"]}
    seen = set()
    free = 0
    for w, kind in extra:
        if w in seen or w == spec["unk_piece"]:
            raise ValueError(f"{w!r} is already defined: duplicated symbols are not allowed")
        seen.add(w)
        if w in by_piece:  # (sentencepiece: --control_symbols=<s> makes <s> that kind)
            meta[by_piece[w]] = (w, kind)
            continue
        while free in meta:
            free += 1
        meta[free] = (w, kind)
    if len(meta) >= vocab_size:
        raise ValueError(f"vocab_size {vocab_size} leaves no room besides the {len(meta)} meta pieces")
    return meta


def _norm(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v
