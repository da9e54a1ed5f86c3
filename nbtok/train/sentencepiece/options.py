"""The trainer options: sentencepiece's TrainerSpec / NormalizerSpec fields, their defaults, and
which of them nbtok supports. Besides them, ``seed``: the seed of the sampler
``input_sentence_size`` draws with (``sentences.sample_lines``)."""
import numpy as np

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
    seed=12345678,  # (nbtok's: the seed of input_sentence_size's sampler; sentencepiece's is fixed)
)
BOOLEANS = ("treat_whitespace_as_suffix", "allow_whitespace_only_pieces", "split_by_whitespace",
            "shuffle_input_sentence")
RULES = ("nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf", "identity")


def resolve(options):
    """Merge ``options`` over the defaults; TypeError for an unknown name or a value of the
    wrong type, ValueError for a value sentencepiece refuses."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"train_sentencepiece: unknown option(s) {', '.join(unknown)}")
    spec = dict(DEFAULTS)
    spec.update(options)
    for k in BOOLEANS:
        spec[k] = _as_bool(k, spec[k])
    if spec["normalization_rule_name"] not in RULES and not spec["normalization_rule_tsv"]:
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
    _check_sampling(spec)
    spec["required_chars"] = _required_chars(spec["required_chars"])
    if spec["normalization_rule_tsv"]:  # (compiled now: a bad file fails before the input is read)
        from .sentences import spec_charsmap
        spec_charsmap(spec)
    return spec


def _check_sampling(spec):
    """``input_sentence_size`` (0: every sentence; else more than 100, as sentencepiece's
    VerifySpec), ``shuffle_input_sentence`` and ``seed``."""
    for k in ("input_sentence_size", "seed"):
        spec[k] = _as_int(k, spec[k])
    n = spec["input_sentence_size"]
    if n < 0 or 0 < n <= 100:
        raise ValueError(f"input_sentence_size must be 0 (every sentence) or more than 100, not {n}")
    if spec["seed"] < 0:
        raise ValueError(f"seed must be >= 0, not {spec['seed']}")


def _as_bool(name, v):
    """A bool option: True / False, or sentencepiece's spellings "true" / "false" / "1" / "0"
    (``compat.sentencepiece``'s option string passes them as text)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0"):
        return v.strip().lower() in ("true", "1")
    raise TypeError(f"{name} must be True or False, not {v!r}")


def _as_int(name, v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        return int(v)
    raise TypeError(f"{name} must be an int, not {v!r}")


def _required_chars(chars):
    """The characters of ``required_chars`` (str), in order, each once; U+0000 is skipped (as
    sentencepiece skips it). A space, sentencepiece's reserved unknown character U+2585 or a
    surrogate is a ValueError (sentencepiece stops on them too)."""
    if isinstance(chars, (bytes, bytearray)):
        try:
            chars = bytes(chars).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("required_chars must be UTF-8") from None
    if not isinstance(chars, str):
        raise TypeError(f"required_chars must be a str, not {type(chars).__name__}")
    out = []
    for c in chars:
        if "\ud800" <= c <= "\udfff":
            raise ValueError(f"required_chars holds a surrogate U+{ord(c):04X}, which is not a character")
        if c == " ":
            raise ValueError("required_chars must not hold a space: the normalized text has none (it is U+2581)")
        if c == "\u2585":
            raise ValueError("required_chars must not hold U+2585, sentencepiece's reserved unknown character")
        if c != "\0" and c not in out:
            out.append(c)
    return "".join(out)


def meta_pieces(spec, vocab_size, model_type="unigram"):
    """``{id: (piece, type)}`` of the pieces that are not trained, laid out as sentencepiece's
    ``InitMetaPieces``: unk / bos / eos / pad at their ids, then the control symbols, the
    user-defined symbols (a WORD model adds each one's ``▁`` form after it, as its words start
    with ``▁``) and (with ``byte_fallback``) the 256 byte pieces ``<0x00>``.. at the lowest free
    ids. A symbol that is the bos / eos / pad piece changes that piece's type."""
    from ...formats import sentencepiece_model as smp
    meta = {}
    for k in ("unk", "bos", "eos", "pad"):
        i = int(spec[k + "_id"])
        if i >= 0:
            if i >= vocab_size:
                raise ValueError(f"{k}_id {i} is not below vocab_size {vocab_size}")
            meta[i] = (spec[k + "_piece"], smp.UNKNOWN if k == "unk" else smp.CONTROL)
    extra = [(w, smp.CONTROL) for w in spec["control_symbols"]]
    for w in spec["user_defined_symbols"]:
        extra.append((w, smp.USER_DEFINED))
        if model_type == "word" and not w.startswith("\u2581"):
            extra.append(("\u2581" + w, smp.USER_DEFINED))
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
    if len(meta) > vocab_size or (len(meta) == vocab_size and model_type not in ("char", "word")):
        raise ValueError(f"vocab_size {vocab_size} leaves no room besides the {len(meta)} meta pieces")
    return meta


def progress_log(spec):
    """``log(message)``: one line on stderr per training phase, when ``progress`` is on and stderr
    is a terminal."""
    import sys
    if spec["progress"] and getattr(sys.stderr, "isatty", lambda: False)():
        return lambda msg: print(msg, file=sys.stderr, flush=True)
    return lambda msg: None
