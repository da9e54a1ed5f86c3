"""Streaming count of unique pre-tokens (the first half of BPE training).

Input is read in blocks (files) or gathered into blocks (iterables of str); each block is
split on special tokens and at *safe cuts* (see ``nbtok.train.counting_kernels``), counted in
parallel on all cores, and folded into one table of unique pre-tokens. Memory is bounded by
that table (plus one block), not by the corpus.

Semantics: a file is one document (pre-tokenization never crosses a special token, and the
safe cuts give exactly the pre-tokens of the whole file), or with ``line_documents`` each of
its lines, its ``\n`` included, as HF tokenizers' trainer reads files; each str of an iterable
is its own document (no pre-token spans two strings).
"""
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np

from . import counting_kernels as K
from ..text import pack_utf8


class WordCounts:
    """Unique pre-tokens: word w is ``wbytes[woff[w]:woff[w+1]]`` and occurs ``wcount[w]`` times."""

    def __init__(self, wbytes, woff, wcount, bytes_in):
        self.wbytes = wbytes
        self.woff = woff
        self.wcount = wcount
        self.bytes_in = bytes_in

    def __len__(self):
        return self.wcount.shape[0]

    def as_dict(self):
        data = self.wbytes.tobytes()
        offs = self.woff.tolist()
        return {data[offs[i]:offs[i + 1]]: int(c) for i, c in enumerate(self.wcount.tolist())}


def _pow2_at_least(n):
    cap = 16
    while cap < n:
        cap *= 2
    return cap


def _grown(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


class _Table:
    """The global table of unique pre-tokens (rows ``(k0, k1, n, word id)``, see
    ``nbtok.train.counting_kernels``), a byte arena and int64 counts, grown by doubling."""

    def __init__(self):
        self.gtab = np.zeros((1 << 12, 4), np.int64)
        self.wbytes = np.empty(1 << 16, np.uint8)
        self.woff = np.zeros(1 << 11, np.int64)
        self.wcount = np.zeros(1 << 11, np.int64)
        self.state = np.zeros(2, np.int64)  # n_words, n_bytes

    def reserve(self, n_entries, n_bytes):
        nw, nb = int(self.state[0]), int(self.state[1])
        if 2 * (nw + n_entries) > self.gtab.shape[0]:
            self.gtab = K.rehash_global(self.gtab, _pow2_at_least(4 * (nw + n_entries)))
        self.wbytes = _grown(self.wbytes, nb + n_bytes)
        self.woff = _grown(self.woff, nw + n_entries + 1)
        self.wcount = _grown(self.wcount, nw + n_entries)

    def add(self, src, out, task_base, task_n):
        n_entries = int(task_n.sum())
        if n_entries == 0:
            return
        self.reserve(n_entries, int(K.entries_bytes(out, task_base, task_n)))
        K.merge_counts(self.gtab, self.wbytes, self.woff, self.wcount, self.state, src, out, task_base, task_n)

    def result(self, bytes_in):
        nw, nb = int(self.state[0]), int(self.state[1])
        return WordCounts(self.wbytes[:nb].copy(), self.woff[:nw + 1].copy(), self.wcount[:nw].copy(), bytes_in)


class _Progress:
    def __init__(self, enabled, total=None):
        self.enabled = enabled
        self.total = total
        self.t0 = time.perf_counter()
        self.last = self.t0

    def update(self, nbytes, nwords, final=False):
        if not self.enabled:
            return
        now = time.perf_counter()
        if not final and now - self.last < 0.5:
            return
        self.last = now
        dt = max(now - self.t0, 1e-9)
        mb = nbytes / 1e6
        tot = f"/{self.total / 1e6:,.1f}" if self.total else ""
        sys.stderr.write(f"\r[nbtok] counting: {mb:,.1f}{tot} MB read, {mb / dt:,.3g} MB/s, "
                         f"{nwords:,} unique pre-tokens, {dt:.1f} s")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()


class PretokenCounter:
    """Feed blocks of text; get the unique pre-tokens with their counts."""

    def __init__(self, pretokenizer, special_tokens=(), block_size=None, task_size=None, progress=False,
                 total_bytes=None, line_documents=False):
        self.pre = pretokenizer
        self.line_documents = bool(line_documents)
        specials = sorted({s.encode("utf-8") for s in special_tokens}, key=lambda b: (-len(b), b))
        self.specials = specials
        self.sp_bytes = np.frombuffer(b"".join(specials), np.uint8).copy() if specials else np.zeros(1, np.uint8)
        self.sp_off = np.zeros(len(specials) + 1, np.int64)
        np.cumsum([len(s) for s in specials], out=self.sp_off[1:])
        self.sp_first = np.zeros(256, np.bool_)
        for s in specials:
            self.sp_first[s[0]] = True
        # a line cut could split a special token that contains a newline
        self.allow_line_cuts = not any(b"\n" in s for s in specials)
        self.threads = numba.get_num_threads()
        self.block_size = int(block_size or max(16 << 20, self.threads * (4 << 20)))
        self.task_size = task_size
        self.table = _Table()
        self.bytes_in = 0
        self.progress = _Progress(progress, total_bytes)

    # ------------------------------------------------------------------ blocks
    def add_block(self, buf, doc_off):
        """Count the documents ``buf[doc_off[d]:doc_off[d+1]]`` (uint8 UTF-8, int64 offsets)."""
        n = int(doc_off[-1] - doc_off[0]) if len(doc_off) else 0
        if n == 0:
            return
        target = self.task_size or min(1 << 20, max(1 << 16, n // (4 * self.threads) + 1))
        seg_s, seg_e = K.split_segments(buf, doc_off, self.sp_bytes, self.sp_off, self.sp_first,
                                        np.int64(target), self.allow_line_cuts)
        if seg_s.shape[0]:
            if self.pre.cfg is not None:
                self._count_scanner(buf, seg_s, seg_e, target)
            else:
                self._count_regex(buf, seg_s, seg_e)
        self.bytes_in += n
        self.progress.update(self.bytes_in, int(self.table.state[0]))

    def _count_scanner(self, buf, seg_s, seg_e, target):
        lens = seg_e - seg_s
        key = (np.cumsum(lens) - lens) // target
        cuts = np.flatnonzero(np.diff(key)) + 1
        task_lo = np.concatenate([[0], cuts]).astype(np.int64)
        task_hi = np.concatenate([cuts, [seg_s.shape[0]]]).astype(np.int64)
        csum = np.concatenate([[0], np.cumsum(lens)])
        task_bytes = csum[task_hi] - csum[task_lo]
        task_cap = task_bytes // 16 + 1024
        task_base = np.concatenate([[0], np.cumsum(task_cap)[:-1]]).astype(np.int64)
        out = np.empty((int(task_cap.sum()), 4), np.int64)
        task_n = np.zeros(task_lo.shape[0], np.int64)
        table, cfg = self.pre.table, self.pre.cfg
        if task_lo.shape[0] == 1:  # small input: skip the parallel runtime
            task_n[0] = K.count_task(buf, seg_s, seg_e, task_lo[0], task_hi[0], table, cfg, out, 0, task_cap[0])
        else:
            K.count_tasks(buf, seg_s, seg_e, task_lo, task_hi, table, cfg, out, task_base, task_cap, task_n)
        for t in np.flatnonzero(task_n < 0).tolist():
            # more unique pre-tokens than the estimate: redo it with the proven bound (bytes/2 + 256)
            cap = int(task_bytes[t]) // 2 + 256
            one = np.empty((cap, 4), np.int64)
            n = K.count_task(buf, seg_s, seg_e, task_lo[t], task_hi[t], table, cfg, one, 0, cap)
            self.table.add(buf, one, np.zeros(1, np.int64), np.array([n], np.int64))
            task_n[t] = 0
        self.table.add(buf, out, task_base, task_n)

    def _count_regex(self, buf, seg_s, seg_e):
        """Fallback for patterns the scanner does not support: the ``regex`` module, then the
        same tables as the scanner path."""
        starts, ends = [], []
        for s, e in zip(seg_s.tolist(), seg_e.tolist()):
            try:
                a, b = self.pre.spans(buf, s, e)
            except UnicodeDecodeError as exc:
                raise ValueError(f"the input is not valid UTF-8 ({exc.reason} near byte {s + exc.start} "
                                 "of a block); the regex fallback needs valid UTF-8") from None
            starts.append(a)
            ends.append(b)
        ps = np.concatenate(starts).astype(np.int64)
        pe = np.concatenate(ends).astype(np.int64)
        if ps.shape[0] == 0:
            return
        cap = int((pe - ps).sum()) // 2 + 256
        out = np.empty((cap, 4), np.int64)
        n = K.count_task_spans(buf, ps, pe, out, cap)
        self.table.add(buf, out, np.zeros(1, np.int64), np.array([n], np.int64))

    def result(self):
        self.progress.update(self.bytes_in, int(self.table.state[0]), final=True)
        return self.table.result(self.bytes_in)

    # ------------------------------------------------------------------ sources
    def add_file(self, path, errors="strict"):
        block = self.block_size
        carry = b""
        read = 0
        with open(path, "rb") as f:
            while True:
                data = f.read(block)
                eof = len(data) < block
                if carry:
                    data = carry + data
                    carry = b""
                if not data:
                    break
                buf = np.frombuffer(data, np.uint8)
                end = len(data)
                if not eof:
                    p = K.last_safe_cut(buf, 0, end, self.sp_bytes, self.sp_off, self.sp_first,
                                        self.allow_line_cuts)
                    if p <= 0:
                        carry = data  # no safe cut in this block: read on
                        continue
                    end = int(p)
                    carry = data[end:]
                chunk = np.frombuffer(checked_utf8(data[:end], errors, path, read), np.uint8)
                read += end
                self.add_block(chunk, self._documents(chunk))
                if eof:
                    break

    def _documents(self, chunk):
        """Document offsets of a block of a file: the whole block, or one per line."""
        if not self.line_documents:
            return np.array([0, chunk.shape[0]], np.int64)
        ends = np.flatnonzero(chunk == 10) + 1
        if not ends.size or ends[-1] != chunk.shape[0]:
            ends = np.append(ends, chunk.shape[0])
        return np.concatenate([[0], ends]).astype(np.int64)

    def add_texts(self, texts):
        batch, size = [], 0
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"the input iterable must yield str, got {type(t).__name__}")
            batch.append(t)
            size += len(t)
            if size >= self.block_size // 2:
                self._add_batch(batch)
                batch, size = [], 0
        if batch:
            self._add_batch(batch)

    def _add_batch(self, batch):
        buf, offsets, _ = pack_utf8(batch)
        self.add_block(np.ascontiguousarray(buf), offsets)


ERRORS = ("strict", "replace", "ignore")


def resolve_input(input):
    """``("files", [Path, ...])`` or ``("texts", iterable)``.

    A str or ``os.PathLike`` is one file; a list or tuple is a list of files (never texts: a
    missing path is a ``FileNotFoundError``, so a typo cannot train on the file name); any other
    iterable (a generator, ``iter(texts)``, a dataset column) yields the texts themselves."""
    if isinstance(input, (bytes, bytearray, memoryview)):
        raise TypeError("input must be a path, a list of paths or an iterable of str, not bytes")
    if isinstance(input, (str, os.PathLike)):
        paths = [input]
    elif isinstance(input, (list, tuple)):
        paths = list(input)
        for p in paths:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError(f"a list or tuple input is a list of file paths, but it holds a "
                                f"{type(p).__name__}; to train on texts, pass an iterator: iter(texts)")
    else:
        try:
            iter(input)
        except TypeError:
            raise TypeError(f"input must be a path, a list of paths or an iterable of str, "
                            f"not {type(input).__name__}") from None
        return "texts", input
    if not paths:
        raise ValueError("input is an empty list of files: there is no text to train on")
    for p in paths:
        if not _is_file(p):
            raise FileNotFoundError(f"input file {str(p)[:200]!r} does not exist (a list is a list of "
                                    "file paths; to train on texts, pass an iterator: iter(texts))")
    return "files", [Path(p) for p in paths]


def _is_file(p):
    try:
        return Path(p).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL in it
        return False


def checked_utf8(data, errors, path, base):
    """``data`` (bytes read from ``path`` at offset ``base``) as valid UTF-8: unchanged when it
    is, else a ``ValueError`` naming the file and byte (``errors="strict"``) or repaired as
    ``bytes.decode(errors=...)`` does."""
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError as e:
        if errors == "strict":
            raise ValueError(f"{path} is not UTF-8 ({e.reason} at byte {base + e.start}); pass errors='replace' "
                             "or errors='ignore' to train on it anyway") from None
        return data.decode("utf-8", errors).encode("utf-8")


def count_pretokens(input, pretokenizer, special_tokens=(), progress=False, block_size=None, task_size=None,
                    errors="strict", line_documents=False):
    """Unique pre-tokens of ``input`` (see ``resolve_input``) as ``WordCounts``. Files must be
    UTF-8 (``errors``: "strict", or "replace" / "ignore" as ``bytes.decode``); input with no
    text at all is a ``ValueError``. ``line_documents``: each line of a file is a document."""
    if errors not in ERRORS:
        raise ValueError(f"errors must be one of {', '.join(ERRORS)}, not {errors!r}")
    kind, src = resolve_input(input)
    total = sum(p.stat().st_size for p in src) if kind == "files" else None
    counter = PretokenCounter(pretokenizer, special_tokens, block_size=block_size, task_size=task_size,
                              progress=progress, total_bytes=total, line_documents=line_documents)
    if kind == "files":
        for p in src:
            counter.add_file(p, errors)
    else:
        counter.add_texts(src)
    counts = counter.result()
    if counts.bytes_in == 0:
        raise ValueError("the input holds no text to train on" + (
            f" ({', '.join(str(p) for p in src[:3])} {'is' if len(src) == 1 else 'are'} empty)" if kind == "files" else ""))
    return counts
