"""Ragged (flat + offsets) arrays: batches cut into chunks for the threads, id arrays ->
padded matrices, and byte spans -> character offsets."""
import numpy as np

from .._jit import kernel

CHUNK_BYTES = 65536
MAX_CHUNKS_PER_WORKER = 64


def batch_chunks(n_docs, n_bytes, workers):
    """How many chunks a batch of ``n_docs`` documents (``n_bytes`` in all) is cut into for
    ``workers`` threads: about ``CHUNK_BYTES`` each, at least one per worker. Chunks are dealt
    round-robin (``chunk_bounds``): worker w takes chunks w, w + workers, ... so that a batch
    whose cost per byte changes along it (one language after another) keeps every thread busy,
    where one contiguous half per thread would leave one idle."""
    per_worker = max(1, min(MAX_CHUNKS_PER_WORKER, n_bytes // (CHUNK_BYTES * workers)))
    return max(1, min(n_docs, workers * per_worker))


class BatchLayout:
    """Where a parallel batch kernel writes the ids of documents ``offsets`` (``n_bytes`` in
    all) for ``workers`` threads: the chunks (``bounds``, ``chunk_bounds``), each document's room
    (``out_offsets``: 4 ids more than its bytes) in ``out``, and per document the ids it wrote
    (``counts``; -1: they did not fit) and per chunk the ids it wrote (``used``)."""

    def __init__(self, offsets, n_bytes, workers):
        n = offsets.shape[0] - 1
        self.workers = max(1, min(workers, n))
        self.out_offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.diff(offsets) + 4, out=self.out_offsets[1:])
        self.out = np.empty(int(self.out_offsets[-1]), np.int32)
        self.counts = np.empty(n, np.int64)
        self.bounds = chunk_bounds(offsets, batch_chunks(n, n_bytes, self.workers))
        self.used = np.empty(self.bounds.size - 1, np.int64)

    def ragged(self, encode_one):
        """``(ids, offsets)`` of the batch once the kernel ran: the chunks joined, and each
        document that outgrew its room (an expanding normalization) encoded alone by
        ``encode_one(d)`` and spliced in."""
        ids = gather_chunks(self.out, self.out_offsets, self.bounds, self.used)
        counts = self.counts
        redo = np.flatnonzero(counts < 0)
        if redo.size:
            starts = np.zeros(counts.size + 1, np.int64)
            np.cumsum(np.maximum(counts, 0), out=starts[1:])
            parts, prev = [], 0
            for d in redo.tolist():
                extra = encode_one(d)
                parts += [ids[starts[prev]:starts[d]], extra]
                counts[d] = extra.size
                prev = d + 1
            parts.append(ids[starts[prev]:])
            ids = np.concatenate(parts)
        offsets = np.zeros(counts.size + 1, np.int64)
        np.cumsum(counts, out=offsets[1:])
        return ids, offsets


@kernel
def chunk_bounds(offsets, n_chunks):
    """Documents cut into ``n_chunks`` runs of about equal bytes: chunk c is documents
    ``bounds[c]:bounds[c + 1]``."""
    n_docs = offsets.shape[0] - 1
    bounds = np.empty(n_chunks + 1, np.int64)
    total = offsets[n_docs] - offsets[0]
    d = 0
    bounds[0] = 0
    for c in range(1, n_chunks):
        target = offsets[0] + (total * c) // n_chunks
        while d < n_docs and offsets[d] < target:
            d += 1
        bounds[c] = d
    bounds[n_chunks] = n_docs
    return bounds


@kernel
def gather_chunks(out, out_offsets, bounds, used):
    """The ids of a batch end to end: chunk c (documents ``bounds[c]:bounds[c + 1]``) wrote its
    documents' ids one after another, ``used[c]`` in all, from ``out[out_offsets[bounds[c]]]``."""
    ids = np.empty(used.sum(), np.int32)
    o = 0
    for c in range(used.shape[0]):
        s = out_offsets[bounds[c]]
        ids[o:o + used[c]] = out[s:s + used[c]]
        o += used[c]
    return ids


@kernel
def worker_bytes(offsets, bounds, w, n_workers):
    """``(longest document, total bytes)`` of the chunks worker ``w`` of ``n_workers`` takes."""
    longest = 1
    total = 0
    for c in range(w, bounds.shape[0] - 1, n_workers):
        for d in range(bounds[c], bounds[c + 1]):
            longest = max(longest, offsets[d + 1] - offsets[d])
        total += offsets[bounds[c + 1]] - offsets[bounds[c]]
    return longest, total


@kernel
def wrap_rows(values, offsets, before, after):
    """Each row of the ragged ``values`` (rows ``offsets``) between ``before`` and ``after``:
    ``(values, offsets)`` of the new rows, in one pass (a template's special tokens around each
    document's ids, or zeros around its offsets)."""
    n = offsets.shape[0] - 1
    p, s = before.shape[0], after.shape[0]
    new_offsets = np.empty(n + 1, np.int64)
    new_offsets[0] = 0
    for d in range(n):
        new_offsets[d + 1] = new_offsets[d] + (offsets[d + 1] - offsets[d]) + p + s
    out = np.empty(new_offsets[n], values.dtype)
    for d in range(n):
        o = new_offsets[d]
        for k in range(p):
            out[o + k] = before[k]
        o += p
        for i in range(offsets[d], offsets[d + 1]):
            out[o] = values[i]
            o += 1
        for k in range(s):
            out[o + k] = after[k]
    return out, new_offsets


@kernel
def pad_ragged(ids, offsets, width, pad_id, left):
    """``(matrix int32[n, width], mask int8[n, width], lengths int64[n])`` for rows no longer than
    ``width``; ``left`` puts the padding before the ids."""
    n = offsets.shape[0] - 1
    matrix = np.full((n, width), pad_id, np.int32)
    mask = np.zeros((n, width), np.int8)
    lengths = np.empty(n, np.int64)
    for d in range(n):
        length = min(offsets[d + 1] - offsets[d], width)
        lengths[d] = length
        start = width - length if left else 0
        for k in range(length):
            matrix[d, start + k] = ids[offsets[d] + k]
            mask[d, start + k] = 1
    return matrix, mask, lengths


@kernel
def pad_offsets(starts, ends, offsets, width, left):
    """Per-token (start, end) pairs in the padded layout, (0, 0) in padding: int64[n, width, 2]."""
    n = offsets.shape[0] - 1
    out = np.zeros((n, width, 2), np.int64)
    for d in range(n):
        length = min(offsets[d + 1] - offsets[d], width)
        start = width - length if left else 0
        for k in range(length):
            out[d, start + k, 0] = starts[offsets[d] + k]
            out[d, start + k, 1] = ends[offsets[d] + k]
    return out


@kernel
def truncation_mask(offsets, max_length, lead, trail, left):
    """``keep[i]`` for every id of the ragged rows: a row longer than ``max_length`` keeps its
    ``lead`` first and ``trail`` last ids (the specials the model added) and, of the ids between,
    the first ``max_length - lead - trail`` (or the last, when ``left``)."""
    keep = np.ones(offsets[offsets.shape[0] - 1], np.bool_)
    budget = max_length - lead - trail
    for d in range(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        if end - start <= max_length:
            continue
        if left:
            cut_from, cut_to = start + lead, end - trail - budget
        else:
            cut_from, cut_to = start + lead + budget, end - trail
        for i in range(cut_from, cut_to):
            keep[i] = False
    return keep


@kernel
def kept_offsets(keep, offsets):
    """The row offsets after dropping the ids where ``keep`` is False."""
    n = offsets.shape[0] - 1
    out = np.zeros(n + 1, np.int64)
    for d in range(n):
        count = 0
        for i in range(offsets[d], offsets[d + 1]):
            count += keep[i]
        out[d + 1] = out[d] + count
    return out


@kernel
def byte_to_char_index(buf, start, end):
    """``char_of[b]`` for b in 0..end-start: the index of the character containing byte b
    (counting from ``start``), and the character count at ``end``."""
    n = end - start
    char_of = np.empty(n + 1, np.int64)
    c = -1
    for b in range(n):
        if (buf[start + b] & 0xC0) != 0x80:
            c += 1
        char_of[b] = c
    char_of[n] = c + 1
    return char_of


@kernel
def spans_to_char_offsets(buf, doc_offsets, span_starts, span_ends, id_offsets):
    """Byte spans (relative to each document) -> character offsets in the original text. A token
    that starts or ends inside a character gets the whole character (HF's convention)."""
    starts = np.empty(span_starts.shape[0], np.int64)
    ends = np.empty(span_starts.shape[0], np.int64)
    for d in range(doc_offsets.shape[0] - 1):
        char_of = byte_to_char_index(buf, doc_offsets[d], doc_offsets[d + 1])
        n = doc_offsets[d + 1] - doc_offsets[d]
        for t in range(id_offsets[d], id_offsets[d + 1]):
            s = span_starts[t]
            e = span_ends[t]
            starts[t] = char_of[min(s, n)]
            ends[t] = char_of[min(e - 1, n)] + 1 if e > s else char_of[min(s, n)]
    return starts, ends


@kernel
def piece_spans(ids, id_offsets, piece_offsets):
    """Byte spans of tokens that tile their document (byte-level BPE): token k of a document
    starts where token k-1 ended; its length is its piece's length."""
    starts = np.empty(ids.shape[0], np.int64)
    ends = np.empty(ids.shape[0], np.int64)
    for d in range(id_offsets.shape[0] - 1):
        pos = 0
        for t in range(id_offsets[d], id_offsets[d + 1]):
            i = ids[t]
            starts[t] = pos
            pos += piece_offsets[i + 1] - piece_offsets[i]
            ends[t] = pos
    return starts, ends


@kernel
def compact_ragged(out, offsets, counts):
    """Pack ids written at each document's byte offset into ``(ids, id_offsets)``."""
    n_docs = counts.shape[0]
    id_offsets = np.zeros(n_docs + 1, np.int64)
    for d in range(n_docs):
        id_offsets[d + 1] = id_offsets[d] + counts[d]
    ids = np.empty(id_offsets[n_docs], np.int32)
    for d in range(n_docs):
        src = offsets[d]
        dst = id_offsets[d]
        for k in range(counts[d]):
            ids[dst + k] = out[src + k]
    return ids, id_offsets
