"""HF post-processing of whole ``Encoding`` objects: a sequence or a PAIR of sequences through
the file's post-processor (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel,
Sequence), the truncation before it (``LongestFirst`` / ``OnlyFirst`` / ``OnlySecond``, with
stride and overflowing windows) and the padding after it, in HF's order and with HF's rules.

The batch pipeline (``HuggingFaceModel``) flattens the post-processor to the single-sequence
case (``components.Post``); this module serves the per-encoding API (``nbtok.compat.tokenizers``).

Examples:
    >>> from nbtok.post_processors.encoding import Encoding
    >>> bert = {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}
    >>> a, b = Encoding([7, 8], tokens=["x", "y"]), Encoding([9], tokens=["z"], type_ids=[1])
    >>> process(bert, a, b, True).ids
    [101, 7, 8, 102, 9, 102]
"""
from .components import whitespace_ends
from .encoding import Encoding


def added_tokens(cfg, is_pair):
    """How many special tokens the post-processor ``cfg`` adds to one sequence or a pair."""
    if cfg is None:
        return 0
    t = cfg.get("type")
    if t == "BertProcessing":
        return 3 if is_pair else 2
    if t == "RobertaProcessing":
        return 4 if is_pair else 2
    if t == "TemplateProcessing":
        specials = cfg.get("special_tokens") or {}
        total = 0
        for piece in cfg.get("pair" if is_pair else "single") or []:
            if "SpecialToken" in piece:
                total += len(specials[piece["SpecialToken"]["id"]]["ids"])
        return total
    if t == "Sequence":
        return sum(added_tokens(c, is_pair) for c in cfg.get("processors") or [])
    if t == "ByteLevel":
        return 0
    raise NotImplementedError(f"post-processor {t!r} is not supported by nbtok")


def truncate_encodings(encoding, pair, max_length, stride=0, strategy="longest_first", direction="right"):
    """HF's ``truncate_encodings``: cut one sequence or a pair to ``max_length`` tokens in all."""
    if max_length == 0:
        encoding.truncate(0, stride, direction)
        if pair is not None:
            pair.truncate(0, stride, direction)
        return
    total = len(encoding) + (len(pair) if pair is not None else 0)
    if total <= max_length:
        return
    to_remove = total - max_length
    if strategy == "longest_first":
        if pair is None:
            encoding.truncate(total - to_remove, stride, direction)
            return
        n1, n2 = len(encoding), len(pair)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        if swap:
            n1, n2 = n2, n1
        encoding.truncate(n1, stride, direction)
        pair.truncate(n2, stride, direction)
        return
    if strategy not in ("only_first", "only_second"):
        raise ValueError(f"unknown truncation strategy {strategy!r}")
    target = encoding if strategy == "only_first" else pair
    if target is None:
        raise ValueError("Truncation error: Second sequence not provided")
    if len(target) <= to_remove:
        raise ValueError("Truncation error: Sequence to truncate too short to respect the provided max_length")
    target.truncate(len(target) - to_remove, stride, direction)


def pad_encodings(encodings, length=None, pad_to_multiple_of=None, pad_id=0, pad_type_id=0,
                  pad_token="[PAD]", direction="right"):
    """HF's ``pad_encodings``: to ``length``, or to the longest of ``encodings``."""
    if not encodings:
        return
    target = length if length is not None else max(len(e) for e in encodings)
    if pad_to_multiple_of and target % pad_to_multiple_of:
        target += pad_to_multiple_of - target % pad_to_multiple_of
    for e in encodings:
        e.pad(target, direction, pad_id, pad_type_id, pad_token)


def process(cfg, encoding, pair, add_special_tokens):
    """The post-processor ``cfg`` (a tokenizer.json object, or None) on one sequence or a pair:
    one merged ``Encoding``."""
    encs = [encoding] if pair is None else [encoding, pair]
    if cfg is None:
        if len(encs) == 1:
            return encoding
        out = Encoding()
        for i, e in enumerate(encs):
            e.set_sequence_id(i)
            out.merge_with(e, False)
        return out
    for i, e in enumerate(encs):
        e.set_sequence_id(i)
        for o in e._overflowing:
            o.set_sequence_id(i)
        e.type_ids = [i] * len(e)
    encs = _process_encodings(cfg, encs, add_special_tokens)
    if len(encs) == 1:      # (merging one encoding into an empty one gives it unchanged)
        return encs[0]
    out = Encoding()
    for e in encs:
        out.merge_with(e, False)
    return out


def _process_encodings(cfg, encs, add_special_tokens):
    t = cfg.get("type")
    if t == "Sequence":
        for c in cfg.get("processors") or []:
            encs = _process_encodings(c, encs, add_special_tokens)
        return encs
    if t == "ByteLevel":
        if cfg.get("trim_offsets", True):
            for e in encs:
                trim_offsets(e, cfg.get("add_prefix_space", True))
        return encs
    if t == "TemplateProcessing":
        return _template(cfg, encs, add_special_tokens)
    if t in ("BertProcessing", "RobertaProcessing"):
        sep, cls = tuple(cfg["sep"]), tuple(cfg["cls"])
        roberta = t == "RobertaProcessing"
        if roberta:
            if cfg.get("trim_offsets", True):
                for e in encs:
                    trim_offsets(e, cfg.get("add_prefix_space", True))
            for e in encs:
                e.type_ids = [0] * len(e)
        if not add_special_tokens:
            return encs
        out = []
        for i, e in enumerate(encs):
            if i == 0:
                wrap = lambda x: _wrap(x, [cls], [sep], 0, 0)
            elif roberta:
                wrap = lambda x: _wrap(x, [sep], [sep], 1, 0)
            else:
                wrap = lambda x: _wrap(x, [], [sep], 1, 1)
            w = wrap(e)
            if roberta:   # (Roberta gives the overflowing parts type ids 0 too)
                for o in e._overflowing:
                    o.type_ids = [0] * len(o)
            w._overflowing = [wrap(o) for o in e._overflowing]
            out.append(w)
        return out
    raise NotImplementedError(f"post-processor {t!r} is not supported by nbtok")


def _wrap(e, before, after, seq, type_id):
    """``e`` between special tokens ``before`` / ``after`` ([token, id] pairs), as Bert /
    Roberta build it: the sequence keeps its type ids (Roberta's are 0), the specials get
    ``type_id``; the sequence range of ``seq`` covers ``e`` only."""
    nb, na, n = len(before), len(after), len(e)
    sp = [(t, i) for t, i in before], [(t, i) for t, i in after]
    r = Encoding([i for _, i in sp[0]] + e.ids + [i for _, i in sp[1]],
                 type_ids=[type_id] * nb + e.type_ids + [type_id] * na,
                 tokens=[t for t, _ in sp[0]] + e.tokens + [t for t, _ in sp[1]],
                 words=[None] * nb + e._words + [None] * na,
                 offsets=[(0, 0)] * nb + e.offsets + [(0, 0)] * na,
                 special_tokens_mask=[1] * nb + [0] * n + [1] * na,
                 sequence_ranges={seq: (nb, nb + n)})
    return r


def _template(cfg, encs, add_special_tokens):
    template = cfg.get("pair" if len(encs) == 2 else "single")
    if not isinstance(template, list):
        raise ValueError("TemplateProcessing: the template must be a list")
    specials = cfg.get("special_tokens") or {}
    out = []
    for piece in template:
        if "Sequence" in piece:
            i = 0 if piece["Sequence"]["id"] == "A" else 1
            if i >= len(encs):
                raise ValueError("TemplateProcessing: the template refers to a sequence that was not given")
            e = encs[i]
            e.type_ids = [piece["Sequence"].get("type_id", 0)] * len(e)
            e.set_sequence_id(i)
            out.append(e.copy())
        elif "SpecialToken" in piece:
            if add_special_tokens:
                sp = specials.get(piece["SpecialToken"]["id"])
                if sp is None:
                    raise ValueError(f"TemplateProcessing: special token {piece['SpecialToken']['id']!r} "
                                     "is not defined")
                k = len(sp["ids"])
                out.append(Encoding(sp["ids"], type_ids=[piece["SpecialToken"].get("type_id", 0)] * k,
                                    tokens=sp["tokens"], special_tokens_mask=[1] * k))
        else:
            raise ValueError(f"TemplateProcessing: bad template piece {piece!r}")
    return out


_ENDS = {}


def trim_offsets(e, add_prefix_space):
    """ByteLevel's offset trimming (HF ``process_offsets``): each token's offsets lose the
    white space at its ends (``Ġ`` or Unicode white space), except the one space ``add_prefix_space``
    put before the first token. The overflowing parts too."""
    for i, tok in enumerate(e.tokens):
        ends = _ENDS.get(tok)
        if ends is None:
            ends = _ENDS[tok] = whitespace_ends(tok)
        lead, trail = ends
        if not (lead or trail):
            continue
        s, en = e.offsets[i]
        if lead:
            if (i == 0 or s == 0) and add_prefix_space and lead == 1:
                lead = 0
            s = min(s + lead, en)
        if trail and en >= trail:
            en = max(en - trail, s)
        e.offsets[i] = (s, en)
    for o in e._overflowing:
        trim_offsets(o, add_prefix_space)
