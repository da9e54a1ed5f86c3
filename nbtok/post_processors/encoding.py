"""``Encoding``: one encoded input (a sequence or a pair) with every per-token field HF
``tokenizers`` gives, and the operations its post-processing runs on it: ``merge`` (with the
overflowing parts combined as HF does), ``truncate`` (with ``stride`` and the overflowing
windows), ``pad``, and the word / char / token / sequence lookups.

It is plain Python data: ``nbtok.pipeline.encodings`` fills it from the pipeline's arrays, and
``nbtok.post_processors.pairs`` combines sequences through the file's post-processor.
``nbtok.compat.tokenizers.Encoding`` is this class.

Examples:
    >>> e = Encoding([5, 6, 7], tokens=["a", "b", "c"], offsets=[(0, 1), (1, 2), (2, 3)])
    >>> e.truncate(2, stride=1)
    >>> e.ids, e.overflowing[0].ids
    ([5, 6], [6, 7])
"""
import warnings

_FIELDS = ("ids", "type_ids", "tokens", "_words", "offsets", "special_tokens_mask", "attention_mask")


class Encoding:
    """The result of encoding one input; see the module docstring."""

    __slots__ = _FIELDS + ("_overflowing", "_ranges")

    def __init__(self, ids=(), type_ids=None, tokens=None, words=None, offsets=None,
                 special_tokens_mask=None, attention_mask=None, overflowing=None, sequence_ranges=None):
        n = len(ids)
        self.ids = list(ids)
        self.type_ids = list(type_ids) if type_ids is not None else [0] * n
        self.tokens = list(tokens) if tokens is not None else [""] * n
        self._words = list(words) if words is not None else [None] * n
        self.offsets = list(offsets) if offsets is not None else [(0, 0)] * n
        self.special_tokens_mask = list(special_tokens_mask) if special_tokens_mask is not None else [0] * n
        self.attention_mask = list(attention_mask) if attention_mask is not None else [1] * n
        for f in _FIELDS:
            if len(getattr(self, f)) != n:
                raise ValueError(f"Encoding: '{f}' has {len(getattr(self, f))} entries for {n} ids")
        self._overflowing = list(overflowing or [])
        self._ranges = dict(sequence_ranges or {})   # sequence id -> (start, stop)

    @classmethod
    def of_sequence(cls, ids, type_id, tokens, words, offsets):
        """An encoding of one sequence from lists of equal length that it takes as they are (no
        copies, no checks: ``pipeline.encodings`` builds them for it)."""
        e = cls.__new__(cls)
        n = len(ids)
        e.ids, e.tokens, e._words, e.offsets = ids, tokens, words, offsets
        e.type_ids = [type_id] * n
        e.special_tokens_mask = [0] * n
        e.attention_mask = [1] * n
        e._overflowing = []
        e._ranges = {}
        return e

    # ------------------------------------------------------------------ fields
    @property
    def word_ids(self):
        return list(self._words)

    @property
    def words(self):
        warnings.warn("The `.words` attribute is deprecated, use `.word_ids` instead.",
                      DeprecationWarning, stacklevel=2)
        return list(self._words)

    @property
    def overflowing(self):
        return list(self._overflowing)

    @overflowing.setter
    def overflowing(self, value):
        self._overflowing = list(value)

    @property
    def n_sequences(self):
        return len(self._ranges) if self._ranges else 1

    @property
    def sequence_ids(self):
        out = [None] * len(self.ids)
        for s in range(self.n_sequences):
            a, b = self._range(s)
            out[a:b] = [s] * (b - a)
        return out

    def __len__(self):
        return len(self.ids)

    def __repr__(self):
        return (f"Encoding(num_tokens={len(self.ids)}, attributes=[ids, type_ids, tokens, offsets, "
                "attention_mask, special_tokens_mask, overflowing])")

    def __eq__(self, other):
        return isinstance(other, Encoding) and self.__getstate__() == other.__getstate__()

    __hash__ = None

    def __getstate__(self):
        return {f: getattr(self, f) for f in _FIELDS} | {
            "overflowing": [o.__getstate__() for o in self._overflowing], "ranges": dict(self._ranges)}

    def __setstate__(self, st):
        for f in _FIELDS:
            setattr(self, f, list(st[f]))
        self._overflowing = [Encoding._from_state(o) for o in st["overflowing"]]
        self._ranges = dict(st["ranges"])

    @classmethod
    def _from_state(cls, st):
        e = cls.__new__(cls)
        e.__setstate__(st)
        return e

    def copy(self):
        return Encoding._from_state(self.__getstate__())

    def set_sequence_id(self, sequence_id):
        """Mark the whole encoding as sequence ``sequence_id``."""
        self._ranges[int(sequence_id)] = (0, len(self.ids))

    def _range(self, s):
        return self._ranges.get(s, (0, len(self.ids)))

    # ------------------------------------------------------------------ lookups (HF's rules)
    def token_to_sequence(self, token_index):
        if token_index > len(self.ids):
            return None
        if not self._ranges:
            return 0
        for s, (a, b) in self._ranges.items():
            if a <= token_index < b:
                return s
        return None

    def word_to_tokens(self, word_index, sequence_index=0):
        a, b = self._range(sequence_index)
        start = end = None
        for i, w in enumerate(self._words[a:b]):
            if w is not None and w > word_index:
                break
            if w == word_index:
                start = i if start is None else start
                end = i + 1
        return None if start is None else (a + start, a + end)

    def word_to_chars(self, word_index, sequence_index=0):
        r = self.word_to_tokens(word_index, sequence_index)
        if r is None or r[1] == 0:
            return None
        return (self.offsets[r[0]][0], self.offsets[r[1] - 1][1])

    def token_to_chars(self, token_index):
        s = self.token_to_sequence(token_index)
        if s is None or not 0 <= token_index < len(self.offsets):
            return None
        return self.offsets[token_index]

    def token_to_word(self, token_index):
        s = self.token_to_sequence(token_index)
        if s is None or not 0 <= token_index < len(self._words):
            return None
        return self._words[token_index]

    def char_to_token(self, char_pos, sequence_index=0):
        a, b = self._range(sequence_index)
        for i in range(a, b):
            s, e = self.offsets[i]
            if s <= char_pos < e:
                return i
        return None

    def char_to_word(self, char_pos, sequence_index=0):
        t = self.char_to_token(char_pos, sequence_index)
        return None if t is None else self._words[t]

    # ------------------------------------------------------------------ operations
    @staticmethod
    def merge(encodings, growing_offsets=True):
        """One encoding of ``encodings`` one after the other."""
        out = Encoding()
        for e in encodings:
            out.merge_with(e.copy(), growing_offsets)
        return out

    def merge_with(self, pair, growing_offsets=False):
        """Append ``pair``; the overflowing parts of both are combined as HF does."""
        over = []
        for so in self._overflowing:
            n = so.copy()
            n.merge_with(pair.copy(), growing_offsets)
            over.append(n)
            for po in pair._overflowing:
                n = so.copy()
                n.merge_with(po.copy(), growing_offsets)
                over.append(n)
        for po in pair._overflowing:
            n = self.copy()
            n.merge_with(po.copy(), growing_offsets)
            over.append(n)
        n0 = len(self.ids)
        for s, (a, b) in pair._ranges.items():
            self._ranges[s] = (n0 + a, n0 + b)
        shift = self.offsets[-1][1] if growing_offsets and self.offsets else 0
        for f in ("ids", "type_ids", "tokens", "_words", "special_tokens_mask", "attention_mask"):
            getattr(self, f).extend(getattr(pair, f))
        self.offsets.extend(pair.offsets if not shift else [(s + shift, e + shift) for s, e in pair.offsets])
        self._overflowing = over

    def truncate(self, max_length, stride=0, direction="right"):
        """Keep ``max_length`` tokens; the rest become ``overflowing`` windows that overlap by
        ``stride`` tokens."""
        if direction not in ("right", "left"):
            raise ValueError(f"Invalid truncation direction value : {direction}")
        n = len(self.ids)
        if max_length >= n:
            return
        if max_length == 0:
            whole = self.copy()
            self._reset()
            self._overflowing = [whole]
            return
        if stride >= max_length:
            raise ValueError(f"`stride` must be strictly less than `max_len={max_length}` (note that "
                             "`max_len` may be shorter than the max length of the original model, as it "
                             "subtracts the number of special characters")
        step = max_length - stride
        parts = []
        if direction == "right":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                parts.append((start, stop))
                if stop == n:
                    break
        else:
            for last in range(n - 1, -1, -step):
                stop = last + 1
                start = max(stop - max_length, 0)
                parts.append((start, stop))
                if start == 0:
                    break
        windows = [self._slice(a, b) for a, b in parts]
        first = windows[0]
        self._reset_from(first)
        self._overflowing = windows[1:]

    def _slice(self, a, b):
        e = Encoding.__new__(Encoding)
        for f in _FIELDS:
            setattr(e, f, getattr(self, f)[a:b])
        e._overflowing, e._ranges = [], {}
        return e

    def _reset(self):
        for f in _FIELDS:
            setattr(self, f, [])
        self._ranges = {}

    def _reset_from(self, other):
        for f in _FIELDS:
            setattr(self, f, getattr(other, f))
        self._ranges = {}

    def pad(self, length, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]"):
        """Pad to ``length`` tokens (the overflowing parts too)."""
        if direction not in ("right", "left"):
            raise ValueError(f"Invalid padding direction value : {direction}")
        for o in self._overflowing:
            o.pad(length, direction, pad_id, pad_type_id, pad_token)
        k = length - len(self.ids)
        if k <= 0:
            return
        fill = {"ids": [pad_id] * k, "type_ids": [pad_type_id] * k, "tokens": [pad_token] * k,
                "_words": [None] * k, "offsets": [(0, 0)] * k, "special_tokens_mask": [1] * k,
                "attention_mask": [0] * k}
        for f in _FIELDS:
            cur = getattr(self, f)
            setattr(self, f, fill[f] + cur if direction == "left" else cur + fill[f])
        if direction == "left":
            self._ranges = {s: (a + k, b + k) for s, (a, b) in self._ranges.items()}
