"""``SentencePieceModel``: a sentencepiece ``.model`` (Unigram or BPE) on flat arrays.

Pipeline per document (one kernel call, or one ``prange`` call per batch):
UTF-8 bytes -> normalizer (model charsmap + whitespace rules) -> Unigram Viterbi or
SentencePiece BPE merges -> byte fallback / unk merging -> ids. See the kernels:
``normalizers.sentencepiece``, ``kernels.trie``, ``models.unigram.viterbi``, ``models.bpe.sentencepiece`` (which runs
``models.bpe.merge.bpe_merge``).

Which pieces do what (as ``ModelInterface::InitializePieces``): NORMAL, USER_DEFINED and
UNUSED pieces are matchable (the vocabulary trie); CONTROL, UNKNOWN and BYTE pieces are
reserved. USER_DEFINED pieces also pass through the normalizer untouched.
"""
import numba
import numpy as np

from .._jit import EntryPoints, entry_point, thread_limit
from ..formats.sentencepiece_model import (BPE, BYTE, CHAR, CONTROL, NORMAL, UNIGRAM, UNKNOWN, UNUSED,
                                           USER_DEFINED, WORD, ModelProtoData, read_model_file, read_model_proto,
                                           write_model_proto)
from ..normalizers import charsmap as kcmap
from ..normalizers import sentencepiece as knorm
from . import char_word as kcw
from .bpe import sentencepiece as kbpe
from .bpe import sentencepiece_pieces as kpieces
from .bpe import sentencepiece_words as kwbpe
from . import symbols as ksym
from .unigram import viterbi as kuni
from .unigram import words as kwords
from .bpe.merge import new_pair_filter
from ..kernels.hashmap import IntMap
from ..kernels.ragged import BatchLayout
from .unigram.automaton import build_automaton
from ..kernels.trie import build_trie, labelled_units
from ..text import pack_utf8, utf8 as _as_bytes
from ..vocab import Vocab
from .sentencepiece_decode import Decoding
from .sentencepiece_offsets import Offsets
from .sentencepiece_sampling import Regularization

SPACE = "\u2581"
MODEL_TYPES = {UNIGRAM: "unigram", BPE: "bpe", WORD: "word", CHAR: "char"}
_EMPTY_TRIE = (np.zeros(2, np.int32), np.full(1, -1, np.int32))


def _vocab_from_arrays(piece_bytes, piece_offsets, scores, kinds):
    v = Vocab.__new__(Vocab)
    v.piece_bytes = piece_bytes
    v.piece_offsets = piece_offsets
    v.scores = scores
    v.kinds = kinds
    v._map = None
    v._validate()
    return v


_FAST_CALL = True
_U8 = np.dtype(np.uint8)  # np.frombuffer is about 0.5 us faster with a dtype object than with np.uint8
_frombuffer = np.frombuffer
_empty = np.empty
_I32 = np.dtype(np.int32)
_INTO_MAX = 4096  # longest text (UTF-8 bytes) given an output array of len + 4 ids up front


def normalizer_arrays(spec, ws_suffix=False, ud_trie=None):
    """The normalizer tuple ``N`` the kernels take (``normalizers.sentencepiece.normalize_into``) for a
    ``NormalizerSpec`` dict: its charsmap's trie and pool, the byte filter and classes, the
    user-defined symbols' trie (``ud_trie``, none by default) and the flags."""
    units, pool = knorm.decode_charsmap(spec["precompiled_charsmap"])
    flags = np.array([spec["add_dummy_prefix"], spec["remove_extra_whitespaces"], spec["escape_whitespaces"],
                      ws_suffix], np.int64)
    if ud_trie is None:
        ud_trie = (np.zeros(0, np.int32), np.zeros(0, np.int32))
    root_ok = knorm.root_filter(units)
    return (units, pool, root_ok, ud_trie[0], ud_trie[1], flags,
            kcmap.byte_classes(units, pool, root_ok, ud_trie[0], ud_trie[1]))


class SentencePieceModel(Regularization, Decoding, Offsets):
    """Implements the Tokenizer model protocol for sentencepiece Unigram and BPE models."""

    def __init__(self, proto: ModelProtoData, merges=None):
        """``merges`` (BPE only): an ``IntMap`` ``left << 32 | right -> rank << 32 | merged id`` to
        merge by instead of the one SentencePiece derives from the scores; a ``tokenizer.json``
        converted from a SentencePiece BPE model lists its merges (``hf_fused_spm``)."""
        self.proto = proto
        t, nspec = proto.trainer, proto.normalizer
        mt = t["model_type"]
        if mt not in MODEL_TYPES:
            raise ValueError(f"unsupported sentencepiece model_type {mt} (UNIGRAM=1, BPE=2, WORD=3 and CHAR=4 are)")
        self.model_type = MODEL_TYPES[mt]
        kinds = proto.types
        V = kinds.shape[0]
        if V == 0:
            raise ValueError("sentencepiece model has no pieces")
        lens = np.diff(proto.piece_offsets)
        if np.any(lens == 0):
            raise ValueError(f"sentencepiece model: piece {int(np.argmax(lens == 0))} is empty")
        self.vocab = _vocab_from_arrays(proto.piece_bytes, proto.piece_offsets, proto.scores, kinds)
        self.V = V
        pb = proto.piece_bytes

        # ---- reserved pieces: unknown, control, bytes
        unk = np.flatnonzero(kinds == UNKNOWN)
        if unk.size != 1:
            raise ValueError("sentencepiece model must define exactly one UNKNOWN piece (unk is "
                             + ("not defined)" if unk.size == 0 else "already defined)"))
        self.unk_id = int(unk[0])
        self.byte_fallback = bool(t["byte_fallback"])
        byte_pos = np.flatnonzero(kinds == BYTE)
        self.byte_ids = np.full(256, self.unk_id, np.int32)
        self.byte_values = np.zeros(V, np.uint8)
        if byte_pos.size and not self.byte_fallback:
            raise ValueError("byte piece found although byte_fallback is false")
        for i in byte_pos.tolist():
            p = self.vocab.piece(i)
            if len(p) != 6 or not (p.startswith(b"<0x") and p.endswith(b">")) or p[3:5] != p[3:5].upper():
                raise ValueError(f"byte piece {p!r} is invalid")
            try:
                b = int(p[3:5], 16)
            except ValueError:
                raise ValueError(f"byte piece {p!r} is invalid") from None
            self.byte_ids[b] = i
            self.byte_values[i] = b
        if self.byte_fallback and np.unique(self.byte_values[byte_pos]).size != 256:
            raise ValueError("there are not 256 byte pieces although byte_fallback is true")
        reserved = np.flatnonzero((kinds == CONTROL) | (kinds == UNKNOWN) | (kinds == BYTE))
        rs = [self.vocab.piece(i) for i in reserved.tolist()]
        if len(set(rs)) != len(rs):
            raise ValueError("sentencepiece model: a reserved piece is defined twice")

        # ---- vocabulary trie over NORMAL / USER_DEFINED / UNUSED pieces
        matchable = np.flatnonzero((kinds == NORMAL) | (kinds == USER_DEFINED) | (kinds == UNUSED))
        self._matchable = matchable
        self._trie = None
        self._automaton = None
        if self.model_type != "bpe":
            self.trie  # noqa: B018 (built now: the lattice or the cuts need it; checks for repeated pieces)
        ud = np.flatnonzero(kinds == USER_DEFINED)
        self.ud_trie = build_trie(pb, proto.piece_offsets, ud) if ud.size else (np.zeros(0, np.int32), np.zeros(0, np.int32))

        # ---- normalizer / denormalizer
        self.ws_suffix = bool(t["treat_whitespace_as_suffix"])
        self.N = normalizer_arrays(nspec, self.ws_suffix, self.ud_trie)
        self.denorm = None
        d = proto.denormalizer
        if d is not None and d["precompiled_charsmap"]:
            self.denorm = normalizer_arrays(d)
            # its rules rewrite pieces by the ones after them: a stream holds back 4 (stream.py)
            self.stream_lookahead = 4
        self.unk_surface = np.frombuffer(t["unk_surface"].encode("utf-8"), np.uint8).copy()
        self._strip_first = bool(nspec["add_dummy_prefix"] or nspec["remove_extra_whitespaces"])
        self._keep_bos_ws = not bool(nspec["remove_extra_whitespaces"])

        # ---- model
        scores = proto.scores
        if self.model_type == "unigram":
            if not np.all(np.isfinite(scores)):
                raise ValueError("sentencepiece model: a piece score is NaN or Inf")
            normal = scores[kinds == NORMAL]
            fmax = np.float32(np.finfo(np.float32).max)
            fmin = np.float32(np.finfo(np.float32).tiny)
            self.min_score = np.float32(min(fmax, normal.min())) if normal.size else fmax
            self.max_score = np.float32(max(fmin, normal.max())) if normal.size else fmin
            lscore = scores.astype(np.float32)
            # sentencepiece 0.2.1+: GetUserDefinedScore(length) = float(0.1 * (length - 1))
            lscore[ud] = (0.1 * (lens[ud].astype(np.float64) - 1)).astype(np.float32)
            self.lscore = lscore
            # n-best, sampling and entropy build sentencepiece's Lattice (PopulateNodes), which
            # scores a user-defined piece by its length in characters, not bytes: the lattice ``ML``
            self.lattice_lscore = lscore
            if ud.size:
                chars = np.array([sum((c & 0xC0) != 0x80 for c in self.vocab.piece(i)) for i in ud.tolist()])
                if np.any(chars != lens[ud]):
                    self.lattice_lscore = lscore.copy()
                    self.lattice_lscore[ud] = (0.1 * (chars.astype(np.float64) - 1)).astype(np.float32)
            self.unk_score = np.float32(self.min_score - np.float32(10.0))
            self._M = self._lattice()
        elif self.model_type in ("char", "word"):   # (models.char_word)
            self.D = (self.trie[0], self.trie[1], kinds, self.ud_trie[0], self.ud_trie[1], np.int64(V),
                      self.model_type == "word")
        else:
            _, ranks = np.unique(-scores.astype(np.float64), return_inverse=True)
            self._ranks = ranks.astype(np.int64)
            self._M = None
            self.P = None
            lens_ok = V < (1 << 20) and int(lens.max()) < 4096 and pb.size < (1 << 31)
            joins_ok = False
            if lens_ok:
                table, char_syms, dup = kpieces.build_piece_table(pb, proto.piece_offsets, kinds)
                if dup >= 0:
                    raise ValueError("sentencepiece model: a piece is defined twice")
                if merges is None:
                    keys, vals, sl, sr = kpieces.build_merges(table, pb, proto.piece_offsets, kinds, self._ranks)
                    self.merges = IntMap.from_arrays(keys, vals)
                else:
                    sl, sr = self._given_merges(merges)
                joins_ok, joins = kpieces.build_joins(pb, proto.piece_offsets, kinds)
                self.P = (table, char_syms, pb, kpieces.build_bigrams(pb, proto.piece_offsets, kinds),
                          self.merges.keys, self.merges.values, new_pair_filter(self.merges.keys), kinds, sl, sr,
                          bool(np.any(kinds == UNUSED)), np.int64(V), joins)
            else:
                self.trie  # noqa: B018 (checks for repeated pieces)
                if merges is not None:
                    self._given_merges(merges)
            # word-by-word merging (and its cache) is exact when no piece can cross a word start
            self._words_ok = bool(kbpe.word_split_ok(pb, proto.piece_offsets, kinds, self.ws_suffix))
            # the hashed word loop: prefix whitespace (user-defined symbols, which the initial
            # split matches longest-first and freezes, cut the text: ``words_between_symbols``;
            # pieces with U+2581 after a tab or newline join words: ``build_joins``);
            # otherwise the merge-table path
            self.fast_words = lens_ok and (self._words_ok or joins_ok) and not self.ws_suffix
        self.special_tokens = {self.vocab.piece(i).decode("utf-8", "replace"): int(i)
                               for i in np.flatnonzero(kinds == CONTROL).tolist()}
        self.bos_id = self._reserved_id(t["bos_piece"])
        self.eos_id = self._reserved_id(t["eos_piece"])

    def _lattice(self, wide=None):
        """Unigram: (labelled units, ``idsc``, unknown score, V) of the lattice trie, which leaves
        UNUSED pieces out (sentencepiece skips them). ``wide`` forces uint64 units."""
        kinds = self.proto.types
        lat = np.flatnonzero((kinds == NORMAL) | (kinds == USER_DEFINED))
        if lat.size < self._matchable.size:
            lbc, lvalue = build_trie(self.proto.piece_bytes, self.proto.piece_offsets, lat)
        else:
            lbc, lvalue = self.trie
        units = labelled_units(lbc, lvalue, wide)
        self._lattice_bc, self._lattice_value, self._ML = lbc, lvalue, None
        # the automaton's records and the word cache need valid UTF-8 (``models.unigram.words.lattice_utf8_ok``)
        self._lattice_utf8 = bool(kwords.lattice_utf8_ok(self.proto.piece_bytes, self.proto.piece_offsets, lat,
                                                       self.N[1]))
        # the Viterbi's word cache: the largest |score| of a lattice edge, or -1 if words cannot
        # be cached (``models.unigram.words.word_cache_ok``; node numbers fit the cached paths)
        self.word_score_bound = -1.0
        if units.shape[0] < (1 << 25) and self._lattice_utf8 and kwords.word_cache_ok(
                self.proto.piece_bytes, self.proto.piece_offsets, lat):
            self.word_score_bound = float(max(np.abs(self.lscore[lat]).max(initial=0.0), abs(self.unk_score)))
        return units, kuni.pack_lattice_trie(lvalue, self.lscore), self.unk_score, np.int64(self.V)

    @property
    def automaton(self):
        """Unigram: the lattice's Aho-Corasick automaton (``models.unigram.automaton``), built on the
        first batch; empty arrays where it cannot serve (the pieces or the charsmap's pool are
        not valid UTF-8, or a limit of the module doc fails): the batch Viterbi then walks."""
        if self._automaton is None:
            units, idsc = self.M[0], self.M[1]
            if self._lattice_utf8:
                self._automaton = build_automaton(units, self._lattice_bc, idsc)
            else:
                self._automaton = (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32))
        return self._automaton

    @property
    def ML(self):
        """Unigram: ``M`` as sentencepiece's ``Lattice`` scores it (n-best, sampling, entropy)."""
        if self.lattice_lscore is self.lscore:
            return self.M
        if self._ML is None:
            self._ML = (self.M[0], kuni.pack_lattice_trie(self._lattice_value, self.lattice_lscore)) + self.M[2:]
        return self._ML

    @property
    def trie(self):
        """Double-array trie over the matchable pieces (built on first use for BPE models)."""
        if self._trie is None:
            pb, po = self.proto.piece_bytes, self.proto.piece_offsets
            trie = build_trie(pb, po, self._matchable)
            if np.count_nonzero(trie[1] >= 0) != self._matchable.size:
                raise ValueError("sentencepiece model: a piece is defined twice")
            self._trie = trie
        return self._trie

    @property
    def M(self):
        """Unigram: the lattice arrays. BPE: the merge-table path's arrays (every split of every
        piece in a hash map), built on first use; the hashed word loop (``P``) does not need it."""
        if self.model_type == "unigram":
            return self._M
        if self._M is None:
            pb, po, kinds, V = self.proto.piece_bytes, self.proto.piece_offsets, self.proto.types, self.V
            if self.__dict__.get("_given_splits") is not None:
                sl, sr = self._given_splits
            elif self.P is None:  # no hashed piece table: the merge table from the trie
                keys, vals, sl, sr = kbpe.build_merge_entries(pb, po, kinds, self._ranks, self.trie[0], self.trie[1])
                self.merges = IntMap.from_arrays(keys, vals)
            else:
                sl, sr = self.P[8], self.P[9]
            self._M = (self.trie[0], self.trie[1], self.merges.keys, self.merges.values, kinds, sl, sr,
                       np.int64(V))
            space = "\u2581".encode()
            sid = self.vocab.get(space, -1)
            if sid < 0 or kinds[sid] not in (NORMAL, UNUSED, USER_DEFINED):
                sid = V + 0x2581
            self._W = (self._words_ok, np.int64(sid), self.ws_suffix)
        return self._M

    def _given_merges(self, merges):
        """Use ``merges`` (see ``__init__``); a merge result is never UNUSED, so nothing is re-split."""
        if np.any(self.proto.types == UNUSED):
            raise ValueError("a BPE model with its own merges has no UNUSED pieces")
        self.merges = merges
        self._given_splits = (np.full(self.V, -1, np.int64), np.full(self.V, -1, np.int64))
        return self._given_splits

    @property
    def W(self):
        self.M  # noqa: B018
        return self._W

    _encode_ep = None  # compiled entry point of the plain ``encode`` (set on the first call)
    _encode_into = None  # Unigram: compiled ``encode_blob_into`` for short str (set on the first call)

    # ------------------------------------------------------------------ loading / saving
    @classmethod
    def load(cls, path):
        return cls(read_model_file(path))

    @classmethod
    def from_bytes(cls, data):
        return cls(read_model_proto(data))

    def serialized_model_proto(self):
        return write_model_proto(self.proto)

    def save_sentencepiece(self, path):
        from ..formats._atomic import write_atomic
        write_atomic(path, self.serialized_model_proto())

    def to_huggingface_json(self, add_bos=False, add_eos=False):
        """HF ``tokenizer.json`` dict (``nbtok.formats.spm_to_hf``); ``add_bos`` / ``add_eos`` add a
        ``TemplateProcessing`` post-processor."""
        from ..formats.spm_to_hf import spm_to_huggingface_json
        return spm_to_huggingface_json(self, add_bos=add_bos, add_eos=add_eos)

    def save_huggingface(self, path, add_bos=False, add_eos=False):
        from ..formats.huggingface import write_json
        write_json(self.to_huggingface_json(add_bos=add_bos, add_eos=add_eos), path)

    def state(self):
        return {"model_proto": self.serialized_model_proto()}

    @classmethod
    def from_state(cls, state):
        return cls.from_bytes(state["model_proto"])

    def __reduce__(self):
        # the cached compiled entry points are not picklable: rebuild from the model proto
        return (type(self).from_state, (self.state(),))

    # ------------------------------------------------------------------ helpers
    def _take_word_buffer(self, size):
        """A buffer of at least ``size`` int32 for the batch workers' word caches, taken from the
        model's free list (returned after the call), so its pages are not mapped afresh on every
        call; concurrent calls take different buffers."""
        free = self.__dict__.setdefault("_word_buffers", [])
        try:
            words = free.pop()
        except IndexError:
            words = np.empty(0, np.int32)
        return words if words.size >= size else np.empty(size, np.int32)

    def _reserved_id(self, piece):
        """The id of a trainer spec's bos / eos / pad piece, -1 unless it is a control piece
        (sentencepiece's ``bos_id()``)."""
        i = self.piece_to_id(piece)
        return i if self.vocab.kinds[i] == CONTROL else -1

    def _F(self, add_bos, add_eos):
        for asked, i, name in ((add_bos, self.bos_id, "BOS"), (add_eos, self.eos_id, "EOS")):
            if asked and i < 0:
                raise ValueError(f"{name} token is not defined as a control symbol in this model")
        Fs = self.__dict__.get("_Fs")
        if Fs is None:
            Fs = self._Fs = {(b, e): (np.int64(self.V), np.int64(self.unk_id), self.byte_fallback, self.byte_ids,
                                      np.int64(self.bos_id if b else -1), np.int64(self.eos_id if e else -1))
                             for b in (False, True) for e in (False, True)}
        return Fs[bool(add_bos), bool(add_eos)]

    def _call(self, dispatcher, *args):
        """``dispatcher(*args)`` through its compiled entry point, resolved once per model and
        kernel (``_jit.EntryPoints``: the text is always a read-only C-contiguous uint8 buffer
        from ``np.frombuffer``)."""
        eps = self.__dict__.get("_eps")
        if eps is None:
            eps = self._eps = EntryPoints()
            eps.enabled = _FAST_CALL
        return eps.call(dispatcher, *args)

    @staticmethod
    def _check_opts(opts):
        for k in opts:
            if k not in ("allowed_special", "disallowed_special"):
                raise TypeError(f"unexpected keyword argument {k!r}")

    # ------------------------------------------------------------------ encoding
    def encode(self, text, add_bos=False, add_eos=False, **opts):
        into = self._encode_into
        if into is not None and type(text) is str and not (add_bos or add_eos or opts):
            # Unigram, short str: the ids go into an array allocated here (sliced, not copied)
            b = text.encode()
            k = len(b)
            if k <= _INTO_MAX:
                out = _empty(k + 4, _I32)
                k = into(b, self._blob, out)
                if k >= 0:
                    return out[:k]
        if opts:
            self._check_opts(opts)
        buf = _frombuffer(text.encode() if type(text) is str else _as_bytes(text), _U8)
        if not (add_bos or add_eos):
            ep = self._encode_ep
            if ep is not None:
                return ep(buf, *self._encode_args)
        F = self._F(add_bos, add_eos)
        if self.model_type in ("char", "word"):
            return self._call(kcw.encode_one, buf, self.N, self.D, F)
        if self.model_type == "unigram":
            if add_bos or add_eos or self.M[0].dtype != np.uint32:  # the blob holds uint32 units
                return self._call(kuni.encode_one, buf, self.N, self.M, F)
            if self.__dict__.get("_blob") is None:
                self._blob = kuni.pack_blob(self.N, self.M, F)
            res = self._call(kuni.encode_one_blob, buf, self._blob)
            self._encode_args = (self._blob,)
            self._encode_ep = self._eps.get(kuni.encode_one_blob)
            if _FAST_CALL and self._encode_into is None:
                probe = np.empty(8, np.int32)
                kuni.encode_blob_into(b"", self._blob, probe)
                self._encode_into = entry_point(kuni.encode_blob_into, (b"", self._blob, probe))
            return res
        if self.fast_words:
            kern = kwbpe.encode_one_words_ud if self.ud_trie[0].size else kwbpe.encode_one_words
            res = self._call(kern, buf, self.N, self.P, F)
            args = (self.N, self.P, F)
        else:
            res = self._call(kbpe.encode_one, buf, self.N, self.M, F, 0.0, self.W)
            args, kern = (self.N, self.M, F, 0.0, self.W), kbpe.encode_one
        if not (add_bos or add_eos):
            self._encode_args = args
            self._encode_ep = self._eps.get(kern)
        return res

    def encode_batch_ragged(self, texts, add_bos=False, add_eos=False, num_threads=None, **opts):
        """(ids int32[total], offsets int64[n+1]) for a list of texts: one parallel kernel call.

        ``num_threads`` (default: Numba's current setting) bounds the threads of this call."""
        self._check_opts(opts)
        if isinstance(texts, (str, bytes)):
            raise TypeError("encode_batch expects a list of texts, not a single text")
        if not isinstance(texts, (list, tuple)):
            texts = list(texts)
        buf, offsets, _ = pack_utf8(texts, _as_bytes)
        with thread_limit(num_threads):
            return self.encode_packed(buf, offsets, texts, add_bos, add_eos)

    def encode_packed(self, buf, offsets, texts, add_bos=False, add_eos=False):
        """``encode_batch_ragged`` of texts already packed (``text.pack_utf8``: ``buf`` their
        UTF-8 bytes end to end, ``offsets`` int64[n + 1]); ``texts`` are the texts themselves."""
        n = len(texts)
        if not n:
            return np.zeros(0, np.int32), np.zeros(1, np.int64)
        F = self._F(add_bos, add_eos)
        L = BatchLayout(offsets, buf.shape[0], numba.get_num_threads())
        workers, bounds, res = L.workers, L.bounds, (L.out_offsets, L.out, L.counts, L.used)
        if self.model_type == "unigram":
            slots = kwords.word_slots(buf.shape[0] // workers) if self.word_score_bound >= 0 else 0
            size = kwords.word_cache_size(slots)
            words = self._take_word_buffer(workers * size)
            try:
                kuni.encode_batch(buf, offsets, res[0], self.N, self.M, F, self.automaton, bounds, workers, res[1],
                                  res[2], res[3], words, size, self.word_score_bound)
            finally:
                self._word_buffers.append(words)
        elif self.model_type in ("char", "word"):
            kcw.encode_batch(buf, offsets, self.N, self.D, F, (bounds, workers), res)
        elif self.fast_words:
            kwbpe.encode_batch_words(buf, offsets, res[0], self.N, self.P, F, bounds, workers, *res[1:])
        else:
            kbpe.encode_batch(buf, offsets, res[0], self.N, self.M, F, bounds, workers, *res[1:], self.W)
        return L.ragged(lambda d: self.encode(texts[d], add_bos, add_eos))

    def _symbols(self, text, dropout=0.0):
        buf = np.frombuffer(_as_bytes(text), np.uint8)
        if self.model_type in ("char", "word"):
            return kcw.symbols_one(buf, self.N, self.D)
        if self.model_type == "unigram":
            return kuni.symbols_one(buf, self.N, self.M)
        if self.fast_words and not dropout > 0.0:
            return kwbpe.symbols_one_words(buf, self.N, self.P)
        return kbpe.symbols_one(buf, self.N, self.M, float(dropout), self.W)

    def _pieces_from_symbols(self, syms):
        V = self.V
        out = []
        prev_unk = False
        for s in syms.tolist():
            if s < V:
                out.append(self.id_to_piece(s))
                prev_unk = False
                continue
            cp = s - V
            ch = bytes([cp - ksym.INVALID_BASE]) if cp >= ksym.INVALID_BASE else chr(cp).encode("utf-8", "surrogatepass")
            if self.byte_fallback:
                out.extend(f"<0x{b:02X}>" for b in ch)
            elif prev_unk:
                out[-1] += ch.decode("utf-8", "replace")
            else:
                out.append(ch.decode("utf-8", "replace"))
                prev_unk = True
        return out

    def encode_as_pieces(self, text):
        syms, _ = self._symbols(text)
        return self._pieces_from_symbols(syms)

    # ------------------------------------------------------------------ decoding
    def id_to_piece(self, i):
        i = int(i)
        if not 0 <= i < self.V:
            raise IndexError(f"piece id {i} is out of range [0, {self.V})")
        return self.vocab.piece(i).decode("utf-8", "replace")

    def piece_to_id(self, piece):
        if isinstance(piece, str):
            piece = piece.encode("utf-8")
        return self.vocab.get(bytes(piece), self.unk_id)

    def get_score(self, i):
        return float(self.vocab.scores[i])

    @property
    def vocab_size(self):
        return self.V

    def __len__(self):
        return self.V

    # ------------------------------------------------------------------ offsets, n-best sampling