"""Batch results for numeric pipelines: padded matrices, attention masks, offsets.

``Tokenizer.encode_batch(texts, padding=..., ...)`` returns a ``BatchEncoding``. Everything is
built from the ragged result (flat ids + row offsets) by kernels in ``kernels/ragged.py``;
there is no Python object per document.
"""
from dataclasses import dataclass

import numpy as np

from .kernels import ragged as R


@dataclass
class BatchEncoding:
    """``ids``: int32[n, width] (padded) or the flat ids when unpadded; ``attention_mask``:
    int8 of the same shape (None when unpadded); ``lengths``: int64[n] real tokens per row;
    ``row_offsets``: int64[n + 1] into the flat ids when unpadded; ``offsets``: int64[n, width, 2]
    character (start, end) per token when asked (``(0, 0)`` for padding), or ragged int64[total, 2]."""

    ids: np.ndarray
    attention_mask: np.ndarray | None
    lengths: np.ndarray
    row_offsets: np.ndarray | None = None
    offsets: np.ndarray | None = None

    def __len__(self):
        return self.lengths.shape[0]

    def __getitem__(self, i):
        """The i-th row's real ids (no padding)."""
        if self.row_offsets is not None:
            return self.ids[self.row_offsets[i]:self.row_offsets[i + 1]]
        row = self.ids[i]
        mask = self.attention_mask[i].astype(bool)
        return row[mask]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def build_batch(ids, row_offsets, padding, max_length, truncation, padding_side, pad_id,
                starts=None, ends=None):
    if padding not in (False, None, True, "longest", "max_length", "do_not_pad"):
        raise ValueError(f"padding must be 'longest', 'max_length' or False, not {padding!r}")
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'right' or 'left', not {padding_side!r}")
    if max_length is not None and (not isinstance(max_length, (int, np.integer)) or max_length < 0):
        raise ValueError(f"max_length must be a non-negative integer, not {max_length!r}")
    if padding == "max_length" and max_length is None:
        raise ValueError("padding='max_length' needs max_length")
    if truncation and max_length is None:
        raise ValueError("truncation=True needs max_length")
    cut = int(max_length) if (truncation and max_length is not None) else 0
    padded = padding in (True, "longest", "max_length")
    if not padded:
        if cut:
            keep = np.repeat(np.arange(row_offsets.shape[0] - 1), np.diff(row_offsets))
            pos = np.arange(ids.shape[0]) - row_offsets[keep]
            sel = pos < cut
            new_ids, new_offsets = R.truncate_ragged(ids, row_offsets, cut)
            if starts is not None:
                starts, ends = starts[sel], ends[sel]
            ids, row_offsets = new_ids, new_offsets
        offs = None if starts is None else np.stack([starts, ends], axis=1)
        return BatchEncoding(ids, None, np.diff(row_offsets), row_offsets, offs)
    to_max = padding == "max_length"
    width = int(R.padded_width(row_offsets, cut if not to_max else int(max_length), to_max))
    if cut:
        width = min(width, cut)
    left = padding_side == "left"
    matrix, mask, lengths = R.pad_ragged(ids, row_offsets, width, np.int32(pad_id), left)
    offs = None if starts is None else R.pad_offsets(starts, ends, row_offsets, width, left)
    return BatchEncoding(matrix, mask, lengths, None, offs)
