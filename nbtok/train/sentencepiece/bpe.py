"""sentencepiece's BPE trainer (bpe_model_trainer.cc of sentencepiece 0.2.3): character-level
start, an exact count per pair in one priority queue, ties broken by shorter piece then smaller
string, pieces scored ``-index``."""
import heapq
from collections import Counter

from .validity import Validity
from .whitespace import split_into_words

UNK_CHAR = "\u2585"
WS = "\u2581"


def word_counts(counts, required, spec):
    """The words BPE merges over, counted: each sentence split by ``SplitIntoWords`` (or whole,
    without ``split_by_whitespace``), characters outside ``required`` as ``▅``."""
    suffix = bool(spec["treat_whitespace_as_suffix"])
    allow = bool(spec["allow_whitespace_only_pieces"])
    split = bool(spec["split_by_whitespace"])
    words = Counter()
    for s, c in counts.items():
        for w in (split_into_words(s, suffix, allow) if split else [s]):
            words["".join(ch if ch in required else UNK_CHAR for ch in w)] += c
    return words


def train_bpe_pieces(counts, required, n_pieces, spec):
    """The merged pieces (list of str) in order, at most ``n_pieces``.

    sentencepiece 0.2.3's loop: every pair of adjacent symbols that makes a valid piece is a
    candidate with its exact weighted count (kept up to date as merges create and destroy
    pairs), in one priority queue ordered by count, then fewer characters, then the smaller
    piece; stale entries are skipped when they come up. A candidate whose count fell to 0
    stays one (sentencepiece merges such pieces once nothing occurs any more). A piece
    already merged from another pair is dropped, not merged again. Occurrences are merged in
    the order they were found (left to right, then as merges made them)."""
    valid = Validity(spec)
    words = word_counts(counts, required, spec)
    wlist = sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))  # (sentencepiece's Sorted order)
    syms = [list(w) for w, _ in wlist]
    wfreq = [c for _, c in wlist]
    positions, count = {}, {}   # pair -> [(sid, l, r), ...] in the order found; pair -> count
    invalid = set()
    touched = set()             # pairs whose count changed since they were last queued
    heap = []

    def add_pair(sid, l, r):
        if l < 0 or r < 0:
            return
        key = (syms[sid][l], syms[sid][r])
        if key not in count:
            if key in invalid:
                return
            if not valid(key[0] + key[1]):  # (sentencepiece never makes an invalid pair a symbol)
                invalid.add(key)
                return
            count[key] = 0
            positions[key] = []
        positions[key].append((sid, l, r))
        count[key] += wfreq[sid]
        touched.add(key)

    def reset(sid, l, r, best):
        if l < 0 or r < 0:
            return
        key = (syms[sid][l], syms[sid][r])
        if key != best and key in count:
            count[key] -= wfreq[sid]
            touched.add(key)

    def prev_index(row, i):
        for j in range(i - 1, -1, -1):
            if row[j] is not None:
                return j
        return -1

    def next_index(row, i):
        for j in range(i + 1, len(row)):
            if row[j] is not None:
                return j
        return -1

    for sid, row in enumerate(syms):
        for i in range(1, len(row)):
            add_pair(sid, i - 1, i)
    pieces = []
    merged = set()
    while len(pieces) < n_pieces:
        for key in touched:
            if key in count:
                piece = key[0] + key[1]
                heapq.heappush(heap, (-count[key], len(piece), piece, key))
        touched.clear()
        best = None
        while heap:
            neg, _, piece, key = heapq.heappop(heap)
            if key in count and count[key] == -neg:
                best = key
                break
        if best is None:
            break
        if piece in merged:  # (sentencepiece's dup check: the pair is dropped)
            del count[best], positions[best]
            continue
        pieces.append(piece)
        merged.add(piece)
        for sid, l, r in positions[best]:
            row = syms[sid]
            if row[l] != best[0] or row[r] != best[1]:
                continue
            nxt, prv = next_index(row, r), prev_index(row, l)
            reset(sid, prv, l, best)
            reset(sid, r, nxt, best)
            row[l], row[r] = piece, None
            add_pair(sid, prv, l)
            add_pair(sid, l, nxt)
        del count[best], positions[best]
    return pieces
