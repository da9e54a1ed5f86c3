"""Byte-level BPE training (GPT-2 style): ``nbtok.train_bpe``.

1. Count unique pre-tokens (``nbtok.train.counting``: streaming, parallel, split on special
   tokens first).
2. Learn merges (``nbtok.train.bpe_kernels.bpe_train``: max-heap with lazy invalidation,
   pair -> words inverted index, incremental pair counts; one kernel call, no Python per merge).
3. Build the vocabulary and a ``Tokenizer`` over nbtok's byte-level BPE model.

Vocabulary ids (both tie-break modes):

* ``0 .. S-1``      the special tokens, in the order given;
* ``S .. S+255``    the 256 single bytes in GPT-2's ``bytes_to_unicode`` order (printable
                    bytes ``!``..``~``, ``¡``..``¬``, ``®``..``ÿ`` first, then the other 68 in
                    byte order). This is the order of the CS336 reference vocabulary and of HF's
                    ByteLevel alphabet (sorted by code point);
* ``S+256 ..``      one id per merge, in merge order.

``tie_break="greatest_bytes"`` (alias ``"cs336"``): among pairs with equal counts the
lexicographically greatest ``(left bytes, right bytes)`` wins, and every merge gets its own
id, even when its bytes equal an earlier token's (possible, rarely: then ``vocab`` holds the
bytes twice, as the CS336 reference does). ``vocab_size - S - 256`` merges are learned.

``tie_break="hf"``: HF tokenizers' ``BpeTrainer`` rule, the smallest ``(id_left, id_right)`` in
the id layout above (= HF's with ``initial_alphabet=ByteLevel.alphabet()``); a merge whose bytes
already exist reuses that id and adds no entry, and training goes on until the vocabulary
holds ``vocab_size`` entries.

In both modes a pair's count is the sum over unique pre-tokens of (occurrences of the pair in
the pre-token, merged left to right) x (the pre-token's count); counts are int64 and exact.

Input semantics: a file is one document (it is read in blocks cut at special tokens or at
newlines where no built-in pattern can join the two sides, so the pre-tokens are exactly those
of the whole file); each str of an iterable is its own document. Special tokens are found by
plain byte search (longest first at each position); the text between them is pre-tokenized.
HF's ``train(files)`` reads files line by line instead, which differs from whole-file
pre-tokenization at whitespace before a newline; to compare, feed HF the same documents
(``tests/test_train_bpe.py::hf_train``, ``scripts/bench_train_bpe.py``).

Memory model (``U`` = total bytes of the unique pre-tokens, ``W`` = their number, ``P`` = pairs
ever seen, ``E`` = pair->word index entries, about ``U`` at the start and growing with merges):
counting holds one input block (16 MB, or 4 MB per thread) plus the unique-pre-token table
(about ``U + 150 W`` bytes); merging holds ``4 U`` (symbols) + ``32 W`` + ``8 E`` + about
``100 P`` bytes. Nothing is proportional to the corpus size.
"""
import sys
import threading
import time

import numba
import numpy as np

from . import bpe_kernels as K
from .counting_kernels import words_to_symbols
from ..tokenizer import Tokenizer
from .counting import count_pretokens

TIE_BREAKS = {"greatest_bytes": K.TIE_GREATEST_BYTES, "cs336": K.TIE_GREATEST_BYTES, "hf": K.TIE_SMALLEST_RANK}


def gpt2_byte_order():
    """The 256 byte values in GPT-2's ``bytes_to_unicode`` order (= by mapped code point)."""
    keep = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    return keep + [b for b in range(256) if b not in set(keep)]


class TrainedTokenizer(Tokenizer):
    """A ``Tokenizer`` that also carries what training produced:

    ``vocab``  dict[int, bytes] (special tokens as their UTF-8 bytes)
    ``merges`` list[tuple[bytes, bytes]] in merge order
    ``merge_counts`` int64 array, the count of each merge's pair when it was chosen
    """

    def __init__(self, model, vocab, merges, merge_counts=None):
        super().__init__(model)
        self._vocab = vocab
        self.merges = merges
        self.merge_counts = merge_counts

    def __getstate__(self):
        state = super().__getstate__()
        state.update(vocab=self._vocab, merges=self.merges, merge_counts=self.merge_counts)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._vocab = state["vocab"]
        self.merges = state["merges"]
        self.merge_counts = state.get("merge_counts")

    @property
    def vocab(self):
        """``{id: bytes}`` as training made it (a merge whose bytes repeat an earlier token's
        keeps its own id here; the model's arrays hold the first)."""
        return self._vocab

    def save_tiktoken(self, path):
        from ..formats.tiktoken import save_tiktoken_ranks
        save_tiktoken_ranks(self.ranks, path)

    @property
    def ranks(self):
        """token bytes -> id for every non-special token (the ``.tiktoken`` content; a repeated
        byte string keeps its first id)."""
        specials = set(self.special_tokens.values())
        ranks = {}
        for i, b in self.vocab.items():
            if i not in specials and b not in ranks:
                ranks[b] = i
        return ranks


def _validate(vocab_size, special_tokens, pattern, tie_break):
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise TypeError(f"vocab_size must be an int, not {type(vocab_size).__name__}")
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError("special_tokens must be a list of str (got a single string)")
    if isinstance(special_tokens, dict):
        special_tokens = list(special_tokens)
    try:
        special_tokens = list(special_tokens or ())
    except TypeError:
        raise TypeError(f"special_tokens must be a list of str, not {type(special_tokens).__name__}") from None
    for s in special_tokens:
        if not isinstance(s, str):
            raise TypeError(f"special tokens must be str, got {type(s).__name__}")
        if not s:
            raise ValueError("a special token must not be empty")
    if len(set(special_tokens)) != len(special_tokens):
        raise ValueError("special_tokens has duplicates")
    base = 256 + len(special_tokens)
    if vocab_size < base:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the 256 byte tokens plus "
                         f"{len(special_tokens)} special tokens ({base})")
    if vocab_size >= 1 << 30:
        raise ValueError(f"vocab_size {vocab_size} is too large")
    if not isinstance(pattern, str) or not pattern:
        raise TypeError("pattern must be 'gpt2', 'cl100k', 'o200k' (or another known name) or a regex string")
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {sorted(TIE_BREAKS)}, not {tie_break!r}")
    return int(vocab_size), special_tokens


def _make_pretokenizer(pattern):
    from ..pre_tokenizers.bytelevel import Pretokenizer
    try:
        return Pretokenizer(pattern)
    except ImportError:
        raise
    except Exception as e:  # regex.error and friends
        raise ValueError(f"bad pre-tokenizer pattern {pattern!r}: {e}") from None


def _run_merges(args, progress, n_target):
    """Run the merge kernel; with progress, in a thread (the kernel releases the GIL) while
    this thread reports ``progress_arr`` to stderr."""
    prog = args[-1]
    if not progress:
        return K.bpe_train(*args)
    out = {}

    def work():
        try:
            out["r"] = K.bpe_train(*args)
        except BaseException as e:  # pragma: no cover - surfaced below
            out["e"] = e

    t0 = time.perf_counter()
    th = threading.Thread(target=work, name="nbtok-bpe-merges", daemon=True)
    th.start()
    while True:  # report at least once, also when the merges end before the first look
        th.join(0.5)
        done = int(prog[0])
        dt = time.perf_counter() - t0
        rate = done / dt if dt > 0 else 0.0
        eta = f", ETA {(n_target - done) / rate:,.1f} s" if 0 < done < n_target and rate > 0 else ""
        sys.stderr.write(f"\r[nbtok] merging: {done:,}/{n_target:,} merges, last count {int(prog[1]):,}, "
                         f"{dt:.1f} s{eta}   ")
        sys.stderr.flush()
        if not th.is_alive():
            break
    sys.stderr.write("\n")
    if "e" in out:
        raise out["e"]
    return out["r"]


def train_bpe(input, vocab_size, special_tokens=(), pattern="gpt2", tie_break="greatest_bytes",
              progress=True, num_threads=None, block_size=None, errors="strict"):
    """Train a byte-level BPE tokenizer; returns a ``TrainedTokenizer`` (a ``Tokenizer`` with
    ``.vocab`` dict[int, bytes] and ``.merges`` list[tuple[bytes, bytes]]).

    input: a path, a list or tuple of paths (a missing one is a ``FileNotFoundError``), or any
        other iterable of str, such as ``iter(texts)`` or a generator (each str is its own
        document). Files must be UTF-8; ``errors="replace"`` or ``"ignore"`` repairs them as
        ``bytes.decode`` does. Input without any text is a ``ValueError``; a vocabulary smaller
        than ``vocab_size`` (the text has no more pairs to merge) is a ``UserWarning``.
    vocab_size: total size, counting the 256 byte tokens and the special tokens.
    special_tokens: list of str; the text is split on them before pre-tokenization, they get
        ids 0.. and are never part of a merge.
    pattern: "gpt2", "cl100k", "o200k" (any name ``nbtok.pre_tokenizers.bytelevel.PATTERNS`` knows) or a
        regex string (patterns outside those families use the slower ``regex`` module).
    tie_break: "greatest_bytes" (CS336, default) or "hf" (HF tokenizers' BpeTrainer; files are
        then read as its ``Tokenizer.train(files)`` reads them, each line one document).
    progress: report counting and merging progress on stderr.
    num_threads: threads for counting (default: numba's current setting).
    """
    vocab_size, special_tokens = _validate(vocab_size, special_tokens, pattern, tie_break)
    mode = TIE_BREAKS[tie_break]
    pre = _make_pretokenizer(pattern)
    old_threads = numba.get_num_threads()
    if num_threads is not None:
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads must be a positive int, not {num_threads!r}")
        numba.set_num_threads(min(num_threads, numba.config.NUMBA_NUM_THREADS))
    try:
        # HF's trainer reads a file line by line: with its tie rule, its documents too
        words = count_pretokens(input, pre, special_tokens, progress=progress, block_size=block_size,
                                errors=errors, line_documents=mode == TIE_BREAKS["hf"])
    finally:
        numba.set_num_threads(old_threads)
    # handed over in a list that _train_from_words empties: the unique-pre-token table is freed
    # once the symbols are built, before merging (no frame here keeps a reference to it)
    held = [words]
    del words
    return _train_from_words(held, vocab_size, special_tokens, pattern, mode, progress)


def train_bpe_from_counts(counts, vocab_size, special_tokens=None, pattern=None, tie_break="greatest_bytes",
                          progress=True):
    """``train_bpe`` from pre-token counts (``nbtok.corpus.count`` / ``PretokenCounts.load``):
    the same merges as ``train_bpe`` on the text they were counted from. ``special_tokens`` and
    ``pattern`` default to the ones the counts were made with (others are an error).

    Examples:
        >>> counts = nbtok.corpus.count("data/*.txt")                 # doctest: +SKIP
        >>> tok = nbtok.train_bpe_from_counts(counts, 1000)           # doctest: +SKIP
    """
    for name in ("wbytes", "woff", "wcount", "pattern", "special_tokens"):
        if not hasattr(counts, name):
            raise TypeError(f"counts must be nbtok.corpus.PretokenCounts, not {type(counts).__name__}")
    if special_tokens is not None and list(special_tokens) != list(counts.special_tokens):
        raise ValueError(f"the counts were made with special_tokens {counts.special_tokens}, not {list(special_tokens)}")
    if pattern is not None and pattern != counts.pattern:
        raise ValueError(f"the counts were made with pattern {counts.pattern!r}, not {pattern!r}")
    vocab_size, special_tokens = _validate(vocab_size, counts.special_tokens, counts.pattern, tie_break)
    return _train_from_words([counts], vocab_size, special_tokens, counts.pattern, TIE_BREAKS[tie_break], progress)


def _train_from_words(held, vocab_size, special_tokens, pattern, mode, progress):
    """Merges from the unique pre-tokens in ``held`` (a one-item list, emptied here)."""
    words = held.pop()
    S = len(special_tokens)
    n_target = vocab_size - S - 256
    order = gpt2_byte_order()
    rank_init = np.empty(256, np.int64)
    rank_init[order] = np.arange(256)
    syms = words_to_symbols(words.wbytes, words.woff, len(words))
    woff, wcount = words.woff, words.wcount
    del words
    prog = np.zeros(8, np.int64)
    args = (syms, woff, wcount, np.int64(n_target), mode == K.TIE_SMALLEST_RANK, np.int64(mode), rank_init, prog)
    ml, mr, mz, mc, tok_bytes, tok_off = _run_merges(args, progress and n_target > 0, n_target)
    del syms

    data = tok_bytes.tobytes()
    offs = tok_off.tolist()
    tokens = [data[offs[i]:offs[i + 1]] for i in range(len(offs) - 1)]
    merges = [(tokens[a], tokens[b]) for a, b in zip(ml.tolist(), mr.tolist())]
    vocab = {i: s.encode("utf-8") for i, s in enumerate(special_tokens)}
    for r, b in enumerate(order):
        vocab[S + r] = bytes([b])
    if mode == K.TIE_SMALLEST_RANK:
        for t in range(256, len(tokens)):
            vocab[S + t] = tokens[t]
    else:
        for k, z in enumerate(mz.tolist()):
            vocab[S + 256 + k] = tokens[z]
    if len(vocab) < vocab_size:
        import warnings
        warnings.warn(f"the trained vocabulary has {len(vocab)} tokens, fewer than vocab_size={vocab_size}: "
                      f"after {len(merges)} merges no pair of adjacent tokens is left in the input's "
                      f"pre-tokens (more or more varied text gives more)", UserWarning, stacklevel=2)
    return _build_tokenizer(vocab, merges, special_tokens, pattern, mc)


def _build_tokenizer(vocab, merges, special_tokens, pattern, merge_counts):
    from ..models.bytelevel import ByteLevelBPE
    specials = {s: i for i, s in enumerate(special_tokens)}
    ranks = {}
    for i, b in vocab.items():
        if i >= len(special_tokens) and b not in ranks:
            ranks[b] = i
    model = ByteLevelBPE.from_ranks(ranks, pattern, specials)
    model._merges = list(merges)
    return TrainedTokenizer(model, vocab, merges, merge_counts)
