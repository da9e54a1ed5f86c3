"""WordPiece: greedy longest-match-first over each word (HF ``WordPiece::tokenize``).

For every start position the longest vocabulary piece (``prefix + substring`` after the first
piece) is looked up through the model's ``BytesMap``, shrinking the candidate one char at a
time. A word with more than ``max_input_chars_per_word`` chars, or with a position where no
piece matches, becomes one unk token spanning the whole word.
"""
import numpy as np
from .._jit import kernel
from ..kernels.hashmap import bytesmap_get
from .text_units import _max_unit, unit_bytes
from ..pipeline.unit_kernels import END, START, TOK


@kernel
def wordpiece_word(cps, s, e, V, prefix, unk_id, max_chars, out_ids, out_s, out_e, pos, sc):
    buf, b2c, cstart, cand = sc
    n = e - s
    if n == 0:
        return pos
    if n > max_chars:
        out_ids[pos] = unk_id
        out_s[pos] = s
        out_e[pos] = e
        return pos + 1
    unit_bytes(cps, s, e, buf, b2c, cstart)
    p = prefix.shape[0]
    for k in range(p):
        cand[k] = prefix[k]
    start = 0  # char index within the word
    w = pos
    while start < n:
        end = n
        found = -1
        while start < end:
            b0 = cstart[start]
            b1 = cstart[end]
            if start > 0:
                for k in range(b0, b1):
                    cand[p + k - b0] = buf[k]
                tid = bytesmap_get(V[0], V[1], V[2], V[3], cand, 0, p + b1 - b0)
            else:
                tid = bytesmap_get(V[0], V[1], V[2], V[3], buf, b0, b1)
            if tid >= 0:
                found = tid
                break
            end -= 1
        if found < 0:
            out_ids[pos] = unk_id
            out_s[pos] = s
            out_e[pos] = e
            return pos + 1
        out_ids[w] = found
        out_s[w] = s + start
        out_e[w] = s + end
        w += 1
        start = end
    return w


@kernel
def wordpiece_range(U, lo, hi, cps, V, prefix, unk_id, max_chars, slot, out_ids, out_s, out_e, counts):
    cap = _max_unit(U, lo, hi)
    sc = (np.empty(4 * cap + 4, np.uint8), np.empty(4 * cap + 5, np.int64),
          np.empty(cap + 1, np.int64), np.empty(4 * cap + 4 + prefix.shape[0], np.uint8))
    for u in range(lo, hi):
        if U[u, TOK] >= 0:
            continue
        p = slot[u]
        counts[u] = wordpiece_word(cps, U[u, START], U[u, END], V, prefix, unk_id, max_chars,
                                   out_ids, out_s, out_e, p, sc) - p
