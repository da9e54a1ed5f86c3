"""ModelProto bytes for trained pieces and meta pieces (score 0) -> Tokenizer."""

from ...formats import sentencepiece_model as smp
from .sentences import spec_charsmap


def build_tokenizer(pieces, meta, spec, model_type):
    """The Tokenizer of ``pieces`` (``[(piece, score), ...]``) around the meta pieces ``meta``
    (``{id: (piece, type)}``, ``options.meta_pieces``): each id is a meta piece or the next
    trained piece, as sentencepiece's ``Serialize`` lays them out. ``model_type`` is
    ``smp.UNIGRAM``, ``smp.BPE``, ``smp.WORD`` or ``smp.CHAR``, ``spec`` the options."""
    total = len(meta) + len(pieces)
    if max(meta) >= total:
        raise ValueError(f"meta piece id {max(meta)} is past the {total} pieces of the trained vocabulary")
    trained = iter(pieces)
    entries = []
    for i in range(total):
        if i in meta:
            entries.append((meta[i][0], 0.0, meta[i][1]))
        else:
            p, score = next(trained)
            entries.append((p, float(score), smp.NORMAL))
    parts = []
    for p, score, t in entries:
        body = smp._len_field(1, p.encode("utf-8")) + smp._key(2, smp.FIXED32) + smp.pack_float(score)
        if t != smp.NORMAL:
            body += smp._key(3, smp.VARINT) + smp._varint(t)
        parts.append(smp._len_field(1, body))
    trainer = smp.encode_spec(b"", smp.TRAINER_FIELDS, dict(
        model_type=model_type, vocab_size=len(entries), split_digits=spec["split_digits"],
        treat_whitespace_as_suffix=spec["treat_whitespace_as_suffix"],
        byte_fallback=spec["byte_fallback"],
        unk_id=spec["unk_id"], bos_id=spec["bos_id"], eos_id=spec["eos_id"], pad_id=spec["pad_id"]))
    name, blob = spec_charsmap(spec)
    norm = smp.encode_spec(b"", smp.NORMALIZER_FIELDS, dict(
        name=name, precompiled_charsmap=blob,
        add_dummy_prefix=spec["add_dummy_prefix"], remove_extra_whitespaces=spec["remove_extra_whitespaces"],
        escape_whitespaces=True))
    parts.append(smp._len_field(2, trainer))
    parts.append(smp._len_field(3, norm))
    return smp.tokenizer_from_proto(b"".join(parts))
