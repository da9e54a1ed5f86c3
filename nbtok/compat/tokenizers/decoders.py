"""``tokenizers.decoders`` on nbtok: the decoders nbtok implements, as Python objects holding
their ``tokenizer.json`` fragment, and ``DecodeStream``.

Examples:
    >>> from nbtok.compat.tokenizers import decoders
    >>> decoders.WordPiece().decode(["my", "na", "##me"])
    'my name'
"""
from ._component import Component, SequenceMixin, pattern_json, pattern_value

__all__ = ["Decoder", "ByteLevel", "Metaspace", "Replace", "ByteFallback", "Fuse", "Strip",
           "WordPiece", "BPEDecoder", "CTC", "Sequence", "DecodeStream"]


class Decoder(Component):
    """Base class of the decoders."""

    _registry = {}

    def __init__(self, *a, **k):
        if type(self) is Decoder:
            raise TypeError("cannot create 'Decoder' instances")
        super().__init__(*a, **k)

    def decode(self, tokens):
        """The text of the token strings ``tokens``."""
        from ...decoders.components import build_decoder
        if not isinstance(tokens, (list, tuple)) or any(not isinstance(t, str) for t in tokens):
            raise TypeError("decode takes a list of str")
        return "".join(build_decoder(self._json)(list(tokens)))


class ByteLevel(Decoder):
    _type = "ByteLevel"
    _fields = (("add_prefix_space", "add_prefix_space", True), ("trim_offsets", "trim_offsets", True),
               ("use_regex", "use_regex", True))

    def __init__(self, **kwargs):
        super().__init__()


class Metaspace(Decoder):
    _type = "Metaspace"
    _fields = (("replacement", "replacement", "\u2581"), ("prepend_scheme", "prepend_scheme", "always"),
               ("split", "split", True))

    def _to_json(self, name, value):
        if name == "replacement" and (not isinstance(value, str) or len(value) != 1):
            raise ValueError("expected a string of length 1")
        if name == "prepend_scheme" and value not in ("always", "never", "first"):
            raise ValueError(f"{value} is an unknown variant, should be one of ['first', 'never', 'always']")
        return value


class Replace(Decoder):
    _type = "Replace"
    _hidden = ("pattern",)
    _fields = (("pattern", "pattern", None), ("content", "content", None))

    def __init__(self, pattern, content):
        super().__init__(pattern, content)

    def _to_json(self, name, value):
        return pattern_json(value) if name == "pattern" else value

    def _from_json_value(self, name, value):
        return pattern_value(value) if name == "pattern" else value


class Strip(Decoder):
    _type = "Strip"
    _fields = (("content", "content", " "), ("left", "start", 0), ("right", "stop", 0))


class WordPiece(Decoder):
    _type = "WordPiece"
    _fields = (("prefix", "prefix", "##"), ("cleanup", "cleanup", True))


class CTC(Decoder):
    _type = "CTC"
    _fields = (("pad_token", "pad_token", "<pad>"), ("word_delimiter_token", "word_delimiter_token", "|"),
               ("cleanup", "cleanup", True))


class BPEDecoder(Decoder):
    _type = "BPEDecoder"
    _fields = (("suffix", "suffix", "</w>"),)


def _simple(name):
    return type(name, (Decoder,), {"_type": name, "__doc__": f"HF's ``{name}`` decoder."})


ByteFallback, Fuse = map(_simple, ("ByteFallback", "Fuse"))


class Sequence(SequenceMixin, Decoder):
    _type = "Sequence"
    _items_key = "decoders"


class DecodeStream:
    """Incremental decoding (HF's ``DecodeStream``): ``step(tokenizer, id)`` returns the text the
    id completes, or None while a character is still incomplete.

    Examples:
        >>> from nbtok.compat.tokenizers import Tokenizer                # doctest: +SKIP
        >>> stream = DecodeStream(skip_special_tokens=False)             # doctest: +SKIP
        >>> [stream.step(tok, i) for i in tok.encode("Hi €").ids]        # doctest: +SKIP
    """

    def __init__(self, ids=None, skip_special_tokens=False):
        if isinstance(ids, bool):   # DecodeStream(True): the older positional form
            ids, skip_special_tokens = None, ids
        self._skip = bool(skip_special_tokens)
        self._ids = [int(i) for i in ids] if ids is not None else []
        self._prefix = ""
        self._prefix_index = 0

    def step(self, tokenizer, id):
        if isinstance(id, int):
            new = [id]
        elif isinstance(id, (list, tuple)) and all(isinstance(i, int) for i in id):
            new = list(id)
        else:
            raise TypeError("StreamInput must be either an integer or a list of integers")
        decode = lambda ids: tokenizer.decode(ids, skip_special_tokens=self._skip)
        if not self._prefix and self._ids:
            p = decode(self._ids)
            if not p.endswith("\ufffd"):
                self._prefix, self._prefix_index = p, len(self._ids)
        self._ids = self._ids + new
        text = decode(self._ids)
        if len(text.encode("utf-8", "surrogatepass")) > len(self._prefix.encode("utf-8", "surrogatepass")) \
                and not text.endswith("\ufffd"):
            if not text.startswith(self._prefix):
                raise ValueError(f"Invalid prefix encountered while decoding stream. Token ID: {self._ids[-1]}, "
                                 f"Expected prefix: '{self._prefix}', Actual string: '{text}'")
            out = text[len(self._prefix):]
            new_index = len(self._ids) - self._prefix_index
            self._ids = self._ids[self._prefix_index:]
            self._prefix = decode(self._ids)
            self._prefix_index = new_index
            return out
        return None
