"""Lengths of encoded batches in a tokenizer.json pipeline: the file's own ``truncation`` and
``padding`` (read and applied as HF does on every encode), and merging ragged results of texts
that took different paths."""
import numpy as np

from .units import int_id


def truncation_params(cfg):
    """``(max_length, left)`` of a tokenizer.json ``truncation`` object, or None."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError("tokenizer.json 'truncation' must be an object or null")
    max_length = int_id(cfg.get("max_length"), "truncation max_length")
    direction = cfg.get("direction", "Right")
    if direction not in ("Right", "Left"):
        raise ValueError(f"tokenizer.json truncation: unknown direction {direction!r}")
    strategy = cfg.get("strategy", "LongestFirst")
    if strategy not in ("LongestFirst", "OnlyFirst", "OnlySecond"):
        raise ValueError(f"tokenizer.json truncation: unknown strategy {strategy!r}")
    return max_length, direction == "Left"


def padding_params(cfg):
    """``(fixed length or None, pad_to_multiple_of or None, left, pad_id)`` of a tokenizer.json
    ``padding`` object, or None."""
    if cfg is None:
        return None
    if not isinstance(cfg, dict):
        raise ValueError("tokenizer.json 'padding' must be an object or null")
    strategy = cfg.get("strategy", "BatchLongest")
    if strategy == "BatchLongest":
        fixed = None
    elif isinstance(strategy, dict) and list(strategy) == ["Fixed"]:
        fixed = int_id(strategy["Fixed"], "padding Fixed length")
    else:
        raise ValueError(f"tokenizer.json padding: unknown strategy {strategy!r}")
    direction = cfg.get("direction", "Right")
    if direction not in ("Right", "Left"):
        raise ValueError(f"tokenizer.json padding: unknown direction {direction!r}")
    multiple = cfg.get("pad_to_multiple_of")
    if multiple is not None:
        multiple = int_id(multiple, "padding pad_to_multiple_of")
    return fixed, multiple or None, direction == "Left", int_id(cfg.get("pad_id", 0), "padding pad_id")


def file_lengths(truncation, padding, lead, trail, ids, st, en, doc_off):
    """A file's own ``truncation`` and ``padding`` (``truncation_params`` / ``padding_params``),
    as HF applies them on every encode: cut each text's ids to ``max_length``, keeping the
    ``lead`` / ``trail`` tokens the post-processor added, then pad to a fixed length or to the
    longest of the batch (pads at offsets (0, 0))."""
    from ..kernels import ragged as R
    if truncation is not None:
        max_length, left = truncation
        if max_length < lead + trail:
            raise ValueError(f"tokenizer.json truncation: max_length {max_length} is shorter than the "
                             f"{lead + trail} special tokens the post-processor adds")
        keep = R.truncation_mask(doc_off, max_length, lead, trail, left)
        if not keep.all():
            doc_off = R.kept_offsets(keep, doc_off)
            ids = ids[keep]
            st, en = (st[keep], en[keep]) if st is not None else (None, None)
    if padding is not None:
        fixed, multiple, left, pad_id = padding
        counts = np.diff(doc_off)
        target = fixed if fixed is not None else (int(counts.max()) if counts.size else 0)
        if multiple and target % multiple:
            target += multiple - target % multiple
        ids, st, en, doc_off = pad_rows(ids, st, en, doc_off, target, left, pad_id)
    return ids, st, en, doc_off


def pad_rows(ids, st, en, doc_off, target, left, pad_id):
    """Ragged rows padded with ``pad_id`` up to ``target`` ids each (longer rows unchanged)."""
    counts = np.diff(doc_off)
    pads = np.maximum(target - counts, 0)
    new_off = np.zeros(doc_off.size, np.int64)
    np.cumsum(counts + pads, out=new_off[1:])
    base = new_off[:-1] + (pads if left else 0)
    dst = np.arange(ids.size) + np.repeat(base - doc_off[:-1], counts)
    out = np.full(int(new_off[-1]), pad_id, np.int32)
    out[dst] = ids
    if st is not None:
        nst, nen = np.zeros(out.size, np.int64), np.zeros(out.size, np.int64)
        nst[dst], nen[dst] = st, en
        st, en = nst, nen
    return out, st, en, new_off


STAGE_CHARS = 1 << 18   # characters a run of texts holds at most when it runs stage by stage (one longer text: alone)


def run_bounds(texts, limit):
    """Where a batch of texts is cut into runs of about ``limit`` characters: ``[0, ..., len(texts)]``."""
    if len(texts) < 2:
        return [0, len(texts)]
    ends = np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)))
    cuts = np.searchsorted(ends, np.arange(limit, int(ends[-1]), limit), side="left") + 1
    return [0] + [c for c in np.unique(cuts).tolist() if c < len(texts)] + [len(texts)]


def concat_ragged(parts):
    """One ragged result ``(ids, starts, ends, doc_offsets, lead, trail)`` from results of
    consecutive runs of texts."""
    ids, st, en, lead, trail = (np.concatenate([r[i] for r in parts]) for i in (0, 1, 2, 4, 5))
    counts = np.concatenate([np.diff(r[3]) for r in parts])
    doc_off = np.zeros(counts.size + 1, np.int64)
    np.cumsum(counts, out=doc_off[1:])
    return ids, st, en, doc_off, lead, trail


def merge_ragged(n_docs, *parts_and_offsets):
    """One ragged result ``(ids, starts, ends, doc_offsets, lead, trail)`` for ``n_docs`` texts from
    parts ``(rows, result)`` that each cover some of the texts (without ``offsets``, only the ids
    and row offsets are merged)."""
    *parts, offsets = parts_and_offsets
    doc_of = np.concatenate([np.repeat(np.asarray(rows, np.int64), np.diff(r[3])) for rows, r in parts])
    order = np.argsort(doc_of, kind="stable")
    # the spans and trimming counts only with offsets (a fused part leaves them out otherwise)
    cat = [np.concatenate([r[i] for _, r in parts])[order] if (i == 0 or offsets) else None
           for i in (0, 1, 2, 4, 5)]
    counts = np.zeros(n_docs, np.int64)
    for rows, r in parts:
        counts[np.asarray(rows, np.int64)] = np.diff(r[3])
    doc_off = np.zeros(n_docs + 1, np.int64)
    np.cumsum(counts, out=doc_off[1:])
    return cat[0], cat[1], cat[2], doc_off, cat[3], cat[4]
