"""SentencePiece decoding: ids back to bytes (byte pieces joined into characters, the unknown
piece's surface, U+2581 back to spaces, the leading space dropped as sentencepiece drops it)."""
import numpy as np

from .._jit import kernel
from ..normalizers.sentencepiece import SPACE0, SPACE1, SPACE2, utf8_char_len


@kernel
def _flush_bytes(run, r, out, n):
    """Append a run of byte-piece values as UTF-8, each invalid byte as U+FFFD."""
    p = 0
    while p < r:
        ln = utf8_char_len(run, p, r)
        if ln == 0:
            out[n] = 0xEF
            out[n + 1] = 0xBF
            out[n + 2] = 0xBD
            n += 3
            p += 1
        else:
            for k in range(ln):
                out[n] = run[p + k]
                n += 1
            p += ln
    return n


@kernel
def _decode_size(ids, lo, hi, piece_offsets, unk_len):
    total = 8
    for t in range(lo, hi):
        i = ids[t]
        total += max(piece_offsets[i + 1] - piece_offsets[i], unk_len) + 3
    return total


@kernel
def _decode_into(ids, lo, hi, piece_bytes, piece_offsets, kinds, byte_values, unk_surface,
                 strip_first, keep_bos_ws, out, n, run):
    """sentencepiece's ``Decode`` of ``ids[lo:hi]`` appended to ``out`` at ``n``; returns the new n.

    Control pieces vanish, unk prints ``unk_surface``, byte pieces are reassembled (an invalid
    byte becomes U+FFFD), U+2581 becomes ' ', and while no text has been produced the leading
    U+2581 of a piece is dropped when ``strip_first`` (add_dummy_prefix or
    remove_extra_whitespaces). With ``keep_bos_ws`` (remove_extra_whitespaces off) only the first
    such U+2581 is dropped.
    """
    r = 0
    n0 = n
    is_bos_ws = True
    bos_ws_seen = False
    for t in range(lo, hi):
        i = ids[t]
        k = kinds[i]
        if k == 6:  # BYTE
            run[r] = byte_values[i]
            r += 1
            continue
        n = _flush_bytes(run, r, out, n)
        r = 0
        if bos_ws_seen or n > n0:
            is_bos_ws = False
        has_bos_ws = False
        if k == 3:  # CONTROL
            pass
        elif k == 2:  # UNKNOWN
            for j in range(unk_surface.shape[0]):
                out[n] = unk_surface[j]
                n += 1
        else:
            s = piece_offsets[i]
            e = piece_offsets[i + 1]
            if is_bos_ws and strip_first:
                if e - s >= 3 and piece_bytes[s] == SPACE0 and piece_bytes[s + 1] == SPACE1 and piece_bytes[s + 2] == SPACE2:
                    s += 3
                    has_bos_ws = True
                if not keep_bos_ws:
                    has_bos_ws = False
            p = s
            while p < e:
                if p + 3 <= e and piece_bytes[p] == SPACE0 and piece_bytes[p + 1] == SPACE1 and piece_bytes[p + 2] == SPACE2:
                    out[n] = 0x20
                    n += 1
                    p += 3
                else:
                    out[n] = piece_bytes[p]
                    n += 1
                    p += 1
        bos_ws_seen = has_bos_ws
    return _flush_bytes(run, r, out, n)


@kernel
def decode_ids(ids, piece_bytes, piece_offsets, kinds, byte_values, unk_surface, strip_first, keep_bos_ws):
    """Decode one id sequence to bytes (see ``_decode_into``)."""
    out = np.empty(_decode_size(ids, 0, ids.shape[0], piece_offsets, unk_surface.shape[0]), np.uint8)
    run = np.empty(ids.shape[0] + 1, np.uint8)
    n = _decode_into(ids, 0, ids.shape[0], piece_bytes, piece_offsets, kinds, byte_values, unk_surface,
                     strip_first, keep_bos_ws, out, 0, run)
    return out[:n].copy()


@kernel
def decode_ragged(ids, offsets, piece_bytes, piece_offsets, kinds, byte_values, unk_surface, strip_first,
                  keep_bos_ws):
    """Decode documents ``ids[offsets[d]:offsets[d+1]]``: (flat bytes, byte offsets)."""
    n_docs = offsets.shape[0] - 1
    out = np.empty(_decode_size(ids, 0, ids.shape[0], piece_offsets, unk_surface.shape[0]), np.uint8)
    run = np.empty(ids.shape[0] + 1, np.uint8)
    out_off = np.zeros(n_docs + 1, np.int64)
    n = 0
    for d in range(n_docs):
        n = _decode_into(ids, offsets[d], offsets[d + 1], piece_bytes, piece_offsets, kinds, byte_values,
                         unk_surface, strip_first, keep_bos_ws, out, n, run)
        out_off[d + 1] = n
    return out[:n].copy(), out_off
