"""Streaming decode for generation: feed ids one at a time, get text as soon as it is whole.

One algorithm for every model type, HF tokenizers' ``DecodeStream``: the stream keeps a short
window of ids, the last ones already shown plus the new ones. After each id it decodes the
window with the tokenizer's own ``decode``; when that text is longer than the window's already
shown part (its *prefix*) and does not end in U+FFFD, the difference is new text: it is
returned and the window moves on. A text that ends in U+FFFD is held back: the character is
split across tokens (byte-level BPE, ``<0xXX>`` byte-fallback pieces) and the next ids complete
it. Because the window keeps the previous tokens, decoders that treat the first token
specially (SentencePiece drops the dummy-prefix space) give each token the text it adds to the
whole decode. So the pieces, plus ``flush()``, add up to ``decode(all_ids)``.

A model whose decoder rewrites text after it depends on the next token (a sentencepiece
``denormalizer_spec``: Marian's case markers, "U" + "produced" -> "Produced") declares
``stream_lookahead = k``: the stream then keeps every id (no window) and shows only the part
of the text that the next ids cannot change, the common prefix of the decodes without the last
0, 1, ..., k ids.
"""


class DecodeStream:
    """Incremental decoder; see the module docstring.

    Examples:
        >>> import nbtok
        >>> stream = nbtok.get_encoding("gpt2").decode_stream()
        >>> [stream.step(i) for i in [15496, 995]]
        ['Hello', ' world']
        >>> [stream.step(i) for i in nbtok.get_encoding("gpt2").encode("€")]  # 3 bytes, 2 tokens
        ['', '€']
    """

    def __init__(self, tokenizer, skip_special_tokens=False):
        self._tokenizer = tokenizer
        self._skip = bool(skip_special_tokens)
        self._lookahead = int(getattr(tokenizer.model, "stream_lookahead", 0))
        self._ids = []          # the window: ids already shown (context) + ids not shown yet
        self._prefix = ""       # decode of the window's first ``_prefix_index`` ids
        self._prefix_index = 0

    def _decode(self, ids):
        return self._tokenizer.decode(ids, skip_special_tokens=self._skip)

    def _shown(self, ids):
        """The decode of ``ids`` up to where later ids could change it (all of it without
        lookahead)."""
        text = self._decode(ids)
        for j in range(1, self._lookahead + 1):
            before = self._decode(ids[:-j]) if len(ids) > j else ""
            n = 0
            for a, b in zip(text, before):
                if a != b:
                    break
                n += 1
            text = text[:n]
        return text

    def step(self, token_id):
        """Feed one id; returns the text that became complete (possibly '').

        An id outside the vocabulary is a ``ValueError``; the stream is unchanged then.
        """
        self._tokenizer._check_id(token_id)
        self._ids.append(int(token_id))
        text = self._shown(self._ids)
        if len(text) <= len(self._prefix) or text.endswith("\ufffd"):
            return ""
        if self._lookahead:  # all ids kept: the prefix is everything shown so far
            new = self._check_prefix(text)[len(self._prefix):]
            self._prefix = text
            return new
        return self._advance(text)

    def _check_prefix(self, text):
        if not text.startswith(self._prefix):
            raise ValueError(f"ids {self._ids}: the decoder changed text already shown, so they "
                             "cannot be decoded as a stream (as HF's DecodeStream, InvalidPrefix; e.g. "
                             "HF's ByteFallback decodes a run of bytes that is not UTF-8 as one U+FFFD per byte)")
        return text

    def _advance(self, text):
        new = self._check_prefix(text)[len(self._prefix):]
        shown = len(self._ids) - self._prefix_index
        del self._ids[:self._prefix_index]
        self._prefix = self._decode(self._ids)
        self._prefix_index = shown
        return new

    def flush(self):
        """The text still held back (an incomplete character becomes U+FFFD), and a fresh
        start: the next ``step`` begins a new text."""
        text = self._decode(self._ids) if self._ids else ""
        try:
            return self._check_prefix(text)[len(self._prefix):]
        finally:
            self._ids, self._prefix, self._prefix_index = [], "", 0
