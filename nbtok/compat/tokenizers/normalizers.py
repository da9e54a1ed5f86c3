"""``tokenizers.normalizers`` on nbtok: the normalizers nbtok implements, as Python objects
holding their ``tokenizer.json`` fragment.

Examples:
    >>> from nbtok.compat.tokenizers import normalizers
    >>> normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]).normalize_str("Ｈello")
    'hello'
"""
import base64

from ._component import Component, SequenceMixin, Regex, pattern_json, pattern_value

__all__ = ["Normalizer", "BertNormalizer", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Nmt", "Strip",
           "StripAccents", "Prepend", "Replace", "Precompiled", "ByteLevel", "Sequence"]


class Normalizer(Component):
    """Base class of the normalizers."""

    _registry = {}

    def __init__(self, *a, **k):
        if type(self) is Normalizer:
            raise TypeError("cannot create 'Normalizer' instances")
        super().__init__(*a, **k)

    def normalize_str(self, sequence):
        """``sequence`` normalized."""
        from ...normalizers.components import build_normalizer
        if not isinstance(sequence, str):
            raise TypeError("normalize_str takes a str")
        return build_normalizer(self._json).normalize_str(sequence)


class BertNormalizer(Normalizer):
    _type = "BertNormalizer"
    _fields = (("clean_text", "clean_text", True), ("handle_chinese_chars", "handle_chinese_chars", True),
               ("strip_accents", "strip_accents", None), ("lowercase", "lowercase", True))


def _simple(name):
    return type(name, (Normalizer,), {"_type": name, "__doc__": f"HF's ``{name}`` normalizer."})


NFC, NFD, NFKC, NFKD, Lowercase, Nmt, StripAccents, ByteLevel = map(
    _simple, ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Nmt", "StripAccents", "ByteLevel"))


class Strip(Normalizer):
    _type = "Strip"
    _fields = (("left", "strip_left", True), ("right", "strip_right", True))


class Prepend(Normalizer):
    _type = "Prepend"
    _fields = (("prepend", "prepend", "\u2581"),)


class Replace(Normalizer):
    _type = "Replace"
    _hidden = ("pattern",)
    _fields = (("pattern", "pattern", None), ("content", "content", None))

    def __init__(self, pattern, content):
        super().__init__(pattern, content)

    def _to_json(self, name, value):
        if name == "pattern":
            return pattern_json(value)
        if not isinstance(value, str):
            raise TypeError("Replace content must be a str")
        return value

    def _from_json_value(self, name, value):
        return pattern_value(value) if name == "pattern" else value


class Precompiled(Normalizer):
    _type = "Precompiled"
    _fields = (("precompiled_charsmap", "precompiled_charsmap", None),)

    def __init__(self, precompiled_charsmap):
        super().__init__(precompiled_charsmap)

    def _to_json(self, name, value):
        if not isinstance(value, (bytes, bytearray, list)):
            raise TypeError("precompiled_charsmap must be bytes")
        return base64.b64encode(bytes(value)).decode("ascii")


class Sequence(SequenceMixin, Normalizer):
    _type = "Sequence"
    _items_key = "normalizers"


del Regex
