"""tiktoken ``.tiktoken`` rank files parsed into flat arrays, and rank tables laid out by id.

A rank file has one ``base64(token bytes) rank`` line per token. ``parse_plain_rank_lines``
reads a file written the usual way (one space, ``\n`` line ends, nothing else) with NumPy, in
whole-array operations; ``parse_rank_lines`` reads any file tiktoken reads, in one pass of a
kernel, and says where a bad one is wrong. Both give ``(piece_bytes, piece_offsets, ranks)`` in
file order (a Python loop over 100k-200k lines costs more than the rest of loading a model);
``pieces_by_id`` then places each token at the id equal to its rank.
"""
import numpy as np

from .._jit import kernel, leaf_kernel
from ..kernels.hashmap import EMPTY, _same_bytes, hash_bytes, intmap_insert

# what parse_rank_lines reports (formats/tiktoken.py turns it into a message)
OK, BAD_FIELDS, BAD_BASE64, BAD_RANK, EMPTY_TOKEN, DUPLICATE_TOKEN, DUPLICATE_RANK = range(7)
MAX_RANK = (1 << 31) - 1


@kernel
def _base64_values():
    """Value of each byte as a base64 digit (standard alphabet), -1 if none."""
    v = np.full(256, -1, np.int8)
    for k in range(26):
        v[65 + k] = k
        v[97 + k] = 26 + k
    for k in range(10):
        v[48 + k] = 52 + k
    v[43] = 62  # '+'
    v[47] = 63  # '/'
    return v


@leaf_kernel
def _is_space(c):
    return c == 32 or c == 9 or c == 11 or c == 12


@leaf_kernel
def _decode_base64(data, start, end, digits, out, pos):
    """Strict base64 (as ``binascii.a2b_base64(strict_mode=True)``): a multiple of 4
    characters, only alphabet digits, ``=`` padding only at the end. Writes the bytes at
    ``out[pos:]``; returns the new pos, or -1 if the text is not strict base64."""
    n = end - start
    if n == 0 or n % 4 != 0:
        return -1
    pad = 0
    if data[end - 1] == 61:
        pad = 2 if data[end - 2] == 61 else 1
    acc = 0
    for k in range(n - pad):
        d = digits[data[start + k]]
        if d < 0:
            return -1
        acc = (acc << 6) | d
        if k % 4 == 3:
            out[pos] = (acc >> 16) & 255
            out[pos + 1] = (acc >> 8) & 255
            out[pos + 2] = acc & 255
            pos += 3
            acc = 0
    if pad == 1:  # 3 digits: 18 bits -> 2 bytes
        out[pos] = (acc >> 10) & 255
        out[pos + 1] = (acc >> 2) & 255
        pos += 2
    elif pad == 2:  # 2 digits: 12 bits -> 1 byte
        out[pos] = (acc >> 4) & 255
        pos += 1
    return pos


@leaf_kernel
def _add_token(table, piece_bytes, piece_offsets, k):
    """Add entry ``k`` to the set of tokens seen (``table`` of entry numbers, -1 empty);
    False if an earlier entry has the same bytes."""
    s = piece_offsets[k]
    e = piece_offsets[k + 1]
    mask = table.shape[0] - 1
    i = hash_bytes(piece_bytes, s, e) & mask
    while table[i] >= 0:
        if _same_bytes(piece_bytes, piece_offsets, table[i], piece_bytes, s, e):
            return False
        i = (i + 1) & mask
    table[i] = k
    return True


@leaf_kernel
def _skip(data, i, end, space):
    """The first position from ``i`` (at most ``end``) whose byte is not (``space``) / is a space."""
    while i < end and _is_space(data[i]) == space:
        i += 1
    return i


@leaf_kernel
def _parse_line(data, start, end, digits, out, pos):
    """One non-blank line ``data[start:end]``: ``(error, new pos, rank)``, the token's bytes
    decoded at ``out[pos:new pos]``."""
    a = _skip(data, start, end, True)  # the fields are [a, b) and [c, d)
    b = _skip(data, a, end, False)
    c = _skip(data, b, end, True)
    d = _skip(data, c, end, False)
    if c == end or _skip(data, d, end, True) != end:
        return BAD_FIELDS, pos, 0
    new_pos = _decode_base64(data, a, b, digits, out, pos)
    if new_pos < 0:
        return BAD_BASE64, pos, 0
    if new_pos == pos:
        return EMPTY_TOKEN, pos, 0
    if d - c > 10:
        return BAD_RANK, pos, 0
    rank = 0
    for k in range(c, d):
        if not 48 <= data[k] <= 57:
            return BAD_RANK, pos, 0
        rank = rank * 10 + (data[k] - 48)
    if rank > MAX_RANK:
        return BAD_RANK, pos, 0
    return OK, new_pos, rank


@kernel
def parse_rank_lines(data):
    """``(piece_bytes, piece_offsets, ranks, line, error)`` from a rank file's bytes. Blank
    lines are skipped; a line is two fields separated by spaces or tabs. On the first bad
    line, ``line`` is its 1-based number and ``error`` says what is wrong (``BAD_FIELDS``,
    ``BAD_BASE64``, ``BAD_RANK``: not decimal digits or above ``MAX_RANK``, ``EMPTY_TOKEN``);
    otherwise ``error`` is ``OK``. A token or a rank given twice is an error too
    (``DUPLICATE_TOKEN``, ``DUPLICATE_RANK``), found with two hash sets as the lines are read."""
    digits = _base64_values()
    n = data.shape[0]
    lines = 1
    for i in range(n):
        if data[i] == 10 or data[i] == 13:
            lines += 1
    piece_bytes = np.empty(n, np.uint8)  # decoded bytes are shorter than the text
    piece_offsets = np.zeros(lines + 1, np.int64)
    ranks = np.empty(lines, np.int64)
    cap = 16
    while cap < 2 * lines:  # load factor <= 0.5
        cap *= 2
    seen_tokens = np.full(cap, -1, np.int64)  # entry numbers, by hash of the token bytes
    seen_ranks = np.full(cap, EMPTY, np.int64)  # an IntMap whose values are its keys: one array
    count = 0
    line = 0
    i = 0
    while i < n:
        line += 1
        eol = i  # lines end at \n, \r\n or \r (as bytes.splitlines)
        while eol < n and data[eol] != 10 and data[eol] != 13:
            eol += 1
        start = i
        i = eol + 2 if eol + 1 < n and data[eol] == 13 and data[eol + 1] == 10 else eol + 1
        if _skip(data, start, eol, True) == eol:
            continue
        error, pos, rank = _parse_line(data, start, eol, digits, piece_bytes, piece_offsets[count])
        if error == OK:
            piece_offsets[count + 1] = pos
            if not _add_token(seen_tokens, piece_bytes, piece_offsets, count):
                error = DUPLICATE_TOKEN
            elif not intmap_insert(seen_ranks, seen_ranks, np.int64(rank), np.int64(rank)):
                error = DUPLICATE_RANK
        if error != OK:
            return piece_bytes[:0], piece_offsets[:1], ranks[:0], line, error
        ranks[count] = rank
        count += 1
    end = piece_offsets[count]
    return piece_bytes[:end].copy(), piece_offsets[:count + 1].copy(), ranks[:count].copy(), 0, OK


_BASE64 = np.full(256, -1, np.int64)
_BASE64[np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8)] = np.arange(64)
_PLAIN = _BASE64 >= 0  # the bytes of a plain rank file: base64 digits (decimal digits too), '=', ' ', '\n'
_PLAIN[[61, 32, 10]] = True


def _spans(n, starts, ends):
    """Bool mask of length n, True inside every ``[starts[k], ends[k])`` (non-empty, none touching another)."""
    mark = np.zeros(n + 1, np.int8)
    mark[starts] = 1
    mark[ends] -= 1
    return np.cumsum(mark[:n], dtype=np.int8) > 0


def parse_plain_rank_lines(data):
    """``parse_rank_lines`` of a rank file in the plain form every published one has (each line
    ``base64 rank``, one space, lines ending in ``\n``, the last one optionally not), in NumPy:
    ``(piece_bytes, piece_offsets, ranks)``, or None when the file is not in that form or
    anything in it is wrong (then ``parse_rank_lines`` reads it, or says what is wrong).

    The kernel compiles in ~4 s on a first run, which this saves for plain files: the
    bundled GPT-2 ranks parse in ~5 ms here. ``tests/test_robust_load.py`` compares the two."""
    n = data.shape[0]
    if n == 0 or not _PLAIN[data].all():
        return None
    ends = np.flatnonzero(data == 10)
    if data[-1] != 10:
        ends = np.append(ends, n)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    space = np.flatnonzero(data == 32)
    if space.shape[0] != ends.shape[0] or not ((starts < space) & (space + 1 < ends)).all():
        return None  # a line without exactly one space between two fields (or blank)
    lengths = space - starts
    digits = ends - space - 1
    if (lengths % 4).any() or digits.max() > 10:
        return None
    token = data[_spans(n, starts, space)]
    pad = (data[space - 1] == 61).astype(np.int64)
    pad += (pad == 1) & (data[space - 2] == 61)
    last = np.cumsum(lengths)  # token k's text ends at last[k] in ``token``
    padding = np.zeros(token.shape[0], np.bool_)
    padding[last[pad > 0] - 1] = True
    padding[last[pad > 1] - 2] = True
    values = _BASE64[token]
    if not np.array_equal(values < 0, padding):
        return None  # a character outside the alphabet, or '=' elsewhere than at the end
    groups = np.where(padding, 0, values).reshape(-1, 4)
    word = (groups[:, 0] << 18) | (groups[:, 1] << 12) | (groups[:, 2] << 6) | groups[:, 3]
    decoded = np.stack([word >> 16, word >> 8, word], axis=1).astype(np.uint8).reshape(-1)
    keep = np.ones(decoded.shape[0], np.bool_)
    out_last = last // 4 * 3
    keep[out_last[pad > 0] - 1] = False
    keep[out_last[pad > 1] - 2] = False
    piece_offsets = np.zeros(ends.shape[0] + 1, np.int64)
    np.cumsum(lengths // 4 * 3 - pad, out=piece_offsets[1:])
    number = (data[_spans(n, space + 1, ends)] - np.uint8(48)).astype(np.int64)  # (other bytes wrap above 9)
    if (number > 9).any():
        return None
    place = np.arange(number.shape[0]) - np.repeat(np.cumsum(digits) - 1, digits)  # 0, -1, ... from the last digit
    ranks = np.add.reduceat(number * 10 ** (-place), np.cumsum(digits) - digits)
    if ranks.max() > MAX_RANK or np.unique(ranks).shape[0] != ranks.shape[0]:
        return None
    piece_bytes = decoded[keep]
    text, offs = piece_bytes.tobytes(), piece_offsets.tolist()
    if len({text[offs[k]:offs[k + 1]] for k in range(ends.shape[0])}) != ends.shape[0]:
        return None  # a token given twice
    return piece_bytes, piece_offsets, ranks


def pieces_by_id(piece_bytes, piece_offsets, ids, n):
    """The pieces ``k`` (``piece_bytes[piece_offsets[k]:piece_offsets[k + 1]]``) placed at ids
    ``ids[k]`` of a vocabulary of ``n`` (ids distinct and in ``[0, n)``; ids no piece takes
    stay empty): ``(bytes, offsets)`` of the vocabulary. (NumPy: as a kernel it compiled in
    ~0.5 s on a first run, for ~1 ms of work.)"""
    lengths = np.diff(piece_offsets)
    by_id = np.zeros(n, np.int64)
    by_id[ids] = lengths
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(by_id, out=offsets[1:])
    order = np.argsort(ids, kind="stable")
    size, start = lengths[order], piece_offsets[:-1][order]
    index = np.repeat(start - (np.cumsum(size) - size), size) + np.arange(offsets[n])
    return np.ascontiguousarray(piece_bytes[index], np.uint8), offsets
