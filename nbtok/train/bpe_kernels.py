"""BPE training: the merge loop as one ``@njit`` kernel over flat arrays.

State (all flat arrays, grown by doubling inside the kernel):

    words      syms int32[total]       symbol ids of every unique pre-token, back to back;
               woff int64[W + 1]       word w owns syms[woff[w]:woff[w] + wlen[w]]
               wlen int32[W]           (merging shrinks a word in place)
               wcnt int64[W]           how often the pre-token occurs
    tokens     tok_bytes uint8[], tok_off int64[T + 1]   bytes of every symbol id
               (0..255 are the single bytes, new ids are appended) plus a hash table
               bytes -> id so a merge whose bytes already exist reuses that id
    pairs      pinfo int64[P, 4] rows (count, list head, mark, left << 32 | right);
               ptab int64[cap, 2] rows (key, pair id): open addressing, key left << 32 | right
    index      nodes int32[N, 2] rows (word, next node): pair -> linked list of words that
               (may) contain it, through the pair's list head: append-only,
               entries may be stale or repeated; a per-step mark skips repeats and a
               word that no longer holds the pair is simply scanned for nothing
    heap       hc int64[H] (count), hp int32[H] (pair id): a max-heap ordered by
               (count, tie-break). Lazy invalidation: a popped entry whose count is not
               the pair's current count is re-pushed with the current count (counts of
               existing pairs only fall, so the first entry that matches is the maximum).

Tie-break modes (for equal counts):
    TIE_GREATEST_BYTES  the lexicographically greatest (left bytes, right bytes) wins
                        (the CS336 reference: Python ``max`` over (bytes, bytes) tuples)
    TIE_SMALLEST_RANK   the smallest (rank[left], rank[right]) wins (HF BpeTrainer and
                        rustbpe: rank = the token's id in their vocabulary)

Per merge the kernel only touches the words on the pair's list and updates the counts of
the pairs around each occurrence; counts stay exact (int64).
"""
import numpy as np

from .._jit import kernel
from ..kernels.hashmap import hash_bytes, mix64

TIE_GREATEST_BYTES = 0
TIE_SMALLEST_RANK = 1
TIE_SENTENCEPIECE = 2   # fewer characters (``rank`` = characters per token), then the smaller piece,
                        # then the shorter left token (sentencepiece's trainer: train/sentencepiece/bpe_loop.py)


# ---------------------------------------------------------------- growable arrays
@kernel
def _grow_i32(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(2 * a.shape[0], need, 16)
    b = np.empty(cap, np.int32)
    b[:a.shape[0]] = a
    return b


@kernel
def _grow_i64(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(2 * a.shape[0], need, 16)
    b = np.empty(cap, np.int64)
    b[:a.shape[0]] = a
    return b


@kernel
def _grow_u8(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(2 * a.shape[0], need, 16)
    b = np.empty(cap, np.uint8)
    b[:a.shape[0]] = a
    return b


# ---------------------------------------------------------------- pair table
# ptab int64[cap, 2] rows (key, pair id), key = left << 32 | right, -1 = empty.
# pinfo int64[P, 4] rows (count, list head, mark, key): one cache line per pair.
P_COUNT, P_HEAD, P_MARK, P_KEY = 0, 1, 2, 3


@kernel
def _pair_find(ptab, key):
    mask = ptab.shape[0] - 1
    i = mix64(key) & mask
    while True:
        k = ptab[i, 0]
        if k == key:
            return ptab[i, 1]
        if k == -1:
            return -1
        i = (i + 1) & mask


@kernel
def _pair_put(ptab, key, val):
    mask = ptab.shape[0] - 1
    i = mix64(key) & mask
    while ptab[i, 0] != -1:
        i = (i + 1) & mask
    ptab[i, 0] = key
    ptab[i, 1] = val


@kernel
def _pair_rehash(ptab, cap):
    new = np.full((cap, 2), -1, np.int64)
    for i in range(ptab.shape[0]):
        if ptab[i, 0] != -1:
            _pair_put(new, ptab[i, 0], ptab[i, 1])
    return new


@kernel
def _grow_rows(a, need):
    if need <= a.shape[0]:
        return a
    cap = max(a.shape[0] + a.shape[0] // 2, need, 16)
    b = np.empty((cap, a.shape[1]), a.dtype)
    b[:a.shape[0]] = a
    return b


@kernel
def _new_pair(ptab, pinfo, npairs, key):
    """Append pair ``key`` (count 0, empty list); returns its id. Room is the caller's job."""
    p = npairs
    pinfo[p, P_COUNT] = 0
    pinfo[p, P_HEAD] = -1
    pinfo[p, P_MARK] = -1
    pinfo[p, P_KEY] = key
    _pair_put(ptab, key, p)
    return p


@kernel
def _link(pinfo, nodes, nnodes, free, p, w):
    """Put word w on pair p's list unless it is already at the head; returns the node count.
    Nodes come from the free list (``free = [head, size]``) first."""
    h = pinfo[p, P_HEAD]
    if h != -1 and nodes[h, 0] == w:
        return nnodes
    if free[1] > 0:
        k = free[0]
        free[0] = nodes[k, 1]
        free[1] -= 1
    else:
        k = nnodes
        nnodes += 1
    nodes[k, 0] = w
    nodes[k, 1] = h
    pinfo[p, P_HEAD] = k
    return nnodes


# ---------------------------------------------------------------- token bytes
@kernel
def _cmp_tokens(tok_bytes, tok_off, a, b):
    """-1 / 0 / 1 comparing the bytes of tokens a and b (Python bytes order)."""
    if a == b:
        return 0
    sa = tok_off[a]
    la = tok_off[a + 1] - sa
    sb = tok_off[b]
    lb = tok_off[b + 1] - sb
    n = min(la, lb)
    for k in range(n):
        x = tok_bytes[sa + k]
        y = tok_bytes[sb + k]
        if x != y:
            return -1 if x < y else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@kernel
def _concat_byte(tok_bytes, tok_off, a, b, k):
    """Byte k of token a's bytes followed by token b's."""
    la = tok_off[a + 1] - tok_off[a]
    return tok_bytes[tok_off[a] + k] if k < la else tok_bytes[tok_off[b] + k - la]


@kernel
def _cmp_concat(tok_bytes, tok_off, a1, b1, a2, b2):
    """-1 / 0 / 1 comparing the bytes of a1 + b1 with those of a2 + b2."""
    n1 = tok_off[a1 + 1] - tok_off[a1] + tok_off[b1 + 1] - tok_off[b1]
    n2 = tok_off[a2 + 1] - tok_off[a2] + tok_off[b2 + 1] - tok_off[b2]
    for k in range(min(n1, n2)):
        x = _concat_byte(tok_bytes, tok_off, a1, b1, k)
        y = _concat_byte(tok_bytes, tok_off, a2, b2, k)
        if x != y:
            return -1 if x < y else 1
    if n1 == n2:
        return 0
    return -1 if n1 < n2 else 1


@kernel
def _tok_find(tslots, thash, tok_bytes, tok_off, start, end, h):
    """Id of the token whose bytes equal tok_bytes[start:end], or -1."""
    mask = tslots.shape[0] - 1
    i = h & mask
    n = end - start
    while True:
        t = tslots[i]
        if t == -1:
            return -1
        if thash[i] == h and tok_off[t + 1] - tok_off[t] == n:
            s = tok_off[t]
            same = True
            for k in range(n):
                if tok_bytes[s + k] != tok_bytes[start + k]:
                    same = False
                    break
            if same:
                return t
        i = (i + 1) & mask


@kernel
def _tok_put(tslots, thash, t, h):
    mask = tslots.shape[0] - 1
    i = h & mask
    while tslots[i] != -1:
        i = (i + 1) & mask
    tslots[i] = t
    thash[i] = h


# ---------------------------------------------------------------- heap
@kernel
def _above(c1, p1, c2, p2, mode, pinfo, rank, tok_bytes, tok_off):
    """True if entry (c1, p1) must come out of the max-heap before (c2, p2)."""
    if c1 != c2:
        return c1 > c2
    if p1 == p2:
        return False
    k1 = pinfo[p1, P_KEY]
    k2 = pinfo[p2, P_KEY]
    l1 = k1 >> 32
    l2 = k2 >> 32
    r1 = k1 & 0xFFFFFFFF
    r2 = k2 & 0xFFFFFFFF
    if mode == TIE_GREATEST_BYTES:
        c = _cmp_tokens(tok_bytes, tok_off, l1, l2)
        if c == 0:
            c = _cmp_tokens(tok_bytes, tok_off, r1, r2)
        return c > 0
    if mode == TIE_SENTENCEPIECE:
        n1 = rank[l1] + rank[r1]
        n2 = rank[l2] + rank[r2]
        if n1 != n2:
            return n1 < n2
        c = _cmp_concat(tok_bytes, tok_off, l1, r1, l2, r2)
        if c != 0:
            return c < 0
        return tok_off[l1 + 1] - tok_off[l1] < tok_off[l2 + 1] - tok_off[l2]
    a1 = rank[l1]
    a2 = rank[l2]
    if a1 != a2:
        return a1 < a2
    return rank[r1] < rank[r2]


@kernel
def _sift_up(hc, hp, i, mode, pinfo, rank, tok_bytes, tok_off):
    c = hc[i]
    p = hp[i]
    while i > 0:
        parent = (i - 1) >> 1
        if not _above(c, p, hc[parent], hp[parent], mode, pinfo, rank, tok_bytes, tok_off):
            break
        hc[i] = hc[parent]
        hp[i] = hp[parent]
        i = parent
    hc[i] = c
    hp[i] = p


@kernel
def _sift_down(hc, hp, i, size, mode, pinfo, rank, tok_bytes, tok_off):
    c = hc[i]
    p = hp[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        r = child + 1
        if r < size and _above(hc[r], hp[r], hc[child], hp[child], mode, pinfo, rank, tok_bytes, tok_off):
            child = r
        if not _above(hc[child], hp[child], c, p, mode, pinfo, rank, tok_bytes, tok_off):
            break
        hc[i] = hc[child]
        hp[i] = hp[child]
        i = child
    hc[i] = c
    hp[i] = p


# ---------------------------------------------------------------- the trainer
@kernel
def _heap_push(hc, hp, hsize, c, p, mode, pinfo, rank, tok_bytes, tok_off):
    if hsize == hc.shape[0]:
        hc = _grow_i64(hc, hsize + hsize // 2 + 16)
        hp = _grow_i32(hp, hsize + hsize // 2 + 16)
    hc[hsize] = c
    hp[hsize] = p
    _sift_up(hc, hp, hsize, mode, pinfo, rank, tok_bytes, tok_off)
    return hc, hp, hsize + 1


@kernel
def bpe_train(syms, woff, wcnt, n_target, count_new_only, mode, rank_init, progress):
    """Learn merges over the words ``syms``/``woff`` (initial symbols = byte values).

    ``n_target``: stop after this many merges, or (``count_new_only``) after this many
    *new* tokens (a merge whose bytes already exist reuses that token and does not count;
    HF semantics). ``rank_init[b]``: tie rank of byte b for TIE_SMALLEST_RANK; token
    256 + k gets rank 256 + k. ``progress[0]`` is kept at the number of merges done and
    ``progress[1]`` at the count of the last merge, so another thread can report progress;
    (int64[8]) [2] pairs created, [3] index entries, [4] words visited, [5] symbols scanned,
    [6] occurrences merged, [7] index entries read.

    Returns ``(merge_left, merge_right, merge_new, merge_count, tok_bytes, tok_off)`` with
    internal ids (0..255 bytes, 256 + k the k-th new token). ``syms`` is merged in place.
    """
    W = wcnt.shape[0]
    # per word, one cache line: (offset, current length, count, mark)
    winfo = np.empty((W, 4), np.int64)
    for w in range(W):
        winfo[w, 0] = woff[w]
        winfo[w, 1] = woff[w + 1] - woff[w]
        winfo[w, 2] = wcnt[w]
        winfo[w, 3] = -1
    n_target = max(n_target, 0)

    # tokens
    tok_off = np.zeros(257 + n_target + 1, np.int64)
    tok_bytes = np.empty(256 + 16 * (n_target + 1), np.uint8)
    for b in range(256):
        tok_bytes[b] = b
        tok_off[b + 1] = b + 1
    ntok = 256
    tcap = 1024
    while tcap < 4 * (256 + n_target + 1):
        tcap *= 2
    tslots = np.full(tcap, -1, np.int32)
    thash = np.zeros(tcap, np.int64)
    for b in range(256):
        _tok_put(tslots, thash, b, hash_bytes(tok_bytes, b, b + 1))
    rank = np.empty(256 + n_target + 1, np.int64)
    for b in range(256):
        rank[b] = rank_init[b]

    # pairs + index: initial counts
    pinfo = np.empty((1 << 16, 4), np.int64)
    npairs = 0
    ptab = np.full((1 << 17, 2), -1, np.int64)
    nodes = np.empty((max(16, syms.shape[0] - W + 16), 2), np.int32)
    nnodes = 0
    free = np.array([-1, 0], np.int64)  # free list of index nodes: head, size
    for w in range(W):
        s = woff[w]
        n = woff[w + 1] - s
        c = wcnt[w]
        for i in range(n - 1):
            key = (np.int64(syms[s + i]) << 32) | np.int64(syms[s + i + 1])
            p = _pair_find(ptab, key)
            if p == -1:
                if npairs == pinfo.shape[0]:
                    pinfo = _grow_rows(pinfo, npairs + 1)
                if 2 * (npairs + 1) > ptab.shape[0]:
                    ptab = _pair_rehash(ptab, 2 * ptab.shape[0])
                p = _new_pair(ptab, pinfo, npairs, key)
                npairs += 1
            pinfo[p, P_COUNT] += c
            nnodes = _link(pinfo, nodes, nnodes, free, p, w)

    # heap
    hsize = 0
    hc = np.empty(max(16, npairs + npairs // 2), np.int64)
    hp = np.empty(max(16, npairs + npairs // 2), np.int32)
    for p in range(npairs):
        if pinfo[p, P_COUNT] > 0:
            hc[hsize] = pinfo[p, P_COUNT]
            hp[hsize] = p
            hsize += 1
    for i in range((hsize - 2) // 2, -1, -1):
        _sift_down(hc, hp, i, hsize, mode, pinfo, rank, tok_bytes, tok_off)

    mcap = max(16, n_target)
    merge_left = np.empty(mcap, np.int32)
    merge_right = np.empty(mcap, np.int32)
    merge_new = np.empty(mcap, np.int32)
    merge_count = np.empty(mcap, np.int64)
    nmerges = 0
    done = 0
    touched = np.empty(1024, np.int32)
    nbr = np.full((256 + n_target + 1, 6), -1, np.int32)

    while done < n_target and hsize > 0:
        # ---- pop the best valid pair
        c = hc[0]
        p = hp[0]
        hsize -= 1
        if hsize > 0:
            hc[0] = hc[hsize]
            hp[0] = hp[hsize]
            _sift_down(hc, hp, 0, hsize, mode, pinfo, rank, tok_bytes, tok_off)
        cur = pinfo[p, P_COUNT]
        if c != cur:
            if cur > 0:
                hc, hp, hsize = _heap_push(hc, hp, hsize, cur, p, mode, pinfo, rank, tok_bytes, tok_off)
            continue
        if c <= 0:
            break
        L = np.int32(pinfo[p, P_KEY] >> 32)
        R = np.int32(pinfo[p, P_KEY] & 0xFFFFFFFF)

        # ---- the merged token: reuse an existing id with the same bytes
        la = tok_off[L + 1] - tok_off[L]
        lb = tok_off[R + 1] - tok_off[R]
        start = tok_off[ntok]
        tok_bytes = _grow_u8(tok_bytes, start + la + lb)
        for k in range(la):
            tok_bytes[start + k] = tok_bytes[tok_off[L] + k]
        for k in range(lb):
            tok_bytes[start + la + k] = tok_bytes[tok_off[R] + k]
        hz = hash_bytes(tok_bytes, start, start + la + lb)
        z = _tok_find(tslots, thash, tok_bytes, tok_off, start, start + la + lb, hz)
        is_new = z == -1
        if is_new:
            z = ntok
            ntok += 1
            tok_off = _grow_i64(tok_off, ntok + 1)
            tok_off[ntok] = start + la + lb
            rank = _grow_i64(rank, ntok)
            rank[z] = z
            if ntok > nbr.shape[0]:
                old_rows = nbr.shape[0]
                nbr = _grow_rows(nbr, ntok)
                nbr[old_rows:] = -1
            if 2 * ntok > tslots.shape[0]:
                ns = np.full(2 * tslots.shape[0], -1, np.int32)
                nh = np.zeros(2 * tslots.shape[0], np.int64)
                for i in range(tslots.shape[0]):
                    if tslots[i] != -1:
                        _tok_put(ns, nh, tslots[i], thash[i])
                tslots = ns
                thash = nh
            _tok_put(tslots, thash, z, hz)
        if nmerges == merge_left.shape[0]:
            merge_left = _grow_i32(merge_left, 2 * nmerges)
            merge_right = _grow_i32(merge_right, 2 * nmerges)
            merge_new = _grow_i32(merge_new, 2 * nmerges)
            merge_count = _grow_i64(merge_count, 2 * nmerges)
        merge_left[nmerges] = L
        merge_right[nmerges] = R
        merge_new[nmerges] = z
        merge_count[nmerges] = c
        step = nmerges
        nmerges += 1
        if is_new or not count_new_only:
            done += 1
        zk = np.int64(z)

        # ---- merge it in every word on the pair's list
        ntouched = 0
        node = pinfo[p, P_HEAD]
        pinfo[p, P_HEAD] = -1
        while node != -1:
            w = nodes[node, 0]
            nxt = nodes[node, 1]
            # the merged pair's list is consumed: recycle its nodes
            nodes[node, 1] = free[0]
            free[0] = node
            free[1] += 1
            node = nxt
            progress[7] += 1
            if winfo[w, 3] == step:
                continue
            winfo[w, 3] = step
            s = winfo[w, 0]
            n = winfo[w, 1]
            if n < 2:
                continue
            cnt = winfo[w, 2]
            progress[4] += 1
            progress[5] += n
            # room for what this word can create: <= 2 new pairs / nodes per occurrence
            need = n
            if npairs + need > pinfo.shape[0]:
                pinfo = _grow_rows(pinfo, npairs + need)
            if 2 * (npairs + need) > ptab.shape[0]:
                ptab = _pair_rehash(ptab, 2 * ptab.shape[0])
            if free[1] < need and nnodes + need > nodes.shape[0]:
                if nnodes + need >= 2147483647:
                    raise ValueError("BPE training index exceeds 2**31 entries")
                nodes = _grow_rows(nodes, nnodes + need)
            touched = _grow_i32(touched, ntouched + need)

            i = 0
            o = 0
            while i < n:
                if i + 1 < n and syms[s + i] == L and syms[s + i + 1] == R:
                    # the pair deltas around this occurrence (the left neighbour is the
                    # already-merged output, so adjacent occurrences chain correctly)
                    for side in range(2):
                        if side == 0:
                            if o == 0:
                                continue
                            x = syms[s + o - 1]
                            col = 0
                        else:
                            if i + 2 >= n:
                                continue
                            x = syms[s + i + 2]
                            col = 3
                        # per-step cache by neighbour symbol: (stamp, old pair, new pair)
                        if nbr[x, col] != step:
                            xk = np.int64(x)
                            if side == 0:
                                k_old = (xk << 32) | L
                                k_new = (xk << 32) | zk
                            else:
                                k_old = (np.int64(R) << 32) | xk
                                k_new = (zk << 32) | xk
                            q = _pair_find(ptab, k_new)
                            if q == -1:
                                q = _new_pair(ptab, pinfo, npairs, k_new)
                                npairs += 1
                            nbr[x, col] = step
                            nbr[x, col + 1] = _pair_find(ptab, k_old)
                            nbr[x, col + 2] = q
                            if pinfo[q, P_MARK] != step:
                                pinfo[q, P_MARK] = step
                                touched[ntouched] = q
                                ntouched += 1
                        pinfo[nbr[x, col + 1], P_COUNT] -= cnt
                        q = nbr[x, col + 2]
                        pinfo[q, P_COUNT] += cnt
                        nnodes = _link(pinfo, nodes, nnodes, free, q, w)
                    pinfo[p, P_COUNT] -= cnt
                    progress[6] += 1
                    syms[s + o] = z
                    o += 1
                    i += 2
                else:
                    syms[s + o] = syms[s + i]
                    o += 1
                    i += 1
            winfo[w, 1] = o

        # ---- (re-)queue every pair whose count went up
        for t in range(ntouched):
            q = touched[t]
            cq = pinfo[q, P_COUNT]
            if cq > 0:
                hc, hp, hsize = _heap_push(hc, hp, hsize, cq, q, mode, pinfo, rank, tok_bytes, tok_off)
        progress[0] = nmerges
        progress[1] = c
        # the heap may hold many stale entries: rebuild it when it is mostly garbage
        if hsize > 4 * npairs + 1024:
            k = 0
            for i in range(hsize):
                q = hp[i]
                if hc[i] == pinfo[q, P_COUNT] and hc[i] > 0:
                    hc[k] = hc[i]
                    hp[k] = q
                    k += 1
            hsize = k
            for i in range((hsize - 2) // 2, -1, -1):
                _sift_down(hc, hp, i, hsize, mode, pinfo, rank, tok_bytes, tok_off)

    progress[2] = npairs
    progress[3] = nnodes - free[1]
    return (merge_left[:nmerges].copy(), merge_right[:nmerges].copy(), merge_new[:nmerges].copy(),
            merge_count[:nmerges].copy(), tok_bytes[:tok_off[ntok]].copy(), tok_off[:ntok + 1].copy())
