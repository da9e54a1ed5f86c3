"""Streaming decode for generation: feed ids one at a time, get text as soon as it is whole.

Token k contributes ``decode_bytes(ids[k-1:k+1])`` minus ``decode_bytes(ids[k-1:k])``: decoding
the token after its predecessor gives exactly what it adds to the full decode, also for
decoders that treat the first token specially (SentencePiece drops the dummy-prefix space).
The bytes go through an incremental UTF-8 decoder, which holds back a character split across
tokens (byte-level BPE, ``<0xXX>`` byte pieces) and emits U+FFFD for invalid bytes exactly as
``bytes.decode("utf-8", "replace")`` does, so the pieces always add up to ``decode(all_ids)``.
"""
import codecs


class DecodeStream:
    def __init__(self, tokenizer, skip_special_tokens=False):
        self._model = tokenizer.model
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._previous = None
        self._skip = skip_special_tokens

    def _bytes(self, ids):
        return self._model.decode_bytes(ids)

    def step(self, token_id):
        """Feed one id; returns the text that became complete (possibly '')."""
        token_id = int(token_id)
        if self._previous is None:
            data = self._bytes([token_id])
        else:
            both = self._bytes([self._previous, token_id])
            head = self._bytes([self._previous])
            if not both.startswith(head):
                raise ValueError("this tokenizer's decoder is not incremental")
            data = both[len(head):]
        self._previous = token_id
        return self._decoder.decode(data)

    def flush(self):
        """The text still held back (an incomplete character becomes U+FFFD)."""
        return self._decoder.decode(b"", final=True)
