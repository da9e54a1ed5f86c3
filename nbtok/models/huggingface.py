"""``HuggingFaceModel``: a ``tokenizer.json`` pipeline (HF ``tokenizers`` semantics).

It composes the stages of ``nbtok.pipeline`` (one module each: ``normalizers``,
``pre_tokenizers``, ``post_processors``, ``decoders``; added tokens and the file's lengths) around
the model step (BPE / Unigram / WordPiece / WordLevel kernels in ``models.text_units`` and
``models.wordpiece``). A batch goes through the stages as flat arrays (``pipeline.units.Batch``;
kernels in ``pipeline.unit_kernels``): added tokens (leftmost-longest, raw then normalized),
normalizers, pre-tokenizers, the model, then the post-processor. Character offsets into the
original text are carried by per-char alignments exactly as HF's ``NormalizedString`` does.
A file whose stages are one of nbtok's fused models runs that model instead (``hf_fused``).

Per-text Python work happens only where HF semantics need a Unicode algorithm nbtok has no kernel
for: NFC/NFKC/NFD/NFKD on the texts that are not already normalized (``unicodedata``), grapheme
clusters for ``Precompiled`` on texts that contain combining / joining characters (``regex``
``\\X``), and ``Replace`` / ``Split`` regexes that nbtok's scanner does not recognise (``regex``).
"""
import json

import numpy as np

from ..formats.huggingface import serde_f64
from . import text_units as KM
from ..pipeline import unit_kernels as K
from . import wordpiece as KW
from ..kernels.hashmap import IntMap
from ..kernels.trie import build_trie
from ..pipeline.added_tokens import added_token_trie, resolve_ids
from ..decoders.components import build_decoder
from ..pipeline.lengths import (STAGE_CHARS, concat_ragged, file_lengths, merge_ragged, padding_params,
                               run_bounds, truncation_params)
from ..normalizers.components import build_normalizer
from ..post_processors.components import Post, trim_tables
from ..pre_tokenizers.components import build_pre_tokenizer
from ..pipeline.unicode import hf_class_table
from ..pipeline.units import Batch, int_id, run_chunks, utf32
from ..vocab import CONTROL, NORMAL, UNUSED, Vocab, check_dense_ids



# ---------------------------------------------------------------------------------------------
# the model

class HuggingFaceModel:
    """A ``tokenizer.json`` tokenizer; see the module docstring."""

    model_type = "huggingface"
    accepts_add_special_tokens = True

    def __init__(self, config):
        if not isinstance(config, dict):
            raise ValueError("tokenizer.json must hold a JSON object")
        self.config = config
        model = config.get("model")
        if not isinstance(model, dict):
            raise ValueError("tokenizer.json has no 'model' object")
        self.kind = model.get("type")
        if self.kind is None:
            # older files omit the type: infer it
            if "merges" in model:
                self.kind = "BPE"
            elif isinstance(model.get("vocab"), list):
                self.kind = "Unigram"
            elif "max_input_chars_per_word" in model:
                self.kind = "WordPiece"
            else:
                self.kind = "WordLevel"
        if self.kind not in ("BPE", "Unigram", "WordPiece", "WordLevel"):
            raise NotImplementedError(f"tokenizer.json model {self.kind!r} is not supported by nbtok")
        self._build_model(model)
        self._build_added(config.get("added_tokens") or [])
        self.normalizer = build_normalizer(config.get("normalizer"))
        self.pre_tokenizer = build_pre_tokenizer(config.get("pre_tokenizer"))
        self.decoder = build_decoder(config.get("decoder"))
        self.post = Post(config.get("post_processor"), None)
        for i in np.concatenate([self.post.prefix_ids, self.post.suffix_ids]).tolist():
            if i >= len(self.tokens):
                raise ValueError(f"post-processor special token id {i} is outside the vocabulary")
        self._build_token_tables()
        # decoding shows a normalized added token as the normalizer wrote it (HF's normalized cache)
        self._dec_tokens = list(self.tokens)
        for a in self.added if self.normalizer is not None else ():
            if a["normalized"]:
                self._dec_tokens[a["id"]] = self.normalizer.normalize_str(a["content"])
        self._dec_tokens_skip = [None if i in self.special_ids else t for i, t in enumerate(self._dec_tokens)]
        pad = config.get("padding")
        self.pad_id = self.pad_token = None
        if isinstance(pad, dict):
            self.pad_id = pad.get("pad_id")
            self.pad_token = pad.get("pad_token")
        self.truncation = truncation_params(config.get("truncation"))
        self.padding = padding_params(config.get("padding"))
        self._build_added_tries()
        from .hf_fused import fuse
        self.fused = fuse(self)

    # ------------------------------------------------------------------ construction
    def _build_model(self, m):
        self.model_cfg = m
        if self.kind == "Unigram":
            vocab = m.get("vocab")
            if not isinstance(vocab, list):
                raise ValueError("Unigram: 'vocab' must be a list of [piece, score]")
            pieces, scores = [], []
            for i, e in enumerate(vocab):
                if not (isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)
                        and isinstance(e[1], (int, float)) and not isinstance(e[1], bool)):
                    raise ValueError(f"Unigram: vocab entry {i} must be [piece, score], got {e!r}")
                pieces.append(e[0])
                scores.append(serde_f64(e[1]))
            if not pieces:
                raise ValueError("Unigram: empty vocabulary")
            unk = m.get("unk_id")
            if unk is not None:
                unk = int_id(unk, "Unigram unk_id")
                if unk >= len(pieces):
                    raise ValueError("Unigram: unk_id is outside the vocabulary")
            self.unk_id = -1 if unk is None else unk
            self.byte_fallback = bool(m.get("byte_fallback", False))
            self.model_tokens = pieces
            self.scores = np.array(scores, np.float64)
            if not np.isfinite(self.scores).all():
                raise ValueError("Unigram: scores must be finite")
            self.token_to_id = {}
            for i, p in enumerate(pieces):
                self.token_to_id[p] = i
        else:
            vocab = m.get("vocab")
            if not isinstance(vocab, dict):
                raise ValueError(f"{self.kind}: 'vocab' must be an object token -> id")
            n = 0
            for tok, i in vocab.items():
                int_id(i, f"{self.kind} vocab")
                n = max(n, i + 1)
            check_dense_ids(n - 1, len(vocab), f"{self.kind} vocab")
            pieces = [None] * n
            for tok, i in vocab.items():
                if pieces[i] is not None:
                    raise ValueError(f"{self.kind}: id {i} is given to two tokens")
                pieces[i] = tok
            self.model_tokens = pieces
            self.token_to_id = dict(vocab)
            unk = m.get("unk_token")
            if unk is not None and not isinstance(unk, str):
                raise ValueError(f"{self.kind}: unk_token must be a string")
            self.unk_token = unk
            self.unk_id = vocab.get(unk, -1) if unk is not None else -1
        data = [(p or "").encode("utf-8") for p in self.model_tokens]
        self.model_vocab = Vocab(data)
        mv = self.model_vocab
        self._V = (mv.map.slot_ids, mv.map.slot_hashes, mv.piece_bytes, mv.piece_offsets)
        self.byte_tok = np.full(256, -1, np.int64)
        for b in range(256):
            self.byte_tok[b] = self.token_to_id.get(f"<0x{b:02X}>", -1)
        if self.kind == "BPE":
            self._build_bpe(m)
        elif self.kind == "Unigram":
            keys = np.nonzero(np.diff(mv.piece_offsets) > 0)[0]
            bc, value = build_trie(mv.piece_bytes, mv.piece_offsets, keys)
            params = np.array([self.unk_id, 1, int(self.byte_fallback)], np.int64)
            unk_score = np.array([self.scores.min() - 10.0], np.float64)
            self._G = (bc, value, self.scores, params, unk_score, self.byte_tok)
        elif self.kind == "WordPiece":
            if self.unk_id < 0:
                raise ValueError("WordPiece: unk_token must be in the vocabulary")
            prefix = m.get("continuing_subword_prefix", "##")
            if not isinstance(prefix, str):
                raise ValueError("WordPiece: continuing_subword_prefix must be a string")
            self.wp_prefix = np.frombuffer(prefix.encode("utf-8"), np.uint8).copy()
            mc = m.get("max_input_chars_per_word", 100)
            self.wp_max = int_id(mc, "WordPiece max_input_chars_per_word")

    def _build_bpe(self, m):
        if m.get("dropout") not in (None, 0, 0.0):
            raise NotImplementedError("BPE dropout in tokenizer.json is not supported by nbtok")
        prefix = m.get("continuing_subword_prefix")
        suffix = m.get("end_of_word_suffix")
        for name, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"BPE: {name} must be a string or null")
        self.bpe_prefix, self.bpe_suffix = prefix or None, suffix or None
        self.fuse_unk = bool(m.get("fuse_unk", False))
        self.byte_fallback = bool(m.get("byte_fallback", False))
        self.ignore_merges = bool(m.get("ignore_merges", False))
        vocab = self.token_to_id
        # single-char symbols (with the prefix / suffix variants)
        ck, cv = [], []
        pre, suf = self.bpe_prefix or "", self.bpe_suffix or ""
        for tok, i in vocab.items():
            variants = [(0, tok)]
            if pre and tok.startswith(pre):
                variants.append((1, tok[len(pre):]))
            if suf and tok.endswith(suf):
                variants.append((2, tok[:len(tok) - len(suf)]))
            if pre and suf and tok.startswith(pre) and tok.endswith(suf) and len(tok) >= len(pre) + len(suf):
                variants.append((3, tok[len(pre):len(tok) - len(suf)]))
            for flags, core in variants:
                if len(core) == 1:
                    ck.append(ord(core) | (flags << 32))
                    cv.append(i)
        cmap = IntMap.from_arrays(np.array(ck, np.int64), np.array(cv, np.int64))
        merges = m.get("merges")
        if merges is None:
            merges = []
        if not isinstance(merges, list):
            raise ValueError("BPE: 'merges' must be a list")
        plen = len(pre.encode("utf-8")) if pre else 0
        keys = np.empty(len(merges), np.int64)
        vals = np.empty(len(merges), np.int64)
        self.merges = []
        for r, mg in enumerate(merges):
            if isinstance(mg, str):
                parts = mg.split(" ")
                if len(parts) != 2:
                    raise ValueError(f"BPE: merge {r} must be 'left right', got {mg!r}")
                a, b = parts
            elif isinstance(mg, list) and len(mg) == 2 and all(isinstance(x, str) for x in mg):
                a, b = mg
            else:
                raise ValueError(f"BPE: merge {r} must be 'left right' or [left, right], got {mg!r}")
            ia, ib = vocab.get(a), vocab.get(b)
            bb = b.encode("utf-8")[plen:].decode("utf-8", errors="strict") if plen else b
            im = vocab.get(a + bb)
            if ia is None or ib is None or im is None:
                missing = a if ia is None else b if ib is None else a + bb
                raise ValueError(f"BPE: merge {r} ({a!r} {b!r}): {missing!r} is not in the vocabulary")
            keys[r] = (ia << 32) | ib
            vals[r] = (r << 32) | im
            self.merges.append((a, b))
        self.merge_ids = (keys, vals)   # (left << 32 | right, rank << 32 | merged) in rank order
        # a repeated pair keeps its LAST rank (HF collects the merges into a HashMap); the map is
        # filled in rank order, so the common merges sit in their home slots (one probe): filled
        # rarest first, Phi-3's BPE ran 12% slower
        _, first_of_reversed = np.unique(keys[::-1], return_index=True)
        last = np.sort(len(keys) - 1 - first_of_reversed)
        mm = IntMap.from_arrays(keys[last], vals[last])
        params = np.array([self.unk_id, int(self.fuse_unk), int(self.byte_fallback), int(self.ignore_merges),
                           int(bool(pre)), int(bool(suf))], np.int64)
        self._B = (cmap.keys, cmap.values, self.byte_tok, params,
                   np.frombuffer(pre.encode("utf-8"), np.uint8).copy(),
                   np.frombuffer(suf.encode("utf-8"), np.uint8).copy(), mm.keys, mm.values)
        self._bpe_per_char = 4 + len(pre.encode()) + len(suf.encode())
        self._keep = (cmap, mm)

    def _build_added(self, added):
        if not isinstance(added, list):
            raise ValueError("'added_tokens' must be a list")
        model_size = len(self.token_to_id) if self.kind != "Unigram" else len(self.model_tokens)
        by_id = resolve_ids(added, self.token_to_id, model_size)
        self.added = [dict(t, id=i) for i, t in by_id.items()]
        n = max([len(self.model_tokens)] + [a["id"] + 1 for a in self.added])
        tokens = list(self.model_tokens) + [None] * (n - len(self.model_tokens))
        for a in self.added:
            tokens[a["id"]] = a["content"]
        self.tokens = tokens
        self.special_ids = {a["id"] for a in self.added if a["special"]}
        self.special_tokens = {a["content"]: a["id"] for a in self.added if a["special"]}
        pieces = [(t or "").encode("utf-8") for t in tokens]
        kinds = np.array([UNUSED if t is None else (CONTROL if i in self.special_ids else NORMAL)
                          for i, t in enumerate(tokens)], np.int8)
        self.vocab = Vocab(pieces, kinds=kinds)
        self._piece_to_id = {}
        for i, t in enumerate(self.model_tokens):
            if t is not None:
                self._piece_to_id.setdefault(t, i)
        for a in self.added:
            self._piece_to_id[a["content"]] = a["id"]

    def _build_added_tries(self):
        self._tries = {}
        for normalized in (False, True):
            pats = []
            for a in self.added:
                if a["normalized"] != normalized:
                    continue
                content = a["content"]
                if normalized and self.normalizer is not None:
                    content = self.normalizer.normalize_str(content)
                if content:
                    pats.append((content, a))
            self._tries[normalized] = added_token_trie(pats) if pats else None

    def _build_token_tables(self):
        self._lead, self._trail = trim_tables(self.tokens) if self.post.trim else (
            np.zeros(len(self.tokens), np.int64), np.zeros(len(self.tokens), np.int64))

    # ------------------------------------------------------------------ state
    def state(self):
        return {"json": json.dumps(self.config, ensure_ascii=False)}

    @classmethod
    def from_state(cls, st):
        try:
            cfg = json.loads(st["json"])
        except (TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"malformed HuggingFaceModel state: {e}") from None
        return cls(cfg)

    def __getstate__(self):
        return self.state()

    def __setstate__(self, st):
        self.__dict__.update(self.from_state(st).__dict__)

    def save_huggingface(self, path):
        from ..formats.huggingface import save_huggingface
        save_huggingface(self, path)

    def to_json(self):
        """The configuration as loaded; ``truncation`` / ``padding`` null once set to None here."""
        cfg = dict(self.config)
        for key in ("truncation", "padding"):
            if getattr(self, key) is None:
                cfg[key] = None
        return cfg

    # ------------------------------------------------------------------ encoding
    def _run(self, texts, add_special_tokens=True, split_special_tokens=False, num_threads=None,
             offsets=True):
        """``(ids, starts, ends, doc_offsets)`` of a batch; ``starts``/``ends`` only with ``offsets``
        (else None). The model step runs fused (``hf_fused``) for the texts it can, stage by
        stage for the others."""
        texts = texts if type(texts) is list else list(texts)
        if set(map(type, texts)) - {str}:   # (str subclasses are fine)
            bad = next((t for t in texts if not isinstance(t, str)), None)
            if bad is not None:
                raise TypeError(f"expected str, got {type(bad).__name__}")
        fused = None if self.fused is None else self.fused.encode_batch(
            texts, split_special_tokens, num_threads, offsets)
        if fused is None:
            res = self._run_stages(texts, split_special_tokens, num_threads)
        elif fused[0] is None:
            res = fused[1]
        else:
            rows = set(fused[0])
            rest = [k for k in range(len(texts)) if k not in rows]
            res = fused[1]
            if rest:
                res = merge_ragged(len(texts), (fused[0], res),
                                    (rest, self._run_stages([texts[k] for k in rest], split_special_tokens, num_threads)),
                                    offsets)
        ids, st, en, doc_off = self._post_process(*res, add_special_tokens)
        if self.truncation is not None or self.padding is not None:
            lead, trail = (self.post.prefix_ids.size, self.post.suffix_ids.size) if add_special_tokens else (0, 0)
            ids, st, en, doc_off = file_lengths(self.truncation, self.padding, lead, trail, ids, st, en, doc_off)
        return ids, st, en, doc_off

    def _run_stages(self, texts, split_special_tokens, num_threads):
        """``(ids, starts, ends, doc_offsets, lead, trail)`` before the post-processor, stage by
        stage, in runs of texts of about ``STAGE_CHARS`` characters: the stages hold about 100
        bytes a character (code points, alignments, units), so a large batch's memory is that of
        one run, not of the whole batch."""
        bounds = run_bounds(texts, STAGE_CHARS)
        if len(bounds) == 2:
            return self._stages(texts, split_special_tokens, num_threads)
        return concat_ragged([self._stages(texts[a:z], split_special_tokens, num_threads)
                              for a, z in zip(bounds[:-1], bounds[1:])])

    def _stages(self, texts, split_special_tokens, num_threads):
        b = self._pre_model(texts, split_special_tokens, num_threads)
        t_ids, t_s, t_e, t_off = self._model(b, num_threads)
        ids, st, en, doc_off, lead, trail = K.assemble(b.U, t_ids, t_s, t_e, t_off, b.a_s, b.a_e,
                                                      b.n_docs, b.doc_start)
        if ids.size and ids.min() < 0:
            raise ValueError("the text needs the unknown token, but the model defines none")
        return ids, st, en, doc_off, lead, trail

    def _pre_model(self, texts, split_special_tokens, num_threads):
        """The batch state after added tokens, normalizer and pre-tokenizer: the model's input."""
        b = Batch()
        b.threads = num_threads
        lengths = np.fromiter(map(len, texts), np.int64, len(texts))
        joined = "".join(texts)
        raw = utf32(joined)
        b.cps = np.frombuffer(raw, np.int32)
        if len(b.cps) != lengths.sum():  # surrogates were replaced: lengths are unchanged
            raise ValueError("internal error: code point count mismatch")
        n = len(b.cps)
        b.n_docs = len(texts)
        b.doc_start = np.zeros(len(texts) + 1, np.int64)
        np.cumsum(lengths, out=b.doc_start[1:])
        b.a_s = np.arange(n, dtype=np.int64)
        b.a_e = b.a_s + 1
        U = np.zeros((len(texts), K.NCOL), np.int64)
        U[:, K.DOC] = np.arange(len(texts))
        U[:, K.TOK] = -1
        U[:, K.START] = b.doc_start[:-1]
        U[:, K.END] = b.doc_start[1:]
        b.U = U
        cls = None
        tr = self._tries[False]
        if tr is not None:
            cls = hf_class_table() if self._needs_cls() else _ZERO_CLS
            b.U = K.added_split(b.U, b.cps, b.a_s, b.a_e, tr[0], tr[1], tr[2], tr[3], tr[4],
                                bool(split_special_tokens), cls)
        if self.normalizer is not None:
            self.normalizer.apply(b)
        tr = self._tries[True]
        if tr is not None:
            cls = hf_class_table() if self._needs_cls() else _ZERO_CLS
            b.U = K.added_split(b.U, b.cps, b.a_s, b.a_e, tr[0], tr[1], tr[2], tr[3], tr[4],
                                bool(split_special_tokens), cls)
        if self.pre_tokenizer is not None:
            self.pre_tokenizer.apply(b)
        return b

    def _needs_cls(self):
        """Whether finding added tokens needs the character classes: for lstrip / rstrip /
        single_word, and for the whitespace at an added token's ends that ByteLevel trims."""
        return self.post.trim or any(a["lstrip"] or a["rstrip"] or a["single_word"] for a in self.added)

    def _model(self, b, num_threads):
        # tokens a unit may give beyond one per UTF-8 byte: BPE's byte fallback spells a
        # character with the prefix's and suffix's bytes too
        per_char = self._bpe_per_char if self.kind == "BPE" else 4  # the BPE kernel's scratch
        slot = K.unit_slots(b.U, b.cps, per_char - 4, 1)
        total = max(int(slot[-1]), 1)
        out_ids = np.empty(total, np.int32)
        out_s = np.empty(total, np.int64)
        out_e = np.empty(total, np.int64)
        counts = np.zeros(len(b.U), np.int64)
        outs = (slot, out_ids, out_s, out_e, counts)
        if self.kind == "BPE":
            fn, args = KM.bpe_range, (b.cps, self._V, self._B, slot, per_char, out_ids, out_s, out_e, counts)
        elif self.kind == "Unigram":
            fn, args = KM.unigram_range, (b.cps, self._V, self._G) + outs
        elif self.kind == "WordPiece":
            fn, args = KW.wordpiece_range, (b.cps, self._V, self.wp_prefix, self.unk_id, self.wp_max) + outs
        else:
            fn, args = KM.wordlevel_range, (b.cps, self._V, self.unk_id) + outs
        run_chunks(fn, b.U, args, num_threads)
        if counts.size and counts.min() < 0:
            raise ValueError("the text needs the unknown token, but the model defines none")
        ids, ts, te, t_off = K.compact_tokens(b.U, out_ids, out_s, out_e, counts, slot, 0)
        return ids, ts, te, t_off

    def _post_process(self, ids, st, en, doc_off, lead, trail, add_special_tokens):
        post = self.post
        if post.trim and ids.size and st is not None:
            lt = np.where(lead >= 0, lead, self._lead[ids])
            tt = np.where(trail >= 0, trail, self._trail[ids])
            pos_in_doc = np.arange(ids.size) - np.repeat(doc_off[:-1], np.diff(doc_off))
            is_first = (pos_in_doc == 0) | (st == 0)
            if post.trim_prefix_space:
                lt = np.where(is_first & (lt == 1), 0, lt)
            st2 = np.where(lt > 0, np.minimum(st + lt, en), st)
            en2 = np.where((tt > 0) & (en >= tt), np.maximum(en - tt, st2), en)
            st, en = st2, en2
        if add_special_tokens and (post.prefix_ids.size or post.suffix_ids.size):
            ids, st, en, doc_off = post.wrap(ids, st, en, doc_off)
        return ids, st, en, doc_off

    def encode_batch_with_offsets(self, texts, add_special_tokens=True, **opts):
        """``(ids int32[], starts int64[], ends int64[], doc_offsets int64[n + 1])`` for a batch."""
        return self._run(texts, add_special_tokens, **self._opts(opts))

    def encode_batch_offsets(self, texts, add_special_tokens=True, **opts):
        """Tokenizer protocol: ``(ids, doc_offsets, starts, ends)``."""
        ids, st, en, off = self._run(texts, add_special_tokens, **self._opts(opts))
        return ids, off, st, en

    def encode_with_offsets(self, text, add_special_tokens=True, **opts):
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        ids, st, en, _ = self._run([text], add_special_tokens, **self._opts(opts))
        return ids, st, en

    def encode(self, text, add_special_tokens=True, **opts):
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        opts = self._opts(opts)
        if self.fused is not None and "num_threads" not in opts and self.truncation is None and self.padding is None:
            ids = self.fused.encode(text, opts.get("split_special_tokens", False))
            if ids is not None:
                post = self.post
                if add_special_tokens and (post.prefix_ids.size or post.suffix_ids.size):
                    ids = np.concatenate([post.prefix_ids, ids, post.suffix_ids])
                return ids
        return self._run([text], add_special_tokens, offsets=False, **opts)[0]

    def encode_ordinary(self, text):
        return self.encode(text, add_special_tokens=False, split_special_tokens=True)

    def encode_batch_ragged(self, texts, add_special_tokens=True, **opts):
        ids, _, _, off = self._run(texts, add_special_tokens, offsets=False, **self._opts(opts))
        return ids, off

    @staticmethod
    def _opts(opts):
        out = {}
        allowed = opts.pop("allowed_special", None)
        disallowed = opts.pop("disallowed_special", None)
        if allowed is not None and disallowed is not None and not allowed and not disallowed:
            out["split_special_tokens"] = True   # Tokenizer.encode_ordinary
        if "split_special_tokens" in opts:
            out["split_special_tokens"] = bool(opts.pop("split_special_tokens"))
        if "num_threads" in opts:
            out["num_threads"] = opts.pop("num_threads")
        if opts:
            raise TypeError(f"unexpected encode options: {sorted(opts)}")
        return out

    def encode_as_pieces(self, text, add_special_tokens=True):
        """The tokens as strings, as HF's ``Encoding.tokens``: a Unigram model's unknown token
        is the (normalized) text it covers, not the unknown piece."""
        if self.kind != "Unigram" or self.unk_id < 0 or self.truncation or self.padding:
            return [self.tokens[i] for i in self.encode(text, add_special_tokens).tolist()]
        b = self._pre_model([text], False, None)
        t_ids, t_s, t_e, t_off = self._model(b, None)
        pieces = []
        for u in range(len(b.U)):
            if b.U[u, K.TOK] >= 0:
                pieces.append(self.tokens[b.U[u, K.TOK]])
                continue
            for t in range(t_off[u], t_off[u + 1]):
                i = int(t_ids[t])
                pieces.append(b.cps[t_s[t]:t_e[t]].tobytes().decode("utf-32-le") if i == self.unk_id else self.tokens[i])
        if add_special_tokens:
            pieces = [self.tokens[i] for i in self.post.prefix_ids.tolist()] + pieces + \
                [self.tokens[i] for i in self.post.suffix_ids.tolist()]
        return pieces

    # ------------------------------------------------------------------ decoding
    def _check_ids(self, ids):
        if isinstance(ids, list):
            # a non-integer id makes the token-table lookup raise TypeError
            if ids:
                lo, hi = min(ids), max(ids)
                if isinstance(lo, (float, str)) or isinstance(hi, (float, str)):
                    raise TypeError("token ids must be integers")
                if lo < 0 or hi >= len(self.tokens):
                    raise ValueError(f"token id {lo if lo < 0 else hi} is out of range [0, {len(self.tokens)})")
            return ids
        ids = np.asarray(ids)
        if ids.size == 0:
            return []
        if ids.dtype.kind not in "iu":
            raise TypeError(f"token ids must be integers, not {ids.dtype}")
        lst = ids.ravel().tolist()
        lo, hi = min(lst), max(lst)
        if lo < 0 or hi >= len(self.tokens):
            raise ValueError(f"token id {lo if lo < 0 else hi} is out of range [0, {len(self.tokens)})")
        return lst

    def decode(self, ids, skip_special_tokens=True):
        return self._decode_list(self._check_ids(ids), skip_special_tokens)

    def decode_batch(self, batch, skip_special_tokens=True):
        return [self._decode_list(self._check_ids(ids), skip_special_tokens) for ids in batch]

    def _decode_list(self, ids, skip_special_tokens):
        table = self._dec_tokens_skip if skip_special_tokens else self._dec_tokens
        tokens = [t for t in map(table.__getitem__, ids) if t is not None]
        if self.decoder is None:
            return " ".join(tokens)
        return "".join(self.decoder(tokens))

    def decode_bytes(self, ids, skip_special_tokens=True):
        return self.decode(ids, skip_special_tokens).encode("utf-8", errors="surrogatepass")

    # ------------------------------------------------------------------ vocabulary
    def id_to_piece(self, i):
        i = int(i)
        if not 0 <= i < len(self.tokens) or self.tokens[i] is None:
            raise IndexError(f"id {i} is not in the vocabulary")
        return self.tokens[i]

    def piece_to_id(self, piece):
        if not isinstance(piece, str):
            raise TypeError("piece must be a str")
        return self._piece_to_id.get(piece, -1)

    def get_vocab(self):
        return {t: i for i, t in enumerate(self.tokens) if t is not None}


_ZERO_CLS = np.zeros(0x110000, np.uint8)
