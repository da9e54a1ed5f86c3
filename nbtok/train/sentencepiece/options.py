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
    "byte_fallback", "treat_whitespace_as_suffix", "allow_whitespace_only_pieces",
    "user_defined_symbols", "control_symbols", "required_chars", "normalization_rule_tsv",
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
    if len(set(ids)) != len(ids) or max(ids) >= len(ids):
        raise NotImplementedError("train_sentencepiece: meta piece ids must be distinct and dense "
                                  "from 0 (other layouts are not implemented by nbtok yet)")
    return spec


def _norm(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v
