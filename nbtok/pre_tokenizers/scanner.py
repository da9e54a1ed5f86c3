"""Byte-level pre-tokenizers (GPT-2, cl100k, o200k families) as one hand-written scanner.

The scanner walks UTF-8 bytes and reproduces, byte for byte, the leftmost-first match sequence of
``regex.findall(pattern, text)`` (and tiktoken's split) for the patterns in
``nbtok.pre_tokenizers.bytelevel.PATTERNS``. At each position the alternatives are tried in the
pattern's order -- contraction, letters, digits, punctuation, whitespace -- and the first that
matches wins, with each alternative's greedy/backtracking outcome computed directly:

* ``\\s+(?!\\S)`` backs off one character before a non-space; a one-char run falls to ``\\s``.
* ``\\s*[\\r\\n]`` / ``\\s*[\\r\\n]+`` end after the LAST CR/LF of the whitespace run.
* ``\\s++$`` (tiktoken cl100k) takes a whitespace run that reaches the end, before the newline rule.
* o200k's ``[A|C]*[B|C]+`` gives back trailing A chars up to the last C (A = Lu|Lt, B = Ll,
  C = Lm|Lo|M); ``[A|C]+[B|C]*`` catches what is left; the optional ``[^\\r\\n\\p{L}\\p{N}]``
  prefix is non-possessive, so a leading mark that cannot prefix a word is a word of its own.

Possessive and non-possessive spellings of these patterns give identical splits, so they share a
config. "End of text" (``$``, ``(?!\\S)`` at the end) is ``end``: the scanner sees one document.

Input is ``buf[start:end]``, valid UTF-8 (the caller encodes from ``str``). ``table`` is
``nbtok.pre_tokenizers.unicode_classes.load_table()``: per code point bits L=1, N=2, WS=4, UP=8 (Lu|Lt),
LOW=16 (Ll), OTH=32 (Lm|Lo|M), M=64 (\\p{M}).

cfg (int64[9]) -- build it with ``nbtok.pre_tokenizers.bytelevel.scanner_config(name_or_pattern)``:

====  ===========  =========================================================================
idx   name         values
====  ===========  =========================================================================
0     CONTR        0 none; 1 ``'(?:[sdmt]|ll|ve|re)`` first alternative, case-sensitive (GPT-2);
                   2 same, case-insensitive (cl100k; ``'ſ`` U+017F matches like ``'s``);
                   3 o200k: case-insensitive ``(?:'s|'t|'re|'ve|'m|'ll|'d)?`` attached to the
                   end of each letter run, no standalone alternative;
                   4 first alternative, ASCII-only case-insensitive (llama.cpp's
                   ``(?:'[sS]|'[tT]|'[rR][eE]|...)`` spelling: ``'ſ`` does not match)
1     LETTERS      0 `` ?\\p{L}+`` (GPT-2); 1 ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`` (cl100k);
                   2 o200k's two case-aware alternatives, each with that optional prefix
2     DIGITS       max digits per group: 0 unbounded (``\\p{N}+``), else k (``\\p{N}{1,k}``)
3     DIGIT_SPACE  1: digits take an optional leading space `` ?\\p{N}..`` (GPT-2); 0: none
4     PUNCT_TAIL   0 none; 1 ``[\\r\\n]*`` (cl100k); 2 ``[\\r\\n/]*`` (o200k)
5     NEWLINE      1: ``\\s*[\\r\\n]+`` alternative before ``\\s+(?!\\S)`` (cl100k, o200k); 0: none
6     WS_END       1: ``\\s++$`` before the newline rule (tiktoken's cl100k and gpt2); 0: none
7     PUNCT_SPACE  1: punctuation takes an optional leading space `` ?[^\\s\\p{L}\\p{N}]+`` (all)
8     MARKS        1: marks join letters: ``[\\p{L}\\p{M}]+`` words and ``[^\\s\\p{L}\\p{M}\\p{N}]``
                   punctuation (Qwen3.5); only with LETTERS 0 or 1
====  ===========  =========================================================================

Kernels:

* ``pretokenize(buf, start, end, table, cfg, out_ends) -> count`` writes the ABSOLUTE end
  offset of each pre-token to ``out_ends[:count]`` (pre-tokens are contiguous and cover
  ``[start, end)``). It stops when ``out_ends`` is full: ``end - start`` entries always
  suffice; with fewer, the scan goes on from ``out_ends[count - 1]`` by another call, with
  the same ``end`` (each pre-token is found with the whole text after it in view, so the
  pieces are the same as in one call).
* ``next_end(buf, i, end, table, cfg) -> int`` the end of the pre-token starting at ``i``.
* ``pretokenize_batch(buf, offsets, table, cfg, out_ends, counts)``: document d is
  ``buf[offsets[d]:offsets[d+1]]``; its ends go to ``out_ends[offsets[d]:offsets[d]+counts[d]]``
  (``out_ends`` has ``len(buf)`` entries), parallel over documents.

For parity with tiktoken / HF tokenizers pass their table (``load_table("tiktoken")``, Unicode
16.0) rather than the default ``regex`` one (Unicode 17.0); see ``nbtok.pre_tokenizers.unicode_classes``.

Speed (one thread, shared 2-core VM, bench corpora): 170-210 MB/s on English, 160-340 MB/s on
Russian, 200-260 MB/s on Japanese, depending on the pattern.

Numba's on-disk cache does not track calls across modules: kernels elsewhere that call these
keep a stale inlined copy after this file changes until their own cache files are removed.
"""
import numpy as np
from numba import prange

from .._jit import batch_kernel, leaf_kernel

L, N, WS, UP, LOW, OTH, M = 1, 2, 4, 8, 16, 32, 64
CONTR, LETTERS, DIGITS, DIGIT_SPACE, PUNCT_TAIL, NEWLINE, WS_END, PUNCT_SPACE, MARKS = range(9)
CFG_SIZE = 9

# contraction modes / letter modes
CONTR_NONE, CONTR_CASE, CONTR_ICASE, CONTR_ATTACHED, CONTR_ASCII_ICASE = 0, 1, 2, 3, 4
LETTERS_SPACE, LETTERS_PREFIX, LETTERS_O200K = 0, 1, 2


@leaf_kernel
def decode_at(buf, i):
    """(code point, byte length) of the UTF-8 character at ``buf[i]`` (input is valid)."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return (((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6)
                | (np.int64(buf[i + 2]) & 0x3F)), 3
    return (((b0 & 0x07) << 18) | ((np.int64(buf[i + 1]) & 0x3F) << 12)
            | ((np.int64(buf[i + 2]) & 0x3F) << 6) | (np.int64(buf[i + 3]) & 0x3F)), 4


@leaf_kernel
def class_at(buf, i, table):
    """(class bits, code point, byte length) at ``buf[i]``."""
    b0 = buf[i]
    if b0 < 0x80:
        return np.int64(table[b0]), np.int64(b0), 1
    cp, n = decode_at(buf, i)
    return np.int64(table[cp]), cp, n


@leaf_kernel
def run_end(buf, i, end, table, mask):
    """End of the maximal run, from ``i``, of characters whose class has a bit in ``mask``."""
    while i < end:
        b0 = buf[i]
        if b0 < 0x80:
            if table[b0] & mask:
                i += 1
                continue
            return i
        cp, n = decode_at(buf, i)
        if table[cp] & mask:
            i += n
        else:
            return i
    return i


@leaf_kernel
def digit_run_end(buf, i, end, table, maxd):
    """End of ``\\p{N}{1,maxd}`` (``maxd`` 0: unbounded) at ``i`` (``buf[i]`` is a digit)."""
    if maxd <= 0:
        return run_end(buf, i, end, table, N)
    k = 0
    while i < end and k < maxd:
        c, cp, n = class_at(buf, i, table)
        if c & N:
            i += n
            k += 1
        else:
            break
    return i


@leaf_kernel
def contraction_len(buf, p, end, icase):
    """Byte length of ``[sdmt]|ll|ve|re`` at ``p`` (after an apostrophe), 0 if none.

    ``icase``: 0 exact; 1 case-insensitive as the ``regex`` module (and Rust regex) does it: ASCII
    case plus U+017F (long s) for s; 2 ASCII case only.
    """
    if p >= end:
        return 0
    b = np.int64(buf[p])
    if icase:
        if icase == 1 and b == 0xC5 and p + 1 < end and buf[p + 1] == 0xBF:  # U+017F folds to 's'
            return 2
        if 65 <= b <= 90:
            b += 32
    if b == 115 or b == 116 or b == 109 or b == 100:  # s t m d
        return 1
    if p + 1 < end and (b == 114 or b == 118 or b == 108):  # r v l
        b2 = np.int64(buf[p + 1])
        if icase and 65 <= b2 <= 90:
            b2 += 32
        if b2 == 101 and b != 108:  # re ve
            return 2
        if b2 == 108 and b == 108:  # ll
            return 2
    return 0


@leaf_kernel
def attach_contraction(buf, r, end):
    """o200k: extend a word ending at ``r`` by an optional ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``."""
    if r < end and buf[r] == 0x27:
        m = contraction_len(buf, r + 1, end, 1)
        if m > 0:
            return r + 1 + m
    return r


@leaf_kernel
def o200k_word(buf, p, end, table, allow_second):
    """o200k's letter alternatives (without prefix / contraction) at ``p``; -1 if no match.

    First ``[A|C]*[B|C]+``: the maximal A|C run, then if a B follows extend over B|C; otherwise
    give back trailing A chars up to the last C. If ``allow_second``, fall back to
    ``[A|C]+[B|C]*`` (which, after the first failed, is just the nonempty A run).
    """
    q = p
    last_c_end = np.int64(-1)
    while q < end:
        c, cp, n = class_at(buf, q, table)
        if c & (UP | OTH):
            q += n
            if c & OTH:
                last_c_end = q
        else:
            break
    if q < end:
        c, cp, n = class_at(buf, q, table)
        if c & LOW:
            return run_end(buf, q + n, end, table, LOW | OTH)
    if last_c_end >= 0:
        return last_c_end
    if allow_second and q > p:
        return q
    return -1


@leaf_kernel
def whitespace_end(buf, i, end, table, newline, ws_end):
    """``\\s++$ | \\s*[\\r\\n]+ | \\s+(?!\\S) | \\s+`` at ``i`` (``buf[i]`` is whitespace)."""
    j = i
    last_start = i
    last_nl_end = np.int64(-1)
    while j < end:
        b0 = buf[j]
        if b0 < 0x80:
            if table[b0] & WS:
                last_start = j
                j += 1
                if b0 == 10 or b0 == 13:
                    last_nl_end = j
                continue
            break
        cp, n = decode_at(buf, j)
        if table[cp] & WS:
            last_start = j
            j += n
        else:
            break
    if j == end and ws_end:
        return j
    if newline and last_nl_end >= 0:
        return last_nl_end
    if j == end or last_start == i:
        return j
    return last_start


@leaf_kernel
def punct_end(buf, p, end, table, tail, stop):
    """``[^\\s\\p{L}\\p{N}]+`` (class bits ``stop`` end it) from ``p``, then the ``[\\r\\n]*`` /
    ``[\\r\\n/]*`` tail."""
    while p < end:
        b0 = buf[p]
        if b0 < 0x80:
            if table[b0] & stop:
                break
            p += 1
            continue
        cp, n = decode_at(buf, p)
        if table[cp] & stop:
            break
        p += n
    if tail:
        while p < end:
            b0 = buf[p]
            if b0 == 10 or b0 == 13 or (tail == 2 and b0 == 47):
                p += 1
            else:
                break
    return p


@leaf_kernel
def next_end(buf, i, end, table, cfg):
    """End offset of the pre-token that starts at ``i`` (``start <= i < end``)."""
    contr = cfg[CONTR]
    c0, cp0, n0 = class_at(buf, i, table)
    i1 = i + n0
    # 1. standalone contractions (GPT-2 / cl100k): first alternative
    if cp0 == 0x27 and (contr == CONTR_CASE or contr == CONTR_ICASE or contr == CONTR_ASCII_ICASE):
        m = contraction_len(buf, i1, end, 1 if contr == CONTR_ICASE else (2 if contr == CONTR_ASCII_ICASE else 0))
        if m > 0:
            return i1 + m
    letters = cfg[LETTERS]
    lmask = L | M if cfg[MARKS] else L  # what a word is made of
    pstop = lmask | N | WS  # what ends punctuation
    # 2. letters
    if letters == LETTERS_O200K:
        if c0 & L:
            r = o200k_word(buf, i, end, table, True)
            return attach_contraction(buf, r, end) if contr == CONTR_ATTACHED else r
        if not (c0 & N) and cp0 != 10 and cp0 != 13 and i1 < end:
            # optional prefix [^\r\n\p{L}\p{N}] (non-possessive)
            is_mark = (c0 & OTH) != 0
            r = o200k_word(buf, i1, end, table, not is_mark)
            if r < 0 and is_mark:
                r = o200k_word(buf, i, end, table, False)  # the mark itself is [B|C]+
            if r >= 0:
                return attach_contraction(buf, r, end) if contr == CONTR_ATTACHED else r
        elif (c0 & OTH) and not (c0 & N):
            # a mark at the very end of the text
            return i1
    else:
        if c0 & lmask:
            r = run_end(buf, i1, end, table, lmask)
            return attach_contraction(buf, r, end) if contr == CONTR_ATTACHED else r
        if i1 < end:
            if letters == LETTERS_SPACE:
                has_prefix = cp0 == 0x20
            else:
                has_prefix = not (c0 & N) and cp0 != 10 and cp0 != 13
            if has_prefix:
                c1, cp1, n1 = class_at(buf, i1, table)
                if c1 & lmask:
                    r = run_end(buf, i1 + n1, end, table, lmask)
                    return attach_contraction(buf, r, end) if contr == CONTR_ATTACHED else r
    # 3. digits
    maxd = cfg[DIGITS]
    if c0 & N:
        return digit_run_end(buf, i, end, table, maxd)
    if cfg[DIGIT_SPACE] and cp0 == 0x20 and i1 < end:
        c1, cp1, n1 = class_at(buf, i1, table)
        if c1 & N:
            return digit_run_end(buf, i1, end, table, maxd)
    # 4. punctuation
    tail = cfg[PUNCT_TAIL]
    if not (c0 & pstop):
        return punct_end(buf, i1, end, table, tail, pstop)
    if cfg[PUNCT_SPACE] and cp0 == 0x20 and i1 < end:
        c1, cp1, n1 = class_at(buf, i1, table)
        if not (c1 & pstop):
            return punct_end(buf, i1 + n1, end, table, tail, pstop)
    # 5. whitespace (every non-space character was taken above)
    return whitespace_end(buf, i, end, table, cfg[NEWLINE], cfg[WS_END])


@leaf_kernel
def pretokenize(buf, start, end, table, cfg, out_ends):
    """Write the absolute end offset of each pre-token of ``buf[start:end]``; return the count.
    Stops early when ``out_ends`` is full (see the module docstring).

    The common ASCII pieces of running text -- `` word``, ``word``, ``,`` / ``.`` / `` (``,
    ``\n`` before text, short digit runs -- are scanned inline here (numba does not inline the
    bigger helpers, and each call costs argument marshalling and reference counting); everything
    else goes through ``next_end``. Both give identical results.
    """
    letters = cfg[LETTERS]
    contr = cfg[CONTR]
    maxd = cfg[DIGITS]
    tail = cfg[PUNCT_TAIL]
    o200k = letters == LETTERS_O200K
    attached = contr == CONTR_ATTACHED
    standalone = contr == CONTR_CASE or contr == CONTR_ICASE or contr == CONTR_ASCII_ICASE
    lmask = L | M if cfg[MARKS] else L
    count = 0
    room = out_ends.shape[0]
    i = start
    while i < end and count < room:
        b0 = buf[i]
        r = np.int64(-1)
        wp = np.int64(-1)
        n = 1
        if b0 < 0x80:
            c0 = table[b0]
            p = i
            if b0 == 0x20 and i + 1 < end:
                p = i + 1  # a space may prefix letters in every mode
            bp = buf[p]
            if bp < 0x80 and (table[bp] & L):
                # ---- letters starting with an ASCII letter at p
                if o200k:
                    q = p
                    while q < end and 65 <= buf[q] <= 90:
                        q += 1
                    if q < end and buf[q] >= 0x80:
                        r = -1  # non-ASCII inside the word: general path
                    elif q < end and 97 <= buf[q] <= 122:
                        r = q + 1
                        while r < end and 97 <= buf[r] <= 122:
                            r += 1
                        if r < end and buf[r] >= 0x80:
                            r = -1
                    else:
                        r = q
                else:
                    r = p + 1
                    while r < end:
                        b = buf[r]
                        if b >= 0x80:
                            r = -1
                            break
                        if table[b] & L:
                            r += 1
                        else:
                            break
                if r >= 0 and attached and r < end and buf[r] == 0x27:
                    r = -1  # a possible attached contraction: general path
            elif bp >= 0x80:
                # ---- letters starting with a non-ASCII letter at p (p == i + 1, after a space)
                cp, n = decode_at(buf, p)
                if table[cp] & lmask:
                    wp = p
            elif c0 & N:
                # ---- ASCII digits (no leading space: that is GPT-2's rarer case)
                r = i + 1
                k = 1
                while r < end and (maxd <= 0 or k < maxd):
                    b = buf[r]
                    if 48 <= b <= 57:
                        r += 1
                        k += 1
                    else:
                        if b >= 0x80:
                            r = -1
                        break
            elif b0 == 10:
                # ---- a lone LF before ASCII non-space text: never a prefix, one piece
                if i + 1 < end:
                    b = buf[i + 1]
                    if b < 0x80 and not (table[b] & WS):
                        r = i + 1
            elif not (c0 & WS) and not (standalone and b0 == 0x27):
                # ---- ASCII punctuation run (cl100k/o200k: unless it prefixes a letter)
                if i + 1 < end:
                    b = buf[i + 1]
                    if b < 0x80 and (letters == LETTERS_SPACE or not (table[b] & L)):
                        r = i + 1
                        while r < end:
                            b = buf[r]
                            if b >= 0x80:
                                r = -1
                                break
                            if table[b] & (L | N | WS):
                                break
                            r += 1
                        if r >= 0 and tail:
                            while r < end:
                                b = buf[r]
                                if b == 10 or b == 13 or (tail == 2 and b == 47):
                                    r += 1
                                else:
                                    break
                            if r < end and buf[r] >= 0x80:
                                r = -1  # cannot happen after a tail, but stay exact
        else:
            # ---- a non-ASCII letter run (the common piece of non-Latin text)
            cp, n = decode_at(buf, i)
            if table[cp] & lmask:
                wp = i
        if wp >= 0:
            # ---- a word whose first letter (at wp) is non-ASCII
            if o200k:
                # o200k_word(buf, wp, end, table, True), inlined
                q = wp
                last_c_end = np.int64(-1)
                c = 0
                while q < end:
                    b = buf[q]
                    if b < 0x80:
                        c = table[b]
                        n = 1
                    else:
                        cp, n = decode_at(buf, q)
                        c = table[cp]
                    if c & (UP | OTH):
                        q += n
                        if c & OTH:
                            last_c_end = q
                    else:
                        break
                if q < end and (c & LOW):
                    r = run_end(buf, q + n, end, table, LOW | OTH)
                elif last_c_end >= 0:
                    r = last_c_end
                else:
                    r = q
            else:
                r = run_end(buf, wp + n, end, table, lmask)
            if attached and r < end and buf[r] == 0x27:
                r = -1
        if r < 0:
            r = next_end(buf, i, end, table, cfg)
        i = r
        out_ends[count] = i
        count += 1
    return count


@batch_kernel
def pretokenize_batch(buf, offsets, table, cfg, out_ends, counts):
    """Pre-tokenize every document ``buf[offsets[d]:offsets[d+1]]`` in parallel.

    Document d's ends are written to ``out_ends[offsets[d]:offsets[d] + counts[d]]``.
    """
    n = offsets.shape[0] - 1
    for d in prange(n):
        s = offsets[d]
        counts[d] = pretokenize(buf, s, offsets[d + 1], table, cfg, out_ends[s:])
    return counts
