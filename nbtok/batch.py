"""Batch results for numeric pipelines: padded matrices, attention masks, offsets.

``Tokenizer.encode_batch(texts, padding=..., truncation=..., ...)`` returns a ``BatchEncoding``.
Everything is built from the ragged result (flat ids + row offsets) by kernels in
``kernels/ragged.py``; there is no Python object per document.

Padding and truncation follow HF tokenizers (``enable_truncation`` / ``enable_padding``):

* truncation happens only when asked (``truncation=True`` with ``max_length``); it keeps the
  special tokens the model adds around each text (``[CLS]`` … ``[SEP]``, BOS / EOS) and cuts the
  text's own ids from the end (``truncation_side="right"``) or the start (``"left"``);
  ``max_length=0`` truncates every row to nothing (or to its added tokens), in every padding
  mode; a ``max_length`` smaller than the number of added tokens is a ``ValueError`` (HF
  computes the budget in unsigned arithmetic there and does not truncate at all);
* ``padding="longest"`` (or ``True``) pads to the longest row, ``padding="max_length"`` to
  ``max_length``; ``pad_to_multiple_of`` rounds the width up. Padding never truncates: a row
  longer than ``max_length`` without ``truncation=True`` is a ``ValueError`` (HF would return
  ragged rows, which cannot form a matrix).
"""
from dataclasses import dataclass

import numpy as np

from .kernels import ragged as R

PADDING = (False, None, True, "longest", "max_length", "do_not_pad")


@dataclass
class BatchEncoding:
    """The result of ``encode_batch`` with padding, truncation or offsets.

    ``ids``: int32[n, width] when padded, else the flat ids of all rows; ``attention_mask``:
    int8[n, width] (None when unpadded); ``lengths``: int64[n] real tokens per row;
    ``row_offsets``: int64[n + 1] into the flat ids when unpadded; ``offsets``: character
    (start, end) per token when asked, int64[n, width, 2] ((0, 0) in padding) or int64[total, 2].

    Examples:
        >>> import nbtok
        >>> batch = nbtok.get_encoding("gpt2").encode_batch(["a b", "a"], padding="longest")
        >>> batch.ids.shape, batch.attention_mask.tolist()
        ((2, 2), [[1, 1], [1, 0]])
        >>> batch[1].tolist()
        [64]
    """

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
        return self.ids[i][self.attention_mask[i].astype(bool)]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


def check_options(padding, max_length, truncation, padding_side, truncation_side, pad_to_multiple_of):
    """Raise ``ValueError`` for an option outside its allowed values (before any work)."""
    if padding not in PADDING:
        raise ValueError(f"padding must be 'longest' (or True), 'max_length' or False, not {padding!r}")
    for name, side in (("padding_side", padding_side), ("truncation_side", truncation_side)):
        if side not in ("right", "left"):
            raise ValueError(f"{name} must be 'right' or 'left', not {side!r}")
    if truncation not in (True, False, None):
        raise ValueError(f"truncation must be True or False, not {truncation!r}")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer))
                                   or max_length < 0):
        raise ValueError(f"max_length must be a non-negative integer or None, not {max_length!r}")
    if pad_to_multiple_of is not None and (isinstance(pad_to_multiple_of, bool)
                                           or not isinstance(pad_to_multiple_of, (int, np.integer))
                                           or pad_to_multiple_of < 1):
        raise ValueError(f"pad_to_multiple_of must be a positive integer or None, not {pad_to_multiple_of!r}")
    if padding == "max_length" and max_length is None:
        raise ValueError("padding='max_length' needs max_length")
    if truncation and max_length is None:
        raise ValueError("truncation=True needs max_length")


def build_batch(ids, row_offsets, spans=None, *, padding=False, max_length=None, truncation=False,
                padding_side="right", truncation_side="right", pad_to_multiple_of=None, pad_id=0,
                added=(0, 0)):
    """A ``BatchEncoding`` from ragged ids (and ``spans = (starts, ends)`` when offsets were
    asked). ``added = (leading, trailing)``: how many ids of every row the model added
    (post-processor specials), which truncation keeps."""
    if truncation:
        lead, trail = added
        if max_length < lead + trail:
            raise ValueError(f"max_length={max_length} leaves no room for the {lead + trail} special "
                             f"tokens this model adds to every text")
        keep = R.truncation_mask(row_offsets, max_length, lead, trail, truncation_side == "left")
        ids = ids[keep]
        row_offsets = R.kept_offsets(keep, row_offsets)
        if spans is not None:
            spans = (spans[0][keep], spans[1][keep])
    lengths = np.diff(row_offsets)
    if padding not in (True, "longest", "max_length"):
        offs = None if spans is None else np.stack(spans, axis=1)
        return BatchEncoding(ids, None, lengths, row_offsets, offs)
    longest = int(lengths.max()) if lengths.shape[0] else 0
    width = int(max_length) if padding == "max_length" else longest
    if longest > width:
        row = int(np.argmax(lengths))
        raise ValueError(f"text {row} has {longest} tokens, more than max_length={width}: pass "
                         f"truncation=True to cut it, or padding='longest'")
    if pad_to_multiple_of:
        width = -(-width // pad_to_multiple_of) * pad_to_multiple_of
    left = padding_side == "left"
    matrix, mask, lengths = R.pad_ragged(ids, row_offsets, width, np.int32(pad_id), left)
    offs = None if spans is None else R.pad_offsets(spans[0], spans[1], row_offsets, width, left)
    return BatchEncoding(matrix, mask, lengths, None, offs)
