"""``tokenizers.pre_tokenizers`` on nbtok: the pre-tokenizers nbtok implements, as Python
objects holding their ``tokenizer.json`` fragment.

Examples:
    >>> from nbtok.compat.tokenizers import pre_tokenizers
    >>> pre_tokenizers.Whitespace().pre_tokenize_str("Hi, you")
    [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7))]
"""
from ._component import Component, SequenceMixin, pattern_json

__all__ = ["PreTokenizer", "UnicodeScripts", "ByteLevel", "Split", "Metaspace", "WhitespaceSplit", "Whitespace",
           "BertPreTokenizer", "Punctuation", "Digits", "CharDelimiterSplit", "FixedLength", "Sequence"]

_BEHAVIORS = {"removed": "Removed", "isolated": "Isolated", "merged_with_previous": "MergedWithPrevious",
              "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}
_BEHAVIORS_R = {v: k for k, v in _BEHAVIORS.items()}


def _behavior(v):
    if v in _BEHAVIORS_R:
        return v
    if v not in _BEHAVIORS:
        raise ValueError(f"Wrong value for SplitDelimiterBehavior, expected one of: "
                         f"`removed, isolated, merged_with_previous, merged_with_next, contiguous`, got {v!r}")
    return _BEHAVIORS[v]


class PreTokenizer(Component):
    """Base class of the pre-tokenizers."""

    _registry = {}

    def __init__(self, *a, **k):
        if type(self) is PreTokenizer:
            raise TypeError("cannot create 'PreTokenizer' instances")
        super().__init__(*a, **k)

    def pre_tokenize_str(self, sequence):
        """The splits of ``sequence``: ``[(text, (start, end))]`` (char offsets)."""
        from ...pre_tokenizers.components import build_pre_tokenizer, pre_tokenize_str
        if not isinstance(sequence, str):
            raise TypeError("pre_tokenize_str takes a str")
        return pre_tokenize_str(build_pre_tokenizer(self._json), sequence)


class ByteLevel(PreTokenizer):
    _type = "ByteLevel"
    _fields = (("add_prefix_space", "add_prefix_space", True), ("use_regex", "use_regex", True),
               ("trim_offsets", "trim_offsets", True))

    def __init__(self, add_prefix_space=True, use_regex=True, trim_offsets=True, **kwargs):
        super().__init__(add_prefix_space=add_prefix_space, use_regex=use_regex, trim_offsets=trim_offsets)
        js = self._json
        object.__setattr__(self, "_json", {"type": "ByteLevel", "add_prefix_space": js["add_prefix_space"],
                                           "trim_offsets": js["trim_offsets"], "use_regex": js["use_regex"]})

    @staticmethod
    def alphabet():
        """The 256 characters byte-level tokens are written with."""
        from ...formats.gpt2 import bytes_to_unicode
        return sorted(bytes_to_unicode().values())


class Split(PreTokenizer):
    _type = "Split"
    _hidden = ("pattern",)
    _fields = (("pattern", "pattern", None), ("behavior", "behavior", None), ("invert", "invert", False))

    def __init__(self, pattern, behavior, invert=False):
        super().__init__(pattern, behavior, invert)

    def _to_json(self, name, value):
        if name == "pattern":
            return pattern_json(value)
        if name == "behavior":
            return _behavior(value)
        return bool(value)

    def _from_json_value(self, name, value):
        if name == "behavior":
            return _BEHAVIORS_R.get(value, value)
        return value


class Metaspace(PreTokenizer):
    _type = "Metaspace"
    _fields = (("replacement", "replacement", "\u2581"), ("prepend_scheme", "prepend_scheme", "always"),
               ("split", "split", True))

    def _to_json(self, name, value):
        if name == "replacement" and (not isinstance(value, str) or len(value) != 1):
            raise ValueError("expected a string of length 1")
        if name == "prepend_scheme" and value not in ("always", "never", "first"):
            raise ValueError(f"{value} is an unknown variant, should be one of ['first', 'never', 'always']")
        return value


class Punctuation(PreTokenizer):
    _type = "Punctuation"
    _fields = (("behavior", "behavior", "isolated"),)

    def _to_json(self, name, value):
        return _behavior(value)

    def _from_json_value(self, name, value):
        return _BEHAVIORS_R.get(value, value)


class FixedLength(PreTokenizer):
    _type = "FixedLength"
    _fields = (("length", "length", 5),)


class Digits(PreTokenizer):
    _type = "Digits"
    _fields = (("individual_digits", "individual_digits", False),)


class CharDelimiterSplit(PreTokenizer):
    _type = "CharDelimiterSplit"
    _fields = (("delimiter", "delimiter", None),)

    def __init__(self, delimiter):
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError("expected a string of length 1")
        super().__init__(delimiter)


def _simple(name):
    return type(name, (PreTokenizer,), {"_type": name, "__doc__": f"HF's ``{name}`` pre-tokenizer."})


WhitespaceSplit, Whitespace, BertPreTokenizer, UnicodeScripts = map(
    _simple, ("WhitespaceSplit", "Whitespace", "BertPreTokenizer", "UnicodeScripts"))


class Sequence(SequenceMixin, PreTokenizer):
    _type = "Sequence"
    _items_key = "pretokenizers"
