"""BPE training: the merge loop as one ``@njit`` kernel over flat arrays.

State (all flat arrays, grown by doubling inside the kernel):

    words      syms int32[total]       symbol ids of every unique pre-token, back to back;
               woff int64[W + 1]       word w owns syms[woff[w]:woff[w] + wlen[w]]
               wlen int32[W]           (merging shrinks a word in place)
               wcnt int64[W]           how often the pre-token occurs
    tokens     tok_bytes uint8[], tok_off int64[T + 1]   bytes of every symbol id
               (0..255 are the single bytes, new ids are appended) plus a hash table
               bytes -> id so a merge whose bytes already exist reuses that id
    pairs      pl, pr int32[P], pc int64[P]              pair id -> left, right, count
               pair table: open addressing, key left << 32 | right -> pair id
    index      phead int64[P]; node_word int32[N], node_next int64[N]
               pair -> linked list of words that (may) contain it: append-only,
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
from .hashmap import hash_bytes, mix64

TIE_GREATEST_BYTES = 0
TIE_SMALLEST_RANK = 1


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
@kernel
def _pair_find(hkeys, hvals, key):
    mask = hkeys.shape[0] - 1
    i = mix64(key) & mask
    while True:
        k = hkeys[i]
        if k == key:
            return hvals[i]
        if k == -1:
            return -1
        i = (i + 1) & mask


@kernel
def _pair_put(hkeys, hvals, key, val):
    mask = hkeys.shape[0] - 1
    i = mix64(key) & mask
    while hkeys[i] != -1:
        i = (i + 1) & mask
    hkeys[i] = key
    hvals[i] = val


@kernel
def _pair_rehash(hkeys, hvals, cap):
    nk = np.full(cap, -1, np.int64)
    nv = np.empty(cap, np.int32)
    for i in range(hkeys.shape[0]):
        if hkeys[i] != -1:
            _pair_put(nk, nv, hkeys[i], hvals[i])
    return nk, nv


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
def _above(c1, p1, c2, p2, mode, pl, pr, rank, tok_bytes, tok_off):
    """True if entry (c1, p1) must come out of the max-heap before (c2, p2)."""
    if c1 != c2:
        return c1 > c2
    if p1 == p2:
        return False
    if mode == TIE_GREATEST_BYTES:
        c = _cmp_tokens(tok_bytes, tok_off, pl[p1], pl[p2])
        if c == 0:
            c = _cmp_tokens(tok_bytes, tok_off, pr[p1], pr[p2])
        return c > 0
    a1 = rank[pl[p1]]
    a2 = rank[pl[p2]]
    if a1 != a2:
        return a1 < a2
    return rank[pr[p1]] < rank[pr[p2]]


@kernel
def _sift_up(hc, hp, i, mode, pl, pr, rank, tok_bytes, tok_off):
    c = hc[i]
    p = hp[i]
    while i > 0:
        parent = (i - 1) >> 1
        if not _above(c, p, hc[parent], hp[parent], mode, pl, pr, rank, tok_bytes, tok_off):
            break
        hc[i] = hc[parent]
        hp[i] = hp[parent]
        i = parent
    hc[i] = c
    hp[i] = p


@kernel
def _sift_down(hc, hp, i, size, mode, pl, pr, rank, tok_bytes, tok_off):
    c = hc[i]
    p = hp[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        r = child + 1
        if r < size and _above(hc[r], hp[r], hc[child], hp[child], mode, pl, pr, rank, tok_bytes, tok_off):
            child = r
        if not _above(hc[child], hp[child], c, p, mode, pl, pr, rank, tok_bytes, tok_off):
            break
        hc[i] = hc[child]
        hp[i] = hp[child]
        i = child
    hc[i] = c
    hp[i] = p


# ---------------------------------------------------------------- the trainer
@kernel
def bpe_train(syms, woff, wcnt, n_target, count_new_only, mode, rank_init, progress):
    """Learn merges over the words ``syms``/``woff`` (initial symbols = byte values).

    ``n_target``: stop after this many merges, or (``count_new_only``) after this many
    *new* tokens (a merge whose bytes already exist reuses that token and does not count;
    HF semantics). ``rank_init[b]``: tie rank of byte b for TIE_SMALLEST_RANK; token
    256 + k gets rank 256 + k. ``progress[0]`` is kept at the number of merges done and
    ``progress[1]`` at the count of the last merge, so another thread can report progress.

    Returns ``(merge_left, merge_right, merge_new, merge_count, tok_bytes, tok_off)`` with
    internal ids (0..255 bytes, 256 + k the k-th new token). ``syms`` is merged in place.
    """
    W = wcnt.shape[0]
    wlen = np.empty(W, np.int32)
    for w in range(W):
        wlen[w] = woff[w + 1] - woff[w]
    wmark = np.full(W, -1, np.int64)

    # tokens
    tok_off = np.zeros(257 + max(n_target, 0) + 1, np.int64)
    tok_bytes = np.empty(256 + 16 * (max(n_target, 0) + 1), np.uint8)
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
    rank = np.empty(256 + max(n_target, 0) + 1, np.int64)
    for b in range(256):
        rank[b] = rank_init[b]

    # pairs + index: initial counts
    pcap = 1024
    pl = np.empty(pcap, np.int32)
    pr = np.empty(pcap, np.int32)
    pc = np.zeros(pcap, np.int64)
    phead = np.empty(pcap, np.int64)
    pmark = np.empty(pcap, np.int64)
    npairs = 0
    hcap = 4096
    hkeys = np.full(hcap, -1, np.int64)
    hvals = np.empty(hcap, np.int32)
    ncap = max(16, syms.shape[0])
    node_word = np.empty(ncap, np.int32)
    node_next = np.empty(ncap, np.int64)
    nnodes = 0
    for w in range(W):
        s = woff[w]
        n = wlen[w]
        c = wcnt[w]
        for i in range(n - 1):
            key = (np.int64(syms[s + i]) << 32) | np.int64(syms[s + i + 1])
            p = _pair_find(hkeys, hvals, key)
            if p == -1:
                if npairs == pcap:
                    pcap *= 2
                    pl = _grow_i32(pl, pcap)
                    pr = _grow_i32(pr, pcap)
                    pc = _grow_i64(pc, pcap)
                    phead = _grow_i64(phead, pcap)
                    pmark = _grow_i64(pmark, pcap)
                if 2 * (npairs + 1) > hcap:
                    hcap *= 2
                    hkeys, hvals = _pair_rehash(hkeys, hvals, hcap)
                p = npairs
                npairs += 1
                pl[p] = syms[s + i]
                pr[p] = syms[s + i + 1]
                pc[p] = 0
                phead[p] = -1
                pmark[p] = -1
                _pair_put(hkeys, hvals, key, p)
            pc[p] += c
            h = phead[p]
            if h == -1 or node_word[h] != w:
                node_word[nnodes] = w
                node_next[nnodes] = h
                phead[p] = nnodes
                nnodes += 1

    # heap
    hsize = 0
    hc = np.empty(max(16, 2 * npairs), np.int64)
    hp = np.empty(max(16, 2 * npairs), np.int32)
    for p in range(npairs):
        if pc[p] > 0:
            hc[hsize] = pc[p]
            hp[hsize] = p
            hsize += 1
    for i in range((hsize - 2) // 2, -1, -1):
        _sift_down(hc, hp, i, hsize, mode, pl, pr, rank, tok_bytes, tok_off)

    mcap = max(16, n_target)
    merge_left = np.empty(mcap, np.int32)
    merge_right = np.empty(mcap, np.int32)
    merge_new = np.empty(mcap, np.int32)
    merge_count = np.empty(mcap, np.int64)
    nmerges = 0
    done = 0
    touched = np.empty(1024, np.int32)

    while done < n_target and hsize > 0:
        # ---- pop the best valid pair
        c = hc[0]
        p = hp[0]
        hsize -= 1
        if hsize > 0:
            hc[0] = hc[hsize]
            hp[0] = hp[hsize]
            _sift_down(hc, hp, 0, hsize, mode, pl, pr, rank, tok_bytes, tok_off)
        if c != pc[p]:
            if pc[p] > 0:
                hc[hsize] = pc[p]
                hp[hsize] = p
                hsize += 1
                _sift_up(hc, hp, hsize - 1, mode, pl, pr, rank, tok_bytes, tok_off)
            continue
        if c <= 0:
            break
        L = pl[p]
        R = pr[p]

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

        # ---- merge it in every word on the pair's list
        ntouched = 0
        node = phead[p]
        phead[p] = -1
        while node != -1:
            w = node_word[node]
            node = node_next[node]
            if wmark[w] == step:
                continue
            wmark[w] = step
            s = woff[w]
            n = wlen[w]
            if n < 2:
                continue
            cnt = wcnt[w]
            # room for the new pairs / nodes / touched entries this word can create
            need = 2 * n
            if npairs + need > pcap:
                pcap = max(2 * pcap, npairs + need)
                pl = _grow_i32(pl, pcap)
                pr = _grow_i32(pr, pcap)
                pc = _grow_i64(pc, pcap)
                phead = _grow_i64(phead, pcap)
                pmark = _grow_i64(pmark, pcap)
            while 2 * (npairs + need) > hcap:
                hcap *= 2
                hkeys, hvals = _pair_rehash(hkeys, hvals, hcap)
            node_word = _grow_i32(node_word, nnodes + need)
            node_next = _grow_i64(node_next, nnodes + need)
            touched = _grow_i32(touched, ntouched + need)

            i = 0
            o = 0
            while i < n:
                if i + 1 < n and syms[s + i] == L and syms[s + i + 1] == R:
                    # 4 pair deltas around this occurrence (the left neighbour is the
                    # already-merged output, so adjacent occurrences chain correctly)
                    for side in range(2):
                        if side == 0:
                            if o == 0:
                                continue
                            x = syms[s + o - 1]
                            k_old = (np.int64(x) << 32) | np.int64(L)
                            k_new = (np.int64(x) << 32) | np.int64(z)
                        else:
                            if i + 2 >= n:
                                continue
                            y = syms[s + i + 2]
                            k_old = (np.int64(R) << 32) | np.int64(y)
                            k_new = (np.int64(z) << 32) | np.int64(y)
                        q = _pair_find(hkeys, hvals, k_old)
                        pc[q] -= cnt
                        q = _pair_find(hkeys, hvals, k_new)
                        if q == -1:
                            q = npairs
                            npairs += 1
                            pl[q] = np.int32(k_new >> 32)
                            pr[q] = np.int32(k_new & 0xFFFFFFFF)
                            pc[q] = 0
                            phead[q] = -1
                            pmark[q] = -1
                            _pair_put(hkeys, hvals, k_new, q)
                        pc[q] += cnt
                        h = phead[q]
                        if h == -1 or node_word[h] != w:
                            node_word[nnodes] = w
                            node_next[nnodes] = h
                            phead[q] = nnodes
                            nnodes += 1
                        if pmark[q] != step:
                            pmark[q] = step
                            touched[ntouched] = q
                            ntouched += 1
                    pc[p] -= cnt
                    syms[s + o] = z
                    o += 1
                    i += 2
                else:
                    syms[s + o] = syms[s + i]
                    o += 1
                    i += 1
            wlen[w] = o

        # ---- (re-)queue every pair whose count went up
        if hsize + ntouched > hc.shape[0]:
            hc = _grow_i64(hc, hsize + ntouched)
            hp = _grow_i32(hp, hsize + ntouched)
        for t in range(ntouched):
            q = touched[t]
            if pc[q] > 0:
                hc[hsize] = pc[q]
                hp[hsize] = q
                hsize += 1
                _sift_up(hc, hp, hsize - 1, mode, pl, pr, rank, tok_bytes, tok_off)
        progress[0] = nmerges
        progress[1] = c
        # the heap may hold many stale entries: rebuild it when it is mostly garbage
        if hsize > 4 * npairs + 1024:
            k = 0
            for i in range(hsize):
                q = hp[i]
                if hc[i] == pc[q] and pc[q] > 0:
                    hc[k] = hc[i]
                    hp[k] = q
                    k += 1
            hsize = k
            for i in range((hsize - 2) // 2, -1, -1):
                _sift_down(hc, hp, i, hsize, mode, pl, pr, rank, tok_bytes, tok_off)

    return (merge_left[:nmerges].copy(), merge_right[:nmerges].copy(), merge_new[:nmerges].copy(),
            merge_count[:nmerges].copy(), tok_bytes[:tok_off[ntok]].copy(), tok_off[:ntok + 1].copy())
