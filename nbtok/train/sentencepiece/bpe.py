"""sentencepiece's BPE trainer (bpe_model_trainer.cc): character-level start, a lazily recounted
frequency per pair, an active set of the top 5% pairs refreshed every 100 merges, ties broken by
shorter piece then smaller string, pieces scored ``-index``."""
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
    """The merged pieces (list of str) in order, at most ``n_pieces``."""
    valid = Validity(spec)
    words = word_counts(counts, required, spec)
    wlist = sorted(words.items())
    syms = [list(w) for w, _ in wlist]
    wfreq = [c for _, c in wlist]
    positions, freq = {}, {}   # pair -> set of (sid, l, r); pair -> cached freq (0 = stale)
    active = set()

    def add_pair(sid, l, r):
        if l < 0 or r < 0:
            return
        key = (syms[sid][l], syms[sid][r])
        positions.setdefault(key, set()).add((sid, l, r))
        freq.setdefault(key, 0)
        active.add(key)

    def compute(key):
        if freq[key] > 0:
            return freq[key]
        s, f = syms, 0
        ps = positions[key]
        for p in list(ps):
            sid, l, r = p
            if s[sid][l] != key[0] or s[sid][r] != key[1]:
                ps.discard(p)
            else:
                f += wfreq[sid]
        freq[key] = f
        return f

    def reset(sid, l, r, best):
        if l < 0 or r < 0:
            return
        key = (syms[sid][l], syms[sid][r])
        if key != best and key in freq:
            freq[key] = 0

    def prev_index(sid, i):
        for j in range(i - 1, -1, -1):
            if syms[sid][j] is not None:
                return j
        return -1

    def next_index(sid, i):
        row = syms[sid]
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
        if len(pieces) % 100 == 0:
            cand = [(compute(k), k) for k in list(positions)]
            size = min(max(1000, int(len(positions) * 0.05)), len(cand))
            cand.sort(key=lambda fk: -fk[0])
            active = set(k for _, k in cand[:size])
        best, bf = None, 0
        for k in active:
            f = compute(k)
            s = k[0] + k[1]
            if best is None or f > bf or (f == bf and (len(s) < len(best[0] + best[1]) or
                                                       (len(s) == len(best[0] + best[1]) and s < best[0] + best[1]))):
                best, bf = k, f
        if best is None or bf <= 0:
            break
        piece = best[0] + best[1]
        if not valid(piece) or piece in merged:  # (a piece merged before by another pair is not merged again)
            freq[best] = 0
            active.discard(best)
            del positions[best]
            continue
        pieces.append(piece)
        merged.add(piece)
        for sid, l, r in sorted(positions[best]):
            row = syms[sid]
            if row[l] is None or row[r] is None:
                continue
            if row[l] != best[0] or row[r] != best[1]:
                continue
            nxt, prv = next_index(sid, r), prev_index(sid, l)
            reset(sid, prv, l, best)
            reset(sid, r, nxt, best)
            row[l], row[r] = piece, None
            add_pair(sid, prv, l)
            add_pair(sid, l, nxt)
        del positions[best]
        del freq[best]
        active.discard(best)
    return pieces
