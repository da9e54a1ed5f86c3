"""``tokenizers.processors`` on nbtok: TemplateProcessing, BertProcessing, RobertaProcessing,
ByteLevel and Sequence, as Python objects holding their ``tokenizer.json`` fragment; they run
in ``nbtok.post_processors.pairs``.

Examples:
    >>> from nbtok.compat.tokenizers import processors
    >>> t = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
    ...                                   special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    >>> t.num_special_tokens_to_add(True)
    3
"""
from ._component import Component, SequenceMixin

__all__ = ["PostProcessor", "BertProcessing", "RobertaProcessing", "ByteLevel", "TemplateProcessing",
           "Sequence"]


class PostProcessor(Component):
    """Base class of the post-processors."""

    _registry = {}

    def __init__(self, *a, **k):
        if type(self) is PostProcessor:
            raise TypeError("cannot create 'PostProcessor' instances")
        super().__init__(*a, **k)

    def num_special_tokens_to_add(self, is_pair):
        """How many special tokens this adds to a single sequence or a pair."""
        from ...post_processors.pairs import added_tokens
        return added_tokens(self._json, bool(is_pair))

    def process(self, encoding, pair=None, add_special_tokens=True):
        """The final ``Encoding`` of ``encoding`` (and ``pair``)."""
        from ...post_processors.pairs import process
        return process(self._json, encoding.copy(), None if pair is None else pair.copy(), add_special_tokens)


def _token_pair(v, what):
    if not (isinstance(v, (tuple, list)) and len(v) == 2):
        raise TypeError(f"{what} must be a (token, id) tuple")
    a, b = v
    if isinstance(a, int) and isinstance(b, str):
        a, b = b, a
    if not (isinstance(a, str) and isinstance(b, int)):
        raise TypeError(f"{what} must be a (token, id) tuple")
    return [a, b]


class BertProcessing(PostProcessor):
    _type = "BertProcessing"
    _fields = (("sep", "sep", None), ("cls", "cls", None))

    def __init__(self, sep, cls):
        object.__setattr__(self, "_json", {"type": "BertProcessing", "sep": _token_pair(sep, "sep"),
                                           "cls": _token_pair(cls, "cls")})

    def _from_json_value(self, name, value):
        return tuple(value)


class RobertaProcessing(PostProcessor):
    _type = "RobertaProcessing"
    _fields = (("sep", "sep", None), ("cls", "cls", None), ("trim_offsets", "trim_offsets", True),
               ("add_prefix_space", "add_prefix_space", True))

    def __init__(self, sep, cls, trim_offsets=True, add_prefix_space=True):
        object.__setattr__(self, "_json", {"type": "RobertaProcessing", "sep": _token_pair(sep, "sep"),
                                           "cls": _token_pair(cls, "cls"), "trim_offsets": bool(trim_offsets),
                                           "add_prefix_space": bool(add_prefix_space)})

    def _from_json_value(self, name, value):
        return tuple(value) if name in ("sep", "cls") else value


class ByteLevel(PostProcessor):
    _type = "ByteLevel"
    _fields = (("add_prefix_space", "add_prefix_space", True), ("trim_offsets", "trim_offsets", True),
               ("use_regex", "use_regex", True))

    def __init__(self, add_prefix_space=None, trim_offsets=None, use_regex=None, **kwargs):
        object.__setattr__(self, "_json", {
            "type": "ByteLevel", "add_prefix_space": True if add_prefix_space is None else bool(add_prefix_space),
            "trim_offsets": True if trim_offsets is None else bool(trim_offsets),
            "use_regex": True if use_regex is None else bool(use_regex)})


def _piece(s):
    if not isinstance(s, str):
        raise ValueError(f"Cannot build Piece from {s!r}")
    parts = s.split(":")
    if len(parts) > 2 or not parts[0]:
        raise ValueError(f'Cannot build Piece from string "{s}"')
    name = parts[0]
    type_id = 0
    if len(parts) == 2:
        if not parts[1].isdigit():
            raise ValueError(f'Cannot build Piece from string "{s}"')
        type_id = int(parts[1])
    if name.startswith("$"):
        rest = name[1:]
        if rest in ("", "A", "a"):
            seq = "A"
        elif rest in ("B", "b"):
            seq = "B"
        elif rest.isdigit():
            seq = "A"
            if len(parts) == 1:
                type_id = int(rest)
        else:
            raise ValueError(f'Cannot build Piece from string "{s}"')
        return {"Sequence": {"id": seq, "type_id": type_id}}
    return {"SpecialToken": {"id": name, "type_id": type_id}}


def _template(t):
    if isinstance(t, str):
        t = t.split()
    if not isinstance(t, (list, tuple)):
        raise TypeError("a template must be a str or a list of str")
    return [_piece(p) for p in t]


def _special(sp):
    if isinstance(sp, dict):
        ids, toks = sp.get("ids"), sp.get("tokens")
        if not isinstance(sp.get("id"), str) or not isinstance(ids, list) or not isinstance(toks, list):
            raise ValueError("a special token dict needs 'id', 'ids' and 'tokens'")
        if len(ids) != len(toks):
            raise ValueError("SpecialToken: ids and tokens must be of the same length")
        return sp["id"], {"id": sp["id"], "ids": list(ids), "tokens": list(toks)}
    tok, i = _token_pair(sp, "a special token")
    return tok, {"id": tok, "ids": [i], "tokens": [tok]}


class TemplateProcessing(PostProcessor):
    _type = "TemplateProcessing"
    _fields = (("single", "single", None), ("pair", "pair", None), ("special_tokens", "special_tokens", None))

    def __init__(self, single=None, pair=None, special_tokens=None):
        single = _template(single) if single is not None else [{"Sequence": {"id": "A", "type_id": 0}}]
        pair = _template(pair) if pair is not None else [{"Sequence": {"id": "A", "type_id": 0}},
                                                         {"Sequence": {"id": "B", "type_id": 1}}]
        specials = dict(_special(s) for s in (special_tokens or []))
        seqs = {p["Sequence"]["id"] for p in pair if "Sequence" in p}
        if seqs != {"A", "B"}:
            raise ValueError("Template for `pair` must use both sequences")
        missing = sorted({p["SpecialToken"]["id"] for p in single + pair if "SpecialToken" in p} - set(specials))
        if missing:
            raise ValueError(f"Missing SpecialToken(s) with id(s) `{', '.join(missing)}`")
        object.__setattr__(self, "_json", {"type": "TemplateProcessing", "single": single, "pair": pair,
                                           "special_tokens": dict(sorted(specials.items()))})

    def _to_json(self, name, value):
        return _template(value) if name in ("single", "pair") else dict(_special(s) for s in value)


class Sequence(SequenceMixin, PostProcessor):
    _type = "Sequence"
    _items_key = "processors"
