"""sentencepiece's n-best search (``Lattice::NBest`` of ``unigram_model.cc``), step for step, so
that its results come in sentencepiece's order with its scores (``astar_nbest``); and the same
search with sampling (``gumbel_topk``: segmentations drawn without replacement, for
``SampleEncodeAndScore``).

A k-best Viterbi would find the same segmentations up to ties, ranked by float64 sums (nbtok
had one; it put 10-40% of n-best lists in another order). sentencepiece runs an A* search from the end of the lattice in float32 and
returns complete paths in the order its priority queue pops them, which is neither quite the
order of their scores (a partial path's priority ``fx`` is rounded, so a path can pop after
a slightly worse one) nor defined for equal scores (the layout of libstdc++'s binary heap
decides). This kernel replays that search:

* the lattice in sentencepiece's node order (``models.unigram.sampling.full_lattice`` numbers nodes
  as ``PopulateNodes`` inserts them: by start, then by length, then the unknown node), each
  position's ``end_nodes`` in insertion order;
* ``Lattice::Viterbi``'s float32 ``backtrace_score`` of every node (the heuristic h);
* hypotheses ``gx = score + gx(next)``, ``fx = backtrace_score + gx(next)`` in float32, in a
  max-heap run as ``std::priority_queue`` (``std::push_heap`` / ``std::pop_heap`` of libstdc++);
* the agenda shrinking (at 10,000 entries, or past the hypothesis budget: the best
  ``min(512, 10 * nbest)`` kept and pushed again in popped order) and the fallbacks to the
  Viterbi path (after 10 shrinks, or 500,000 hypotheses). sentencepiece's 30 s timeout is not
  replayed.

Positions are byte offsets where sentencepiece counts characters; the order of nodes and of
positions is the same.
"""
import numpy as np

from ..._jit import kernel
from ...normalizers.sentencepiece import normalize
from .sampling import full_lattice, lattice_forward
from ..symbols import char_symbol, finish_ids

MAX_AGENDA = 10000
MIN_AGENDA = 512
MAX_HYPOTHESES = 100000
MAX_ALLOCATED = 500000
MAX_SHRINK = 10


@kernel
def _heap_push(heap, size, h, fx):
    """``std::push_heap`` after ``push_back(h)`` (comparator: fx[a] < fx[b]); returns the size."""
    hole = size
    parent = (hole - 1) // 2
    while hole > 0 and fx[heap[parent]] < fx[h]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = h
    return size + 1


@kernel
def _heap_pop(heap, size, fx):
    """``std::pop_heap`` then ``pop_back``: returns (top, new size)."""
    top = heap[0]
    last = size - 1
    if last > 0:
        value = heap[last]
        # __adjust_heap(first, 0, last, value): move the hole down, then __push_heap
        hole = 0
        child = 0
        while child < (last - 1) // 2:
            child = 2 * (child + 1)
            if fx[heap[child]] < fx[heap[child - 1]]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if (last & 1) == 0 and child == (last - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > 0 and fx[heap[parent]] < fx[value]:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = value
    return top, last


@kernel
def _new_agenda(eos, fx, like):
    """Hypotheses ``(node, next, fx, gx)`` (fx, gx of ``like``'s dtype) holding hypothesis 0, the
    EOS node with priority ``fx``, and a heap holding it: (node, next, fx, gx, heap)."""
    cap = 1024
    hnode = np.empty(cap, np.int64)
    hnext = np.empty(cap, np.int64)
    hfx = np.empty(cap, like.dtype)
    hgx = np.empty(cap, like.dtype)
    heap = np.empty(cap, np.int64)
    hnode[0] = eos
    hnext[0] = -1
    hgx[0] = 0.0
    hfx[0] = fx
    _heap_push(heap, 0, 0, hfx)
    return hnode, hnext, hfx, hgx, heap


@kernel
def _room(hyps, heap, nh, size, extra):
    """The hypotheses (``nh`` used) and the heap (``size`` used), grown to take ``extra`` more."""
    hnode, hnext, hfx, hgx = hyps
    need = nh + extra
    if need > hnode.shape[0]:
        cap = max(2 * hnode.shape[0], need)
        hnode, hnext, hfx, hgx = (_grown(hnode, nh, cap), _grown(hnext, nh, cap), _grown(hfx, nh, cap),
                                  _grown(hgx, nh, cap))
    if size + extra > heap.shape[0]:
        heap = _grown(heap, size, max(2 * heap.shape[0], size + extra))
    return hnode, hnext, hfx, hgx, heap


@kernel
def _grown(a, used, cap):
    b = np.empty(cap, a.dtype)
    b[:used] = a[:used]
    return b


@kernel
def end_node_lists(ns, nnext, head, n):
    """Each position's ``end_nodes`` of a ``full_lattice`` as sentencepiece's ``Lattice`` holds
    them: node numbers in insertion order, node ``m`` the BOS node (ending at 0). Returns
    ``(ends, ecount, elist, m)``: the nodes ending at ``e`` are ``elist[ecount[e]:ecount[e + 1]]``."""
    m = 0
    for e in range(n + 1):
        j = head[e]
        while j >= 0:
            m += 1
            j = nnext[j]
    ecount = np.zeros(n + 2, np.int64)
    nend = np.empty(m, np.int64)
    for e in range(n + 1):
        j = head[e]
        while j >= 0:
            nend[j] = e
            ecount[e + 1] += 1
            j = nnext[j]
    ecount[1] += 1  # BOS ends at 0
    for e in range(n + 1):
        ecount[e + 1] += ecount[e]
    elist = np.empty(m + 1, np.int64)
    fill = ecount[:-1].copy()
    elist[fill[0]] = m
    fill[0] += 1
    for j in range(m):
        elist[fill[nend[j]]] = j
        fill[nend[j]] += 1
    return nend, ecount, elist, m


@kernel
def astar_nbest(norm, n, lat, idsc, unk_score, V, nbest):
    """The ``nbest`` (>= 2) best segmentations of ``norm[:n]`` (n > 0) as sentencepiece's
    ``Lattice::NBest`` finds them: (symbols int64[], offsets int64[count + 1], scores
    float32[count]) in its order. Symbols as ``models.unigram.viterbi`` (``V + code point``: unknown)."""
    ns, nid, nsc64, nnext, head = full_lattice(norm, n, lat, idsc, unk_score)
    nend, ecount, elist, m = end_node_lists(ns, nnext, head, n)
    score = np.zeros(m + 1, np.float32)
    for j in range(m):
        score[j] = np.float32(nsc64[j])
    # Lattice::Viterbi: backtrace scores in float32, the first best end node on a tie
    bt = np.zeros(m + 1, np.float32)
    prev = np.full(m + 1, -1, np.int64)
    for j in range(m):  # nodes by start position (insertion order)
        s = ns[j]
        best = np.float32(0.0)
        bnode = -1
        for q in range(ecount[s], ecount[s + 1]):
            lnode = elist[q]
            v = np.float32(bt[lnode] + score[j])
            if bnode < 0 or v > best:
                best = v
                bnode = lnode
        bt[j] = best
        prev[j] = bnode
    eos_bt = np.float32(0.0)
    eos_prev = -1
    for q in range(ecount[n], ecount[n + 1]):
        lnode = elist[q]
        v = np.float32(bt[lnode] + np.float32(0.0))
        if eos_prev < 0 or v > eos_bt:
            eos_bt = v
            eos_prev = lnode

    EOS = m + 1
    hnode, hnext, hfx, hgx, heap = _new_agenda(EOS, eos_bt, score)
    nh = size = 1
    allocated = 1
    total = 1
    shrinks = 0
    min_agenda = min(MIN_AGENDA, nbest * 10)
    max_hyps = MAX_HYPOTHESES
    res_hyp = np.empty(nbest, np.int64)
    count = 0
    seen = np.zeros(1024, np.int64)
    fallback = False
    while size > 0:
        top, size = _heap_pop(heap, size, hfx)
        node = hnode[top]
        if node == m:  # BOS: a complete path
            res_hyp[count] = top
            count += 1
            if count == nbest:
                break
            continue
        pos = n if node == EOS else ns[node]
        lo, hi = ecount[pos], ecount[pos + 1]
        hnode, hnext, hfx, hgx, heap = _room((hnode, hnext, hfx, hgx), heap, nh, size, hi - lo)
        for q in range(lo, hi):
            lnode = elist[q]
            h = nh
            nh += 1
            hnode[h] = lnode
            hnext[h] = top
            hgx[h] = np.float32(score[lnode] + hgx[top])
            hfx[h] = np.float32(bt[lnode] + hgx[top])
            size = _heap_push(heap, size, h, hfx)
        allocated += hi - lo
        total += hi - lo
        if total >= MAX_ALLOCATED or allocated >= MAX_ALLOCATED:
            fallback = True
            break
        if size >= MAX_AGENDA or (size > min_agenda and allocated >= max_hyps):
            if shrinks >= MAX_SHRINK:
                fallback = True
                break
            keep = min(size, min_agenda)
            shrinks += 1
            if seen.shape[0] < nh:
                seen = np.zeros(max(2 * seen.shape[0], nh), np.int64)
            kept = np.empty(keep, np.int64)
            for i in range(keep):
                t, size = _heap_pop(heap, size, hfx)
                kept[i] = t
            allocated = 0
            for i in range(keep):  # CloneHypAndDependents: count the distinct hypotheses kept
                h = kept[i]
                while h >= 0 and seen[h] != shrinks:
                    seen[h] = shrinks
                    allocated += 1
                    h = hnext[h]
            size = 0
            for i in range(keep):
                size = _heap_push(heap, size, kept[i], hfx)
            max_hyps = allocated + MAX_HYPOTHESES

    if fallback:  # Lattice::Viterbi's path
        path = np.empty(m + 1, np.int64)
        k = 0
        j = eos_prev
        while j >= 0 and j != m:
            path[k] = j
            k += 1
            j = prev[j]
        syms = np.empty(k, np.int64)
        for i in range(k):
            j = path[k - 1 - i]
            syms[i] = nid[j] if nid[j] >= 0 else char_symbol(norm, ns[j], nend[j] - ns[j], V)
        offsets = np.zeros(2, np.int64)
        offsets[1] = k
        scores = np.empty(1, np.float32)
        scores[0] = eos_bt
        return syms, offsets, scores
    scores = np.empty(count, np.float32)
    for r in range(count):
        scores[r] = hfx[res_hyp[r]]
    syms, offsets = hypothesis_paths(res_hyp[:count], hnode, hnext, norm, ns, nid, nend, V)
    return syms, offsets, scores


@kernel
def hypothesis_paths(done, hnode, hnext, norm, ns, nid, nend, V):
    """The symbols of the complete hypotheses ``done`` (each a chain from BOS through ``hnext``
    to EOS), as (symbols, offsets)."""
    total_syms = 0
    for r in range(done.shape[0]):
        h = hnext[done[r]]
        while h >= 0 and hnext[h] >= 0:
            total_syms += 1
            h = hnext[h]
    syms = np.empty(total_syms, np.int64)
    offsets = np.zeros(done.shape[0] + 1, np.int64)
    o = 0
    for r in range(done.shape[0]):
        h = hnext[done[r]]
        while h >= 0 and hnext[h] >= 0:
            j = hnode[h]
            syms[o] = nid[j] if nid[j] >= 0 else char_symbol(norm, ns[j], nend[j] - ns[j], V)
            o += 1
            h = hnext[h]
        offsets[r + 1] = o
    return syms, offsets


@kernel
def gumbel():
    """A standard Gumbel draw, as sentencepiece's ``Gumbel()`` (``-log(-log(u + 1e-7))``)."""
    return -np.log(-np.log(np.random.random() + 1e-7))


@kernel
def gumbel_topk(norm, n, lat, idsc, unk_score, V, k, theta):
    """Up to ``k`` distinct segmentations of ``norm[:n]`` (n > 0) drawn without replacement
    from p ~ exp(theta * score), as sentencepiece's ``Lattice::NBest(k, sample=true, theta)``
    draws them: the A* search of ``astar_nbest`` from EOS, where a partial path's priority is
    the largest Gumbel-perturbed log-probability of the paths it can still become (each child's
    draw conditioned on its parent's, the truncated Gumbel of Kool et al. 2019, "Stochastic
    Beams and Where to Find Them"), so complete paths pop in the order of a Gumbel-top-k draw.
    Returns (symbols, offsets, perturbed float64[count], log p float64[count]) in that order;
    ``log p`` is the path's ``theta * score`` minus the log of the lattice's sum."""
    ns, nid, nsc64, nnext, head = full_lattice(norm, n, lat, idsc, unk_score)
    nend, ecount, elist, m = end_node_lists(ns, nnext, head, n)
    alpha = lattice_forward(ns, nsc64, nnext, head, n, theta)
    EOS = m + 1
    hnode, hnext, hfx, hgx, heap = _new_agenda(EOS, gumbel(), alpha)
    nh = size = 1
    done = np.empty(k, np.int64)
    count = 0
    probs = np.empty(16, np.float64)
    perturbed = np.empty(16, np.float64)
    while size > 0 and count < k:
        top, size = _heap_pop(heap, size, hfx)
        node = hnode[top]
        if node == m:  # BOS: a complete path
            done[count] = top
            count += 1
            continue
        pos = n if node == EOS else ns[node]
        lo, hi = ecount[pos], ecount[pos + 1]
        if hi - lo > probs.shape[0]:
            probs = np.empty(2 * (hi - lo), np.float64)
            perturbed = np.empty(2 * (hi - lo), np.float64)
        z = alpha[n] if node == EOS else alpha[pos]
        best = -1e300
        for q in range(lo, hi):
            lnode = elist[q]
            ls, lsc = (0, 0.0) if lnode == m else (ns[lnode], nsc64[lnode])
            probs[q - lo] = hgx[top] + alpha[ls] + theta * lsc - z
            perturbed[q - lo] = probs[q - lo] + gumbel()
            best = max(best, perturbed[q - lo])
        hnode, hnext, hfx, hgx, heap = _room((hnode, hnext, hfx, hgx), heap, nh, size, hi - lo)
        parent = hfx[top]
        for q in range(lo, hi):
            # the child's maximum, conditioned on being at most the parent's (numerically
            # stable form, appendix B.3 of the paper)
            v = parent - perturbed[q - lo] + np.log1p(-np.exp(perturbed[q - lo] - best))
            h = nh
            nh += 1
            hnode[h] = elist[q]
            hnext[h] = top
            hgx[h] = probs[q - lo]
            hfx[h] = parent - max(0.0, v) - np.log1p(np.exp(-abs(v)))
            size = _heap_push(heap, size, h, hfx)
        if size >= MAX_AGENDA:  # keep the best, as sentencepiece shrinks its agenda
            keep = min(MIN_AGENDA, 10 * k)
            kept = np.empty(keep, np.int64)
            for i in range(keep):
                kept[i], size = _heap_pop(heap, size, hfx)
            size = 0
            for i in range(keep):
                size = _heap_push(heap, size, kept[i], hfx)
    syms, offsets = hypothesis_paths(done[:count], hnode, hnext, norm, ns, nid, nend, V)
    perturbed_out = np.empty(count, np.float64)
    logp = np.empty(count, np.float64)
    for r in range(count):
        perturbed_out[r] = hfx[done[r]]
        logp[r] = hgx[done[r]]
    return syms, offsets, perturbed_out, logp


@kernel
def nbest_ids(text, N, M, F, k):
    """The ids of the ``k`` best segmentations of one document as sentencepiece's
    ``NBestEncode`` returns them (``astar_nbest`` for ``k >= 2``; the Viterbi's one for
    ``k = 1`` or an empty normalized text, as sentencepiece): (ids, offsets, float32 scores)."""
    V, unk_id, byte_fallback, byte_ids, bos, eos = F
    units, pool, root_ok, ud_bc, ud_value, flags, cls = N
    lat, idsc, unk_score, V2 = M
    norm, n = normalize(text, 0, text.shape[0], units, pool, root_ok, ud_bc, ud_value, flags, cls,
                        np.empty(text.shape[0] + 16, np.uint8))
    if n == 0:
        syms, offs, scores = np.zeros(0, np.int64), np.zeros(2, np.int64), np.zeros(1, np.float32)
    else:
        syms, offs, scores = astar_nbest(norm, n, lat, idsc, unk_score, V2, max(k, 2))
        if k < 2:
            offs, scores = offs[:2].copy(), scores[:1].copy()
    count = offs.shape[0] - 1
    out = np.empty(4 * syms.shape[0] + 2 * count + 2, np.int32)
    out_off = np.zeros(count + 1, np.int64)
    o = 0
    for j in range(count):
        o = finish_ids(syms[offs[j]:offs[j + 1]], offs[j + 1] - offs[j], V, unk_id, byte_fallback, byte_ids,
                       bos, eos, out, o)
        out_off[j + 1] = o
    return out[:o].copy(), out_off, scores
