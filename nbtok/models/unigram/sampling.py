"""Subword regularization over the full SentencePiece Unigram lattice: forward-filtering
backward-sampling (``sample_encode`` with ``nbest_size < 0``) and the entropy of the
segmentation distribution (``calculate_entropy``), plus the seed of Numba's random generator,
which BPE-dropout draws from too.

``full_lattice`` holds every piece at every position (not only the best path the encoder
keeps), in sentencepiece's node order (``PopulateNodes``: by start, then by length, then the
unknown node), so the n-best search (``models.unigram.nbest``) reads the same lattice. Scores are
float64 sums of the pieces' float32 scores; sampling draws ``exp(theta * score)``.
"""
import numpy as np
from numba import prange

from ..._jit import batch_kernel, kernel
from ...normalizers.sentencepiece import normalize, one_char_len
from ...kernels.ragged import compact_ragged
from ...kernels.trie import unit_child
from ..symbols import char_symbol, finish_ids


@kernel
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@kernel
def full_lattice(norm, n, lat, idsc, unk_score):
    """Every node of the lattice of ``norm[:n]``, grouped by end position through linked lists:
    ``(start, id, score, next, head)`` where the nodes ending at e are ``head[e]``,
    ``next[head[e]]``, ... (-1 ends a list), and id -1 is an unknown character (score
    ``unk_score``, added where no one-character piece starts)."""
    cap = 4 * n + 16
    ns = np.empty(cap, np.int64)
    nid = np.empty(cap, np.int64)
    nsc = np.empty(cap, np.float64)
    nnext = np.empty(cap, np.int64)
    head = np.full(n + 1, -1, np.int64)
    sc = idsc.view(np.float32)
    k_nodes = 0
    s = 0
    while s < n:
        mblen = one_char_len(norm[s], n - s)
        has_single = False
        node = 0
        for k in range(s, n):
            node = unit_child(lat, node, norm[k])
            if node < 0:
                break
            v = idsc[2 * node]
            if v >= 0:
                ns, nid, nsc, nnext = _add_node((ns, nid, nsc, nnext), head, k_nodes, s, k + 1, v,
                                                sc[2 * node + 1])
                k_nodes += 1
                has_single = has_single or k + 1 - s == mblen
        if not has_single:
            ns, nid, nsc, nnext = _add_node((ns, nid, nsc, nnext), head, k_nodes, s, s + mblen, -1, unk_score)
            k_nodes += 1
        s += mblen
    return ns, nid, nsc, nnext, head


@kernel
def _add_node(nodes, head, k, start, end, v, score):
    """Set node k (start -> end, id v) of ``full_lattice``'s lists ``nodes = (start, id, score,
    next)``, grown first when full; returns the lists."""
    ns, nid, nsc, nnext = nodes
    if k >= ns.shape[0]:
        ns, nid, nsc, nnext = _grown(ns, k), _grown(nid, k), _grown(nsc, k), _grown(nnext, k)
    ns[k] = start
    nid[k] = v
    nsc[k] = score
    nnext[k] = head[end]
    head[end] = k
    return ns, nid, nsc, nnext


@kernel
def _grown(a, used):
    b = np.empty(2 * a.shape[0], a.dtype)
    b[:used] = a[:used]
    return b


@kernel
def lattice_forward(ns, nsc, nnext, head, n, theta):
    """``alpha[e]``: log of the summed ``exp(theta * score)`` of every segmentation of the first
    e characters' positions."""
    alpha = np.full(n + 1, -np.inf)
    alpha[0] = 0.0
    for e in range(1, n + 1):
        acc = -np.inf
        j = head[e]
        while j >= 0:
            acc = _logaddexp(acc, alpha[ns[j]] + theta * nsc[j])
            j = nnext[j]
        alpha[e] = acc
    return alpha


@kernel
def lattice_entropy(norm, n, lat, idsc, unk_score, theta):
    """Entropy of the distribution p ~ exp(theta * score) over the segmentations of ``norm[:n]``
    (sentencepiece's ``CalculateEntropy``): ``H[e] = sum over nodes j ending at e of
    p_j (H[start_j] + log p_j)``, with ``p_j`` the probability that j ends the prefix, and the
    entropy ``-H[n]``."""
    ns, nid, nsc, nnext, head = full_lattice(norm, n, lat, idsc, unk_score)
    alpha = lattice_forward(ns, nsc, nnext, head, n, theta)
    h = np.zeros(n + 1)
    for e in range(1, n + 1):
        j = head[e]
        while j >= 0:
            logp = theta * nsc[j] + alpha[ns[j]] - alpha[e]
            h[e] += np.exp(logp) * (h[ns[j]] + logp)
            j = nnext[j]
    return -h[n]


@kernel
def ffbs_sample(norm, n, lat, idsc, unk_score, V, theta, syms):
    """Forward-filtering backward-sampling over the full lattice of ``norm[:n]`` (sentencepiece's
    ``SampleEncode`` with nbest_size < 0): a segmentation drawn with probability proportional to
    exp(theta * score). Writes symbols into ``syms``; returns their count."""
    ns, nid, nsc, nnext, head = full_lattice(norm, n, lat, idsc, unk_score)
    alpha = lattice_forward(ns, nsc, nnext, head, n, theta)
    m, _ = backward_sample((ns, nid, nsc, nnext, head), alpha, norm, n, V, theta, syms)
    return m


@kernel
def ffbs_scored(norm, n, lat, idsc, unk_score, V, theta, k):
    """``k`` independent ``ffbs_sample`` draws over one lattice of ``norm[:n]``, each with its
    log-probability (``theta * score`` minus the log of the lattice's sum), as sentencepiece's
    ``SampleEncodeAndScore`` with ``wor=false``: (symbols, offsets, log p float64[k])."""
    nodes = full_lattice(norm, n, lat, idsc, unk_score)
    ns, nid, nsc, nnext, head = nodes
    alpha = lattice_forward(ns, nsc, nnext, head, n, theta)
    syms = np.empty(k * (n + 1), np.int64)
    offsets = np.zeros(k + 1, np.int64)
    logp = np.empty(k, np.float64)
    for r in range(k):
        m, score = backward_sample(nodes, alpha, norm, n, V, theta, syms[offsets[r]:])
        offsets[r + 1] = offsets[r] + m
        logp[r] = score - alpha[n]
    return syms[:offsets[k]].copy(), offsets, logp


@kernel
def backward_sample(nodes, alpha, norm, n, V, theta, syms):
    """The backward pass of forward-filtering backward-sampling: from the end of the lattice
    ``nodes`` (``full_lattice``), each step draws the node that ends the prefix with its
    probability given ``alpha`` (``lattice_forward``). Writes the symbols in order into
    ``syms``; returns (their count, the path's ``theta * score``)."""
    ns, nid, nsc, nnext, head = nodes
    m = 0
    total = 0.0
    e = n
    while e > 0:
        z = alpha[e]
        r = np.random.random()
        acc = 0.0
        pick = -1
        j = head[e]
        while j >= 0:
            p = np.exp(alpha[ns[j]] + theta * nsc[j] - z)
            acc += p
            pick = j
            if r < acc:
                break
            j = nnext[j]
        s = ns[pick]
        v = nid[pick]
        syms[m] = char_symbol(norm, s, e - s, V) if v < 0 else v
        total += theta * nsc[pick]
        m += 1
        e = s
    for i in range(m // 2):
        t = syms[i]
        syms[i] = syms[m - 1 - i]
        syms[m - 1 - i] = t
    return m, total


@kernel
def sample_one(text, N, M, F, theta):
    """FFBS-sampled ids of one document."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    normbuf, n = normalize(text, 0, text.shape[0], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(text.shape[0] + 16, np.uint8))
    syms = np.empty(n + 1, np.int64)
    m = ffbs_sample(normbuf, n, lat, idsc, unk_score, V2, theta, syms)
    out = np.empty(4 * m + 2, np.int32)
    o = finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, 0)
    return out[:o].copy()


@batch_kernel
def sample_batch(buf, offsets, N, M, F, theta, seeds):
    """FFBS-sampled ids of every document ``buf[offsets[d]:offsets[d + 1]]``, document d drawn
    right after ``np.random.seed(seeds[d])``: what ``sample_one`` gives after
    ``seed_rng(seeds[d])``, whichever thread draws it. Returns ``(ids, id_offsets)``.
    Two passes: the normalized length of each document bounds its ids (4 a character with byte
    fallback, plus BOS and EOS), then each is sampled into its place and the whole packed."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    n_docs = offsets.shape[0] - 1
    room = np.zeros(n_docs + 1, np.int64)
    for d in prange(n_docs):
        a, b = offsets[d], offsets[d + 1]
        _, n = normalize(buf, a, b, units, pool, root_ok, ud_bc, ud_value, flags, cls, np.empty(b - a + 16, np.uint8))
        room[d + 1] = 4 * n + 2
    for d in range(n_docs):
        room[d + 1] += room[d]
    out = np.empty(room[n_docs], np.int32)
    counts = np.zeros(n_docs, np.int64)
    for d in prange(n_docs):
        a, b = offsets[d], offsets[d + 1]
        normbuf, n = normalize(buf, a, b, units, pool, root_ok, ud_bc, ud_value, flags, cls,
                               np.empty(b - a + 16, np.uint8))
        syms = np.empty(n + 1, np.int64)
        np.random.seed(seeds[d])
        m = ffbs_sample(normbuf, n, lat, idsc, unk_score, V2, theta, syms)
        counts[d] = finish_ids(syms, m, V, unk_id, byte_fallback, byte_ids, bos, eos, out, room[d]) - room[d]
    return compact_ragged(out, room, counts)


@kernel
def entropy_one(text, N, M, theta):
    """``lattice_entropy`` of one document after normalization."""
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    normbuf, n = normalize(text, 0, text.shape[0], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                           np.empty(text.shape[0] + 16, np.uint8))
    return lattice_entropy(normbuf, n, lat, idsc, unk_score, theta)


@kernel
def seed_rng(seed):
    np.random.seed(seed)
