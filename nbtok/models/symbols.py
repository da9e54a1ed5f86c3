"""The symbols SentencePiece Unigram and BPE encode into, and the ids they become.

A symbol is ``id < V``, a vocabulary piece, or ``id >= V``, the unknown character with code
point ``id - V`` (``V + INVALID_BASE + byte`` for a byte that is not valid UTF-8).
``finish_ids`` turns a sequence of symbols into ids: byte fallback (one ``<0xXX>`` id per
UTF-8 byte of an unknown character) or one unknown id for each run of unknowns, and bos / eos.
"""
import numpy as np

from .._jit import kernel

INVALID_BASE = 0x110000


@kernel
def char_symbol(text, pos, mblen, V):
    """The symbol id of an unknown character ``text[pos:pos+mblen]``: V + code point."""
    b0 = np.int64(text[pos])
    if mblen == 1:
        if b0 < 0x80:
            return V + b0
        return V + INVALID_BASE + b0
    if mblen == 2:
        cp = ((b0 & 0x1F) << 6) | (np.int64(text[pos + 1]) & 0x3F)
    elif mblen == 3:
        cp = ((b0 & 0x0F) << 12) | ((np.int64(text[pos + 1]) & 0x3F) << 6) | (np.int64(text[pos + 2]) & 0x3F)
    else:
        cp = (((b0 & 0x07) << 18) | ((np.int64(text[pos + 1]) & 0x3F) << 12)
              | ((np.int64(text[pos + 2]) & 0x3F) << 6) | (np.int64(text[pos + 3]) & 0x3F))
    return V + cp


@kernel
def symbol_bytes(sym, V, buf):
    """UTF-8 bytes of an unknown-character symbol into ``buf``; returns the count."""
    cp = sym - V
    if cp >= INVALID_BASE:
        buf[0] = cp - INVALID_BASE
        return 1
    if cp < 0x80:
        buf[0] = cp
        return 1
    if cp < 0x800:
        buf[0] = 0xC0 | (cp >> 6)
        buf[1] = 0x80 | (cp & 0x3F)
        return 2
    if cp < 0x10000:
        buf[0] = 0xE0 | (cp >> 12)
        buf[1] = 0x80 | ((cp >> 6) & 0x3F)
        buf[2] = 0x80 | (cp & 0x3F)
        return 3
    buf[0] = 0xF0 | (cp >> 18)
    buf[1] = 0x80 | ((cp >> 12) & 0x3F)
    buf[2] = 0x80 | ((cp >> 6) & 0x3F)
    buf[3] = 0x80 | (cp & 0x3F)
    return 4


@kernel
def _emit_symbol_bytes(sym, V, byte_ids, out, o):
    """Byte-fallback ids of an unknown-character symbol (its UTF-8 bytes) into ``out``."""
    cp = sym - V
    if cp >= INVALID_BASE:
        out[o] = byte_ids[cp - INVALID_BASE]
        return o + 1
    if cp < 0x80:
        out[o] = byte_ids[cp]
        return o + 1
    if cp < 0x800:
        out[o] = byte_ids[0xC0 | (cp >> 6)]
        out[o + 1] = byte_ids[0x80 | (cp & 0x3F)]
        return o + 2
    if cp < 0x10000:
        out[o] = byte_ids[0xE0 | (cp >> 12)]
        out[o + 1] = byte_ids[0x80 | ((cp >> 6) & 0x3F)]
        out[o + 2] = byte_ids[0x80 | (cp & 0x3F)]
        return o + 3
    out[o] = byte_ids[0xF0 | (cp >> 18)]
    out[o + 1] = byte_ids[0x80 | ((cp >> 12) & 0x3F)]
    out[o + 2] = byte_ids[0x80 | ((cp >> 6) & 0x3F)]
    out[o + 3] = byte_ids[0x80 | (cp & 0x3F)]
    return o + 4


@kernel
def finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, o):
    """Write the final ids of ``syms[:m]`` into ``out`` from ``o``: returns the new ``o``.

    ``out`` must have room for bos + eos + 4 * m ids. ``bos`` / ``eos`` < 0: not added.
    """
    if bos >= 0:
        out[np.uint64(o)] = bos
        o += 1
    prev_unk = False
    for t in range(m):
        s = syms[np.uint64(t)]
        if s < V:
            out[np.uint64(o)] = s
            o += 1
            prev_unk = False
        elif byte_fallback:
            o = _emit_symbol_bytes(s, V, byte_ids, out, o)
        else:
            if not prev_unk:
                out[np.uint64(o)] = unk_id
                o += 1
            prev_unk = True
    if eos >= 0:
        out[np.uint64(o)] = eos
        o += 1
    return o


@kernel
def place_ids(syms, m, F, out, lo, hi, tmp):
    """``finish_ids`` into ``out[lo:hi]``; returns the count, or -1 if it does not fit."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    if hi - lo >= 4 * m + 2:
        return finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, lo) - lo
    if tmp.shape[0] < 4 * m + 2:
        tmp = np.empty(4 * m + 2, np.int32)
    o = finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, tmp, 0)
    if o > hi - lo:
        return -1
    for j in range(o):
        out[lo + j] = tmp[j]
    return o


@kernel
def count_ids(syms, m, V, byte_fallback, bos, eos):
    """The number of ids ``finish_ids`` writes for ``syms[:m]``."""
    k = (1 if bos >= 0 else 0) + (1 if eos >= 0 else 0)
    prev_unk = False
    for t in range(m):
        s = syms[t]
        if s < V:
            k += 1
            prev_unk = False
        elif byte_fallback:
            cp = s - V
            k += 1 if (cp >= INVALID_BASE or cp < 0x80) else (2 if cp < 0x800 else (3 if cp < 0x10000 else 4))
        else:
            if not prev_unk:
                k += 1
            prev_unk = True
    return k
