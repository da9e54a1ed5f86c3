"""sentencepiece's BPE merge loop as one kernel (``bpe.train_bpe_pieces`` gives its semantics).

State, over the words back to back (``syms``, word ``wid`` per position):

    positions  cur int32  the symbol at each position (-1 once merged into its left neighbour),
               nxt / prv  the next / previous live position of the same word (-1: none)
    tokens     tok_bytes, tok_off (UTF-8 bytes per token), nchar (characters per token),
               a hash table bytes -> token (a piece made twice is dropped the second time)
    pairs      ptab: key ``left << 32 | right`` -> pair id, or INVALID for a pair whose piece
               ``IsValidSentencePiece`` rejects (checked once per key);
               pinfo rows (count, first occurrence, touched mark, key) as in
               ``train.bpe_kernels``; ptail, palive; a merged or dropped pair is dead and
               comes back with count 0 if its two symbols meet again
    occurrences  occ_pos (the left position) and occ_next: each pair's positions in the order
               they were found, the order sentencepiece merges them in
    heap       ``train.bpe_kernels``'s, ordered by count, then sentencepiece's tie-break
               (TIE_SENTENCEPIECE); the pairs whose count changed are pushed before each pop,
               and an entry whose count is not its pair's count is stale and skipped

Characters travel as their class (``cls[code point]``, built from ``validity``): a script id,
or WS / FORBIDDEN / INHERITED, plus the DIGIT bit.
"""
import numpy as np

from ..._jit import kernel
from ...kernels.hashmap import hash_bytes
from ..bpe_kernels import (P_COUNT, P_HEAD, P_KEY, P_MARK, TIE_SENTENCEPIECE, _grow_i32, _grow_i64, _grow_rows,
                           _grow_u8, _heap_push, _pair_find, _pair_put, _pair_rehash, _sift_down, _tok_find,
                           _tok_put)

WS, FORBIDDEN, INHERITED, NO_SCRIPT = 0xFFF, 0xFFE, 0xFFD, -1
DIGIT = 0x1000
SCRIPT_MASK = 0xFFF
INVALID = -2
# opts: max_sentencepiece_length, split_by_unicode_script, split_by_number, split_digits, ws flags
MAX_LEN, BY_SCRIPT, BY_NUMBER, DIGITS, WS_FLAGS = range(5)
SUFFIX, SPLIT, ALLOW_ONLY = 1, 2, 4   # (whitespace.ws_flags)


@kernel
def _decode_at(b, i):
    """(code point, length) of the UTF-8 character at ``b[i]`` (the pieces are valid UTF-8)."""
    c = np.int64(b[i])
    if c < 0x80:
        return c, 1
    if c < 0xE0:
        return ((c & 0x1F) << 6) | (np.int64(b[i + 1]) & 0x3F), 2
    if c < 0xF0:
        return ((c & 0x0F) << 12) | ((np.int64(b[i + 1]) & 0x3F) << 6) | (np.int64(b[i + 2]) & 0x3F), 3
    return (((c & 0x07) << 18) | ((np.int64(b[i + 1]) & 0x3F) << 12) | ((np.int64(b[i + 2]) & 0x3F) << 6)
            | (np.int64(b[i + 3]) & 0x3F)), 4


@kernel
def _ws_allowed(pos, n, all_ws, flags):
    if flags & ALLOW_ONLY and all_ws:
        return True
    if flags & SUFFIX:
        return pos == n - 1 if flags & SPLIT else not (pos == 0 and n > 1)
    return pos == 0 if flags & SPLIT else not (pos == n - 1 and n > 1)


@kernel
def valid_pair(T, a, b, cls, opts):
    """``IsValidSentencePiece`` of the piece token a + token b (``validity.Validity``)."""
    tok_bytes, tok_off, nchar = T[0], T[1], T[2]
    n = nchar[a] + nchar[b]
    if n > opts[MAX_LEN]:
        return False
    all_ws = True
    for part in (a, b):
        i = tok_off[part]
        while i < tok_off[part + 1]:
            c, k = _decode_at(tok_bytes, i)
            all_ws = all_ws and (cls[c] & SCRIPT_MASK) == WS
            i += k
    prev = NO_SCRIPT
    pos = 0
    for part in (a, b):
        i = tok_off[part]
        while i < tok_off[part + 1]:
            c, k = _decode_at(tok_bytes, i)
            i += k
            s = np.int64(cls[c] & SCRIPT_MASK)
            digit = (cls[c] & DIGIT) != 0
            if s == FORBIDDEN:
                return False
            if s == WS:
                if not _ws_allowed(pos, n, all_ws, opts[WS_FLAGS]):
                    return False
                pos += 1
                continue
            if s == INHERITED:   # a combining mark takes the script of what it follows
                s = prev
            if digit and not opts[BY_NUMBER]:
                s = NO_SCRIPT
            if digit and opts[DIGITS] and n > 1:
                return False
            if opts[BY_SCRIPT] and s != NO_SCRIPT and prev != NO_SCRIPT and prev != s:
                return False
            prev = s
            pos += 1
    return True


@kernel
def _new_token(T, a, b):
    """Token a + token b appended to ``T``; returns (T, its id)."""
    tok_bytes, tok_off, nchar, ntok = T
    la = tok_off[a + 1] - tok_off[a]
    lb = tok_off[b + 1] - tok_off[b]
    start = tok_off[ntok]
    tok_bytes = _grow_u8(tok_bytes, start + la + lb)
    tok_bytes[start:start + la] = tok_bytes[tok_off[a]:tok_off[a + 1]]
    tok_bytes[start + la:start + la + lb] = tok_bytes[tok_off[b]:tok_off[b + 1]]
    tok_off = _grow_i64(tok_off, ntok + 2)
    tok_off[ntok + 1] = start + la + lb
    nchar = _grow_i64(nchar, ntok + 1)
    nchar[ntok] = nchar[a] + nchar[b]
    return (tok_bytes, tok_off, nchar, ntok + 1), ntok


NPAIRS, NKEYS, NOCC, NTOUCHED = range(4)   # the counters in G's cnt


@kernel
def _new_state(n):
    """``G = (ptab, pinfo, ptail, palive, occurrence nodes (position, next), touched, cnt)``,
    with room for the pairs of ``n`` positions."""
    return _reserve((np.full((1024, 2), -1, np.int64), np.empty((16, 4), np.int64), np.empty(16, np.int64),
                     np.zeros(16, np.uint8), np.empty((16, 2), np.int32), np.empty(16, np.int32),
                     np.zeros(4, np.int64)), n + 16)


@kernel
def _reserve(G, extra):
    """``G`` with room for ``extra`` more occurrences, pairs and keys (grown here, so that the
    helpers below never reallocate)."""
    ptab, pinfo, ptail, palive, onodes, touched, cnt = G
    need = cnt[NPAIRS] + extra
    if need > pinfo.shape[0]:
        pinfo = _grow_rows(pinfo, need)
        ptail = _grow_i64(ptail, need)
        grown = np.zeros(pinfo.shape[0], np.uint8)
        grown[:palive.shape[0]] = palive
        palive = grown
        touched = _grow_i32(touched, need)
    onodes = _grow_rows(onodes, cnt[NOCC] + extra)
    cap = ptab.shape[0]
    while 2 * (cnt[NKEYS] + extra) > cap:
        cap *= 2
    if cap != ptab.shape[0]:
        ptab = _pair_rehash(ptab, cap)
    return (ptab, pinfo, ptail, palive, onodes, touched, cnt)


@kernel
def _add_pair(G, T, W, l, r, cls, opts):
    """The symbols at adjacent positions l, r (``W = (cur, wid, wfreq)``) as an occurrence of
    their pair: a new key is checked once (an invalid one is remembered as INVALID); a dead pair
    comes back with count 0 and no occurrences."""
    ptab, pinfo, ptail, palive, onodes, touched, cnt = G
    cur, wid, wfreq = W
    a, b = np.int64(cur[l]), np.int64(cur[r])
    key = (a << 32) | b
    p = _pair_find(ptab, key)
    if p == INVALID:
        return
    if p == -1:
        cnt[NKEYS] += 1
        if not valid_pair(T, a, b, cls, opts):
            _pair_put(ptab, key, INVALID)
            return
        p = cnt[NPAIRS]
        cnt[NPAIRS] += 1
        _pair_put(ptab, key, p)
        pinfo[p, P_KEY] = key
        pinfo[p, P_MARK] = 0
        palive[p] = 0
    if not palive[p]:
        palive[p] = 1
        pinfo[p, P_COUNT] = 0
        pinfo[p, P_HEAD] = -1
        ptail[p] = -1
    o = cnt[NOCC]
    cnt[NOCC] += 1
    onodes[o, 0] = l
    onodes[o, 1] = -1
    if ptail[p] < 0:
        pinfo[p, P_HEAD] = o
    else:
        onodes[ptail[p], 1] = o
    ptail[p] = o
    pinfo[p, P_COUNT] += wfreq[wid[l]]
    _touch(G, p)


@kernel
def _drop_pair(G, W, l, r, best):
    """One occurrence less for the pair at positions l, r, unless it is ``best`` (being merged)."""
    ptab, pinfo, palive = G[0], G[1], G[3]
    cur, wid, wfreq = W
    p = _pair_find(ptab, (np.int64(cur[l]) << 32) | np.int64(cur[r]))
    if p >= 0 and p != best and palive[p]:
        pinfo[p, P_COUNT] -= wfreq[wid[l]]
        _touch(G, p)


@kernel
def _touch(G, p):
    pinfo, touched, cnt = G[1], G[5], G[6]
    if pinfo[p, P_MARK] == 0:
        pinfo[p, P_MARK] = 1
        touched[cnt[NTOUCHED]] = p
        cnt[NTOUCHED] += 1


@kernel
def _pop_best(H, G, T):
    """Push the touched pairs with their counts, then pop until an entry is current: its pair
    (-1 if the heap runs dry). ``H = (hc, hp, size)``; returns (H, pair)."""
    hc, hp, hsize = H
    pinfo, palive, touched, cnt = G[1], G[3], G[5], G[6]
    tok_bytes, tok_off, nchar = T[0], T[1], T[2]
    for j in range(cnt[NTOUCHED]):
        p = touched[j]
        pinfo[p, P_MARK] = 0
        if palive[p]:
            hc, hp, hsize = _heap_push(hc, hp, hsize, pinfo[p, P_COUNT], p, TIE_SENTENCEPIECE, pinfo, nchar,
                                       tok_bytes, tok_off)
    cnt[NTOUCHED] = 0
    while hsize > 0:
        c, p = hc[0], hp[0]
        hsize -= 1
        if hsize > 0:
            hc[0], hp[0] = hc[hsize], hp[hsize]
            _sift_down(hc, hp, 0, hsize, TIE_SENTENCEPIECE, pinfo, nchar, tok_bytes, tok_off)
        if palive[p] and pinfo[p, P_COUNT] == c:
            return (hc, hp, hsize), p
    return (hc, hp, hsize), -1


@kernel
def train_pieces(syms, woff, wfreq, T, cls, opts, n_pieces):
    """The tokens sentencepiece's BPE trainer merges, in order (at most ``n_pieces``), over the
    words ``syms[woff[w]:woff[w + 1]]`` (token ids of ``T = (tok_bytes, tok_off, nchar, ntok)``,
    the characters), word w ``wfreq[w]`` times. Returns (T with the merged tokens, their ids)."""
    n = syms.shape[0]
    cur = syms.copy()
    nxt = np.empty(n, np.int32)   # (int32: positions and occurrences stay below 2**31, checked by the caller)
    prv = np.empty(n, np.int32)
    wid = np.empty(n, np.int32)
    for w in range(woff.shape[0] - 1):
        for i in range(woff[w], woff[w + 1]):
            wid[i] = w
            prv[i] = i - 1 if i > woff[w] else -1
            nxt[i] = i + 1 if i + 1 < woff[w + 1] else -1
    W = (cur, wid, wfreq)
    tcap = 1024
    while tcap < 4 * (T[3] + n_pieces + 1):
        tcap *= 2
    tslots = np.full(tcap, -1, np.int32)
    thash = np.zeros(tcap, np.int64)
    for t in range(T[3]):
        _tok_put(tslots, thash, t, hash_bytes(T[0], T[1][t], T[1][t + 1]))
    G = _new_state(n)
    for i in range(n):
        if nxt[i] >= 0:
            _add_pair(G, T, W, i, nxt[i], cls, opts)
    H = (np.empty(1024, np.int64), np.empty(1024, np.int32), 0)
    merged = np.empty(max(n_pieces, 1), np.int32)
    npieces = 0
    while npieces < n_pieces:
        H, best = _pop_best(H, G, T)
        if best < 0:
            break
        pinfo, palive, onodes = G[1], G[3], G[4]
        key = pinfo[best, P_KEY]
        a, b = np.int64(key >> 32), np.int64(key & 0xFFFFFFFF)
        palive[best] = 0
        T, t = _new_token(T, a, b)
        h = hash_bytes(T[0], T[1][t], T[1][t + 1])
        if _tok_find(tslots, thash, T[0], T[1], T[1][t], T[1][t + 1], h) >= 0:
            T = (T[0], T[1], T[2], T[3] - 1)   # (sentencepiece's dup check: the pair is dropped)
            continue
        _tok_put(tslots, thash, t, h)
        merged[npieces] = t
        npieces += 1
        m = 0
        o = pinfo[best, P_HEAD]
        while o >= 0:
            m += 1
            o = onodes[o, 1]
        G = _reserve(G, 2 * m + 4)
        onodes = G[4]
        o = G[1][best, P_HEAD]
        while o >= 0:
            l = onodes[o, 0]
            o = onodes[o, 1]
            r = nxt[l]
            if cur[l] != a or r < 0 or cur[r] != b:
                continue
            pv, nx = prv[l], nxt[r]
            if pv >= 0:
                _drop_pair(G, W, pv, l, best)
            if nx >= 0:
                _drop_pair(G, W, r, nx, best)
            cur[l] = t
            cur[r] = -1
            nxt[l] = nx
            if nx >= 0:
                prv[nx] = l
            if pv >= 0:
                _add_pair(G, T, W, pv, l, cls, opts)
            if nx >= 0:
                _add_pair(G, T, W, l, nx, cls, opts)
    return T, merged[:npieces].copy()
