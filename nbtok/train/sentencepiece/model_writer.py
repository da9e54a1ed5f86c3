"""ModelProto bytes for trained pieces (meta pieces first, score 0) -> Tokenizer."""

from ...formats import sentencepiece_model as smp
from .sentences import charsmap


def build_tokenizer(pieces, spec, model_type):
    """The Tokenizer of ``pieces`` (``[(piece, score), ...]`` in id order after the meta pieces)
    trained as ``model_type`` (``smp.UNIGRAM`` or ``smp.BPE``) with the options ``spec``."""
    meta = sorted((spec[k + "_id"], spec[k + "_piece"], smp.UNKNOWN if k == "unk" else smp.CONTROL)
                  for k in ("unk", "bos", "eos", "pad") if spec[k + "_id"] >= 0)
    entries = [(p, 0.0, t) for _, p, t in meta] + [(p, float(score), smp.NORMAL) for p, score in pieces]
    parts = []
    for p, score, t in entries:
        body = smp._len_field(1, p.encode("utf-8")) + smp._key(2, smp.FIXED32) + smp.pack_float(score)
        if t != smp.NORMAL:
            body += smp._key(3, smp.VARINT) + smp._varint(t)
        parts.append(smp._len_field(1, body))
    trainer = smp.encode_spec(b"", smp.TRAINER_FIELDS, dict(
        model_type=model_type, vocab_size=len(entries), split_digits=spec["split_digits"],
        unk_id=spec["unk_id"], bos_id=spec["bos_id"], eos_id=spec["eos_id"], pad_id=spec["pad_id"]))
    norm = smp.encode_spec(b"", smp.NORMALIZER_FIELDS, dict(
        name=spec["normalization_rule_name"], precompiled_charsmap=charsmap(spec["normalization_rule_name"]),
        add_dummy_prefix=spec["add_dummy_prefix"], remove_extra_whitespaces=spec["remove_extra_whitespaces"],
        escape_whitespaces=True))
    parts.append(smp._len_field(2, trainer))
    parts.append(smp._len_field(3, norm))
    return smp.tokenizer_from_proto(b"".join(parts))
