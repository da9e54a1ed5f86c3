"""Byte-level BPE (GPT-2, cl100k, o200k): tiktoken ranks or GPT-2 vocab + merges.

Arrays: the vocabulary (``Vocab``), ``byte_ids`` (id of each single byte) and the merge
table ``left << 32 | right -> rank << 32 | merged`` (``IntMap``), plus the pre-tokenizer's
class table and config. Encoding is ``models/bpe/bytelevel.py``.

A rank file's arrays (``ByteLevelBPE.tables``) are kept in the array cache
(``nbtok/arraycache.py``): a later process reads them instead of running the build kernels.
"""
import os
import threading
from importlib import resources

import numba
import numpy as np

from .._jit import entry_point
from .. import arraycache
from ..formats.gpt2 import alphabet_bytes, bytes_to_token
from .bpe import bytelevel as K
from .bpe.merge_table import merge_table_from_ranks
from .bpe.merge import LONG_PIECE, PAIR_CACHE_SLOTS
from ..kernels.hashmap import BytesMap, IntMap
from ..kernels.ragged import batch_chunks, compact_ragged
from ..kernels.runqueue import OPEN_SLOTS
from ..pre_tokenizers.bytelevel import Pretokenizer
from ..text import pack_utf8, utf8, utf8_array
from ..vocab import CONTROL, NORMAL, UNUSED, Vocab, gather_piece_bytes
from . import bytelevel_tables
from .bytelevel_tables import build_vocab, byte_ids_of, byte_pairs, check_table_ids, merges_from_table, token_arrays


def _special_arrays(specials):
    """``S`` tuple for the kernels from ``{text: id}``."""
    items = sorted(specials.items())
    data = [s.encode("utf-8") for s, _ in items]
    offsets = np.zeros(len(data) + 1, np.int64)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    first = np.zeros(256, np.bool_)
    for d in data:
        first[d[0]] = True
    return (np.frombuffer(b"".join(data), np.uint8).copy(), offsets,
            np.array([i for _, i in items], np.int32), first)


_NONE = frozenset()


class ByteLevelBPE:
    model_type = "bytelevel_bpe"

    def __init__(self, vocab, merge_keys, merge_values, byte_ids, pattern, special_tokens,
                 whole_piece=True, merges=None, tables=None):
        """``tables``: the merge table, byte-pair table and token filter built earlier for
        these arrays (``tables()``, e.g. from the array cache); built here when None."""
        self.vocab = vocab
        self.merge_keys = np.ascontiguousarray(merge_keys, np.int64)      # compact pairs, as stored
        self.merge_values = np.ascontiguousarray(merge_values, np.int64)
        self.merge_map = (IntMap.from_arrays(self.merge_keys, self.merge_values) if tables is None
                          else IntMap.from_table(tables["merge_table"]))
        self.byte_ids = np.ascontiguousarray(byte_ids, np.int32)
        self.pattern = pattern
        # tiktoken is the reference for byte-level files: its Unicode tables (16.0) decide \p{L}
        self.pre = Pretokenizer(pattern, unicode="tiktoken")
        self.special_tokens = dict(special_tokens)
        self.whole_piece = bool(whole_piece)
        self._merges = merges
        self._validate()
        if tables is None:
            pair_codes, pair_values = byte_pairs(vocab, self.byte_ids, self.merge_keys, self.merge_values)
            token_filter = bytelevel_tables.token_filter(vocab.piece_bytes, vocab.piece_offsets, 1 << 14)
        else:
            pair_codes, pair_values, token_filter = (tables[k] for k in ("pair_codes", "pair_values", "token_filter"))
        self._M = (vocab.piece_bytes, vocab.piece_offsets, vocab.map.slot_ids, vocab.map.slot_hashes,
                   self.byte_ids, self.merge_map.keys, self.merge_map.values, np.array([self.whole_piece]),
                   vocab.short_map, pair_codes, pair_values, token_filter)
        self._S_cache = {}
        self._bad_ids = vocab.kinds == UNUSED
        self._local = threading.local()
        self._all_special = frozenset(self.special_tokens)
        self._encode_ep = None  # encode_doc's (or encode_long_doc's) compiled entry point
        self._long_pieces = False  # encode_long_doc from now on (``_encode_dispatched``)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_ranks(cls, ranks, pattern="gpt2", special_tokens=None):
        """tiktoken semantics: ``ranks`` maps token bytes to rank (= id); a pair merges when
        its concatenation is a token, lowest rank first."""
        return cls.from_rank_arrays(*token_arrays(ranks), pattern, special_tokens)

    @classmethod
    def from_rank_arrays(cls, piece_bytes, piece_offsets, ranks, pattern="gpt2", special_tokens=None,
                         where="vocabulary"):
        """``from_ranks`` with the tokens as flat arrays (``formats.tiktoken.read_tiktoken``):
        token k is ``piece_bytes[piece_offsets[k]:piece_offsets[k + 1]]``, of rank ``ranks[k]``.
        ``where`` names the source in errors."""
        special_tokens = dict(special_tokens or {})
        vocab, rank_of = build_vocab(piece_bytes, piece_offsets, ranks, special_tokens, where)
        keys, values = merge_table_from_ranks(vocab.piece_bytes, vocab.piece_offsets,
                                              vocab.map.slot_ids, vocab.map.slot_hashes, rank_of)
        byte_ids = byte_ids_of(piece_bytes, piece_offsets, ranks)
        return cls(vocab, keys, values, byte_ids, pattern, special_tokens, whole_piece=True)

    @classmethod
    def from_rank_file(cls, path, pattern="gpt2", special_tokens=None, cache=True):
        """``from_rank_arrays`` of a ``.tiktoken`` file (gzip accepted). Its ``tables`` come
        from the array cache when it holds them for this file's content and special tokens
        (the pattern does not change them); else they are built and stored there.
        ``cache=False`` (or ``NBTOK_CACHE_DIR=""``) builds them and leaves the cache alone."""
        from ..formats.tiktoken import read_file, read_tiktoken
        special_tokens = dict(special_tokens or {})
        data = read_file(path)
        if not cache or arraycache.cache_dir() is None:
            return cls.from_rank_arrays(*read_tiktoken(path, data), pattern, special_tokens, str(path))
        name = "bytelevel-" + arraycache.digest(data, sorted(map(repr, special_tokens.items())))[:32]
        key = arraycache.digest(name, arraycache.source_key(*CACHE_SOURCES))
        tables = arraycache.load(name, key)
        if tables is not None:
            try:
                return cls.from_tables(tables, pattern, special_tokens)
            except (ValueError, KeyError):
                pass  # stale or damaged: build again and overwrite
        model = cls.from_rank_arrays(*read_tiktoken(path, data), pattern, special_tokens, str(path))
        arraycache.store(name, key, model.tables())
        return model

    def tables(self):
        """Every array the model derives from its tokens, by name (``from_tables``)."""
        v = self.vocab
        return {"piece_bytes": v.piece_bytes, "piece_offsets": v.piece_offsets, "kinds": v.kinds,
                "slot_ids": v.map.slot_ids, "slot_hashes": v.map.slot_hashes, "short_map": v.short_map,
                "merge_keys": self.merge_keys, "merge_values": self.merge_values,
                "merge_table": self.merge_map.table, "byte_ids": self.byte_ids,
                "pair_codes": self._M[9], "pair_values": self._M[10], "token_filter": self._M[11]}

    @classmethod
    def from_tables(cls, tables, pattern="gpt2", special_tokens=None):
        """The model of ``tables()`` (a rank file's: ``whole_piece``), without building anything.
        Checks each array's dtype and shape (``TABLE_TYPES``) and that every id a kernel reads
        from a table is in the vocabulary (``check_table_ids``); the tables must be the ones
        built for these special tokens."""
        for name, (dtypes, ndim) in TABLE_TYPES.items():
            a = tables[name]
            if a.dtype not in dtypes or a.ndim != ndim or not a.flags.c_contiguous or not a.flags.writeable:
                raise ValueError(f"table {name}: {a.dtype}[{a.ndim}d] is not one of {dtypes}[{ndim}d]")
        if tables["pair_codes"].shape != (65536,) or tables["token_filter"].shape != (1 << 14,):
            raise ValueError("the byte-pair table has 65536 entries and the token filter 2**14 words")
        vocab = Vocab.from_arrays(tables["piece_bytes"], tables["piece_offsets"], kinds=tables["kinds"])
        check_table_ids(tables, len(vocab))
        vocab.set_maps(BytesMap.from_slots(vocab.piece_bytes, vocab.piece_offsets, tables["slot_ids"],
                                           tables["slot_hashes"]), tables["short_map"])
        return cls(vocab, tables["merge_keys"], tables["merge_values"], tables["byte_ids"], pattern,
                   special_tokens or {}, whole_piece=True, tables=tables)

    @classmethod
    def from_merges(cls, tokens, merges, pattern="gpt2", special_tokens=None, whole_piece=True,
                    utf8_only=False):
        """GPT-2 / HF semantics: ``merges[i] = (left, right)`` has rank i and produces the token
        ``left + right``; only listed pairs merge. ``utf8_only``: the vocabulary may lack the
        bytes that never occur in UTF-8 (0xC0, 0xC1, 0xF5-0xFF; GPT-NeoX's does): nbtok only
        encodes UTF-8."""
        special_tokens = dict(special_tokens or {})
        arrays = token_arrays(tokens)
        vocab, _ = build_vocab(*arrays, special_tokens)
        keys = np.empty(len(merges), np.int64)
        values = np.empty(len(merges), np.int64)
        for rank, (a, b) in enumerate(merges):
            ia, ib, im = tokens.get(a), tokens.get(b), tokens.get(a + b)
            if ia is None or ib is None or im is None:
                missing = a if ia is None else b if ib is None else a + b
                raise ValueError(f"merge {rank} ({bytes_to_token(a)} {bytes_to_token(b)}): "
                                 f"{bytes_to_token(missing)!r} is not in the vocabulary")
            keys[rank] = (ia << 32) | ib
            values[rank] = (rank << 32) | im
        return cls(vocab, keys, values, byte_ids_of(*arrays, utf8_only=utf8_only), pattern,
                   special_tokens, whole_piece=whole_piece, merges=list(merges))

    @classmethod
    def from_merge_ids(cls, tokens, merge_keys, merge_values, pattern="gpt2", special_tokens=None,
                       whole_piece=True, utf8_only=False):
        """``from_merges`` with the merges already as ids: ``merge_keys[r] = left << 32 | right``,
        ``merge_values[r] = r << 32 | merged`` in rank order, the ids those of ``tokens``; a pair
        listed twice keeps its last rank (HF's rule). The merges list is rebuilt from the table
        when asked for (``merges``)."""
        special_tokens = dict(special_tokens or {})
        arrays = token_arrays(tokens)
        vocab, _ = build_vocab(*arrays, special_tokens)
        n = len(vocab)
        low = np.int64(0xFFFFFFFF)
        for name, ids in (("left", merge_keys >> 32), ("right", merge_keys & low), ("merged", merge_values & low)):
            if ids.size and (ids.min() < 0 or ids.max() >= n):
                raise ValueError(f"a merge's {name} id is outside the vocabulary of {n}")
        # a pair's last rank, the pairs in rank order: the map puts the common merges in their
        # home slots (filled in reverse, Phi-3's BPE map ran 12% slower; see models/huggingface.py)
        _, first_of_reversed = np.unique(merge_keys[::-1], return_index=True)
        last = np.sort(merge_keys.size - 1 - first_of_reversed)
        return cls(vocab, merge_keys[last], merge_values[last],
                   byte_ids_of(*arrays, utf8_only=utf8_only), pattern, special_tokens, whole_piece=whole_piece)

    def _validate(self):
        n = len(self.vocab)
        if self.byte_ids.shape != (256,) or self.byte_ids.min() < 0 or self.byte_ids.max() >= n:
            raise ValueError("byte_ids must give a valid id for each of the 256 bytes")
        keys, vals = self.merge_keys, self.merge_values
        if keys.size:
            if (keys >> 32).max() >= n or (keys & 0xFFFFFFFF).max() >= n or (vals & 0xFFFFFFFF).max() >= n or vals.min() < 0:
                raise ValueError("merge table refers to ids outside the vocabulary")
        for text, i in self.special_tokens.items():
            if not text or not 0 <= i < n:
                raise ValueError(f"special token {text!r} has an invalid id {i}")

    # ------------------------------------------------------------------ state
    def state(self):
        return {"vocab": self.vocab.__getstate__(), "merge_keys": self.merge_keys,
                "merge_values": self.merge_values, "byte_ids": self.byte_ids,
                "pattern": self.pattern, "special_tokens": self.special_tokens,
                "whole_piece": self.whole_piece, "merges": self._merges}

    @classmethod
    def from_state(cls, st):
        vocab = Vocab.__new__(Vocab)
        vocab.__setstate__(st["vocab"])
        return cls(vocab, st["merge_keys"], st["merge_values"], st["byte_ids"], st["pattern"],
                   st["special_tokens"], st["whole_piece"], st.get("merges"))

    def __getstate__(self):
        return self.state()

    def __setstate__(self, st):
        self.__dict__.update(self.from_state(st).__dict__)

    # ------------------------------------------------------------------ special tokens
    def match_special_tokens(self, special_tokens):
        """Make ``special_tokens`` ``{text: id}`` the texts ``encode`` finds (``allowed_special``),
        their ids left as given: an id may also be a vocabulary token (an HF added token already
        in the vocabulary) or serve two texts (o200k_harmony). The vocabulary is unchanged."""
        self.special_tokens = dict(special_tokens)
        self._all_special = frozenset(self.special_tokens)
        self._S_cache = {}

    def look_up_whole_pieces(self):
        """Emit a pre-token that is a token whole, before any merge (tiktoken's rule). Only for
        vocabularies whose merges reach every token from its bytes: then it gives the same ids
        as merging and saves the merge loop on most pre-tokens."""
        self.whole_piece = True
        self._M[7][0] = True

    def _allowed(self, allowed_special, disallowed_special):
        """tiktoken's rules: returns the allowed set, raising for disallowed ones found in text."""
        all_special = set(self.special_tokens)
        if allowed_special == "all":
            allowed = all_special
        else:
            allowed = set(allowed_special)
            unknown = allowed - all_special
            if unknown:
                raise ValueError(f"unknown special tokens in allowed_special: {sorted(unknown)}")
        disallowed = all_special - allowed if disallowed_special == "all" else set(disallowed_special)
        return frozenset(allowed), disallowed

    def _S(self, allowed):
        S = self._S_cache.get(allowed)
        if S is None:
            S = _special_arrays({t: self.special_tokens[t] for t in allowed})
            self._S_cache[allowed] = S
        return S

    @staticmethod
    def _raise_disallowed(token):
        raise ValueError(
            f"Encountered text corresponding to disallowed special token {token!r}.\n"
            f"Pass it in allowed_special (or allowed_special='all') to encode it as a special token, "
            f"or disallowed_special=() to encode it as normal text.")

    def _check_disallowed(self, text, disallowed):
        for token in disallowed:
            if token in text:
                self._raise_disallowed(token)

    # ------------------------------------------------------------------ encoding
    def encode(self, text, allowed_special=frozenset(), disallowed_special="all"):
        if not allowed_special and (disallowed_special == "all" or not disallowed_special):
            # the common calls (``encode(text)``, ``encode_ordinary``) skip building sets
            allowed = _NONE
            disallowed = self._all_special if disallowed_special == "all" else ()
        else:
            allowed, disallowed = self._allowed(allowed_special, disallowed_special)
        if disallowed:
            self._check_disallowed(text, disallowed)
        if self.pre.cfg is None:
            return self._encode_fallback(utf8(text), allowed)
        buf = utf8_array(text)
        P, S = (self.pre.table, self.pre.cfg), self._S(allowed)
        if buf.shape[0] > K.LONG_TEXT:
            return self._encode_long(buf, P, S)
        doc = self._doc_scratch(buf.shape[0])
        args = (buf, self._M, P, S, doc)
        ep = self._encode_ep
        if ep is not None:
            # the compiled entry point, called directly: Numba's dispatch over these tuples of
            # arrays (typing every argument) costs more than encoding a short text. The argument
            # types are fixed by the model (the text is always a read-only uint8 buffer, the
            # special-token arrays have the same dtypes whichever tokens are allowed)
            n = ep(*args)
            if n >= 0:
                return doc[0][:n].copy()
        return doc[0][:self._encode_dispatched(args)].copy()

    def _encode_dispatched(self, args):
        """``encode``'s kernel call through Numba's dispatcher (which compiles or loads it), the
        first time and when the short-text kernel ``encode_doc`` stops at a long pre-token; then
        ``encode_long_doc`` encodes the text, and every later one (its first compilation is then
        over, and it is as fast on any text). Keeps the kernel's entry point for ``encode``."""
        kernel = K.encode_long_doc if self._long_pieces else K.encode_doc
        n = kernel(*args)
        if n < 0:
            self._long_pieces = True
            kernel = K.encode_long_doc
            n = kernel(*args)
        ep = entry_point(kernel, args)
        if ep is not None:
            self._encode_ep = ep
        return n

    def _doc_scratch(self, n):
        """This thread's encode scratch for texts of up to ``n <= LONG_TEXT`` bytes, kept between
        calls: fresh pages cost more than encoding them (a 1 MB text touches ~25 MB of
        scratch), and the pre-token cache stays warm from one call to the next."""
        doc = getattr(self._local, "doc", None)
        if doc is not None and doc[0].shape[0] >= n:
            return doc
        cap = min(max(n, 4096), K.LONG_TEXT)
        doc = self._local.doc = _new_doc_scratch(cap, cap, cap)
        return doc

    def _encode_long(self, buf, P, S):
        """``encode`` of a text over ``LONG_TEXT`` bytes: scratch sized by its longest pre-token
        (``doc_scratch_caps``, one scanner pass) rather than by its length, not kept, and the
        ids returned in the output array shrunk in place (no copy)."""
        doc = _new_doc_scratch(*K.doc_scratch_caps(buf, P, S))
        n = K.encode_long_doc(buf, self._M, P, S, doc)
        out = doc[0]
        del doc
        out.resize(n, refcheck=False)  # realloc: a large block shrinks where it is
        return out

    def encode_ordinary(self, text):
        return self.encode(text, allowed_special=(), disallowed_special=())

    def encode_batch_ragged(self, texts, allowed_special=frozenset(), disallowed_special="all", num_threads=None):
        allowed, disallowed = self._allowed(allowed_special, disallowed_special)
        buf, offsets, joined = pack_utf8(texts)
        for token in disallowed:
            t = token.encode()
            if t in joined:  # then look document by document (an occurrence may straddle two)
                for d in range(len(offsets) - 1):
                    if t in joined[offsets[d]:offsets[d + 1]]:
                        self._raise_disallowed(token)
        threads = numba.get_num_threads() if num_threads is None else int(num_threads)
        no_ends = np.zeros(0, np.int64)
        if self.pre.cfg is not None:
            given_ends, given_offsets = no_ends, no_ends
        elif not allowed:
            given_ends, counts = self.pre.ends_batch(buf, offsets)
            given_offsets = np.zeros(len(texts) + 1, np.int64)
            np.cumsum(counts, out=given_offsets[1:])
        else:  # regex fallback with special tokens: split each document in Python
            parts = [self._encode_fallback(joined[offsets[d]:offsets[d + 1]], allowed)
                     for d in range(len(offsets) - 1)]
            id_offsets = np.zeros(len(parts) + 1, np.int64)
            np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=id_offsets[1:])
            return (np.concatenate(parts) if parts else np.zeros(0, np.int32)), id_offsets
        workers = max(1, min(threads, numba.config.NUMBA_NUM_THREADS, len(texts)))
        n_chunks = batch_chunks(len(texts), buf.shape[0], workers)
        previous = numba.get_num_threads()
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            out, counts = K.encode_batch(buf, offsets, self._M, (self.pre.table, self.pre.cfg if self.pre.cfg is not None else no_ends),
                                         self._S(allowed), given_ends, given_offsets, n_chunks, workers)
        finally:
            numba.set_num_threads(previous)
        return compact_ragged(out, offsets, counts)

    def encode_batch_offsets(self, texts, **opts):
        """Ragged ids plus each token's character span in its text. Byte-level tokens tile the
        text, so a token's byte span follows from the lengths of the tokens before it."""
        from ..kernels import ragged as R
        ids, id_offsets = self.encode_batch_ragged(texts, **opts)
        if self.pre.cfg is None:
            raise NotImplementedError("offsets need a pre-tokenizer that covers the text (a scanner pattern)")
        buf, doc_offsets, _ = pack_utf8(texts)
        span_starts, span_ends = R.piece_spans(ids, id_offsets, self.vocab.piece_offsets)
        starts, ends = R.spans_to_char_offsets(buf, doc_offsets, span_starts, span_ends, id_offsets)
        return ids, id_offsets, starts, ends

    def _encode_fallback(self, data, allowed):
        """Pre-tokenization by the ``regex`` module (a user pattern nbtok has no scanner for)."""
        pieces = []
        start = 0
        S = self._S(allowed)
        buf = np.frombuffer(data, np.uint8)
        while True:
            pos, length, sid = K.find_special(buf, start, buf.shape[0], S)
            segment = buf[start:pos]
            if segment.shape[0]:
                ends = self.pre.ends(segment, 0, segment.shape[0])
                pieces.append(K.encode_one_ends(np.ascontiguousarray(segment), ends, self._M))
            if sid < 0:
                break
            pieces.append(np.array([sid], np.int32))
            start = pos + length
        return np.concatenate(pieces) if pieces else np.zeros(0, np.int32)

    def encode_as_pieces(self, text, **opts):
        return [self.id_to_piece(int(i)) for i in self.encode(text, **opts)]

    # ------------------------------------------------------------------ decoding
    def decode_bytes(self, ids):
        ids = self.vocab.check_ids(ids)
        if ids.size and self._bad_ids[ids].any():
            bad = int(ids[self._bad_ids[ids]][0])
            raise ValueError(f"token id {bad} is not in the vocabulary")
        return gather_piece_bytes(ids, self.vocab.piece_bytes, self.vocab.piece_offsets, self._bad_ids).tobytes()

    def decode(self, ids, errors="replace"):
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    # ------------------------------------------------------------------ vocabulary
    def id_to_piece(self, i):
        """The token in GPT-2's printable byte alphabet (``Ġhello``), or the special token's text."""
        if self.vocab.kinds[i] == CONTROL:
            return self.vocab.piece(i).decode("utf-8")
        return bytes_to_token(self.vocab.piece(i))

    def piece_to_id(self, piece):
        if isinstance(piece, str):
            if piece in self.special_tokens:
                return self.special_tokens[piece]
            piece = alphabet_bytes(piece)
            if piece is None:
                return -1
        i = self.vocab.get(piece)
        return -1 if i < 0 or self.vocab.kinds[i] == UNUSED else i

    @property
    def ranks(self):
        """token bytes -> rank (the ``.tiktoken`` content)."""
        kinds = self.vocab.kinds
        return {p: i for i, p in enumerate(self.vocab.pieces()) if kinds[i] == NORMAL}

    def save_tiktoken(self, path):
        from ..formats.tiktoken import save_tiktoken_ranks
        save_tiktoken_ranks(self.ranks, path)

    def save_gpt2(self, vocab_json_path, merges_txt_path):
        from ..formats.gpt2 import save_gpt2
        save_gpt2(self.ranks, self.merges, self.special_tokens, vocab_json_path, merges_txt_path)

    def save_huggingface(self, path):
        """A ``tokenizer.json`` (BPE + ByteLevel) that HF tokenizers encodes identically."""
        from ..formats.huggingface import save_huggingface
        save_huggingface(self, path)

    @property
    def merges(self):
        """``list[(bytes, bytes)]`` in rank order (derived from the ranks when loaded from tiktoken)."""
        if self._merges is None:
            self._merges = merges_from_table(self)
        return self._merges


def _new_doc_scratch(cap, piece_cap, ends_cap):
    """``models.bpe.bytelevel.new_doc_scratch`` in NumPy: the same arrays, of the same numba types
    (so the same compiled ``encode_doc``), without loading a kernel to allocate them
    (tests/test_cache.py compares the two)."""
    cap = max(cap, 1)
    out_cap, cap = cap, max(piece_cap, 1)
    heap = np.empty(3 * cap + 1, np.int64)
    pair_cache = np.empty((PAIR_CACHE_SLOTS, 2), np.int64)  # models.bpe.merge.new_pair_cache
    pair_cache[:, 0] = -1
    keys = heap if cap >= LONG_PIECE else heap[:1]  # kernels.runqueue.runqueue_over
    opened = np.empty((OPEN_SLOTS, 2), np.int64)
    opened[:, 1] = -1
    queue = (keys, np.empty(keys.shape[0], np.int32), np.empty(keys.shape[0], np.int64), opened, np.zeros(2, np.int64))
    piece = (heap, np.empty(cap + 1, np.int32), np.empty(cap + 1, np.int32), np.empty(cap + 1, np.int64),
             pair_cache, queue)
    slots = K.CACHE_SLOTS  # models.bpe.bytelevel.cache_slots_for
    while slots < 32768 and slots * 256 < out_cap:
        slots *= 2
    return (np.empty(out_cap, np.int32), np.empty(max(ends_cap, 1), np.int64), np.empty(cap, np.int32), piece,
            np.zeros((slots, 8), np.int64))


# what from_tables accepts: name -> (dtypes, ndim)
TABLE_TYPES = {name: (tuple(map(np.dtype, dtypes.split())), ndim) for name, dtypes, ndim in (
    ("piece_bytes", "u1", 1), ("piece_offsets", "i8", 1), ("kinds", "i1", 1), ("slot_ids", "i4", 1),
    ("slot_hashes", "i8", 1), ("short_map", "i8", 2), ("merge_keys", "i8", 1), ("merge_values", "i8", 1),
    ("merge_table", "i8", 2), ("byte_ids", "i4", 1), ("pair_codes", "u2 i4", 1), ("pair_values", "i8", 1),
    ("token_filter", "u8", 1))}
# the code that builds and reads the cached tables: an edit to any of them makes the cache stale
CACHE_SOURCES = ("arraycache.py", "models/bytelevel.py", "models/bytelevel_tables.py", "vocab.py",
                 "formats/tiktoken.py", "formats/rankfile.py", "kernels/hashmap.py", "models/bpe/bytelevel.py",
                 "models/bpe/merge.py", "models/bpe/merge_table.py")

BUNDLED = {"gpt2": ("gpt2.tiktoken.gz", "gpt2", {"<|endoftext|>": 50256})}


def bundled_encoding(name="gpt2", cache=True):
    if name not in BUNDLED:
        raise ValueError(f"nbtok bundles only {sorted(BUNDLED)}; load other ranks with "
                         f"Tokenizer.from_tiktoken(path, pattern={name!r})")
    filename, pattern, specials = BUNDLED[name]
    path = resources.files("nbtok") / "data" / filename
    with resources.as_file(path) as p:
        return ByteLevelBPE.from_rank_file(os.fspath(p), pattern, specials, cache)
