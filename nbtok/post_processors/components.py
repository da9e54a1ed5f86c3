"""tokenizer.json post-processors flattened to what a single sequence needs: the template's
special tokens before and after the text, and ByteLevel's offset trimming."""
import numpy as np

from ..formats.gpt2 import bytes_to_unicode
from ..kernels.ragged import wrap_rows
from ..pipeline import unit_kernels as K
from ..pipeline.unicode import hf_class_table
from ..pipeline.units import int_id


# ---------------------------------------------------------------------------------------------
# post-processors

class Post:
    """Flattened post-processor: optional offset trimming + a template of specials around A."""

    def __init__(self, cfg, token_ids):
        self.cfg = cfg
        self.trim = False
        self.trim_prefix_space = False
        self.prefix_ids = np.zeros(0, np.int32)
        self.suffix_ids = np.zeros(0, np.int32)
        self._parse(cfg, token_ids)

    def _parse(self, cfg, token_ids):
        if cfg is None:
            return
        if not isinstance(cfg, dict):
            raise ValueError("post_processor must be an object")
        t = cfg.get("type")
        if t == "Sequence":
            items = cfg.get("processors")
            if not isinstance(items, list):
                raise ValueError("Sequence post-processor needs a 'processors' list")
            for c in items:
                self._parse(c, token_ids)
            return
        if t == "ByteLevel":
            if cfg.get("trim_offsets", True):
                self.trim = True
                self.trim_prefix_space = bool(cfg.get("add_prefix_space", True))
            return
        if t in ("RobertaProcessing", "BertProcessing"):
            sep, cls = cfg.get("sep"), cfg.get("cls")
            if not (isinstance(sep, list) and len(sep) == 2 and isinstance(cls, list) and len(cls) == 2):
                raise ValueError(f"{t}: 'sep' and 'cls' must be [token, id]")
            self._set_template([int_id(cls[1], t)], [int_id(sep[1], t)])
            if t == "RobertaProcessing" and cfg.get("trim_offsets", True):
                self.trim = True
                self.trim_prefix_space = bool(cfg.get("add_prefix_space", True))
            return
        if t == "TemplateProcessing":
            single = cfg.get("single")
            specials = cfg.get("special_tokens") or {}
            if not isinstance(single, list) or not isinstance(specials, dict):
                raise ValueError("TemplateProcessing: 'single' must be a list and 'special_tokens' an object")
            pre, suf, seen = [], [], False
            for piece in single:
                if not isinstance(piece, dict) or len(piece) != 1:
                    raise ValueError(f"TemplateProcessing: bad template piece {piece!r}")
                if "Sequence" in piece:
                    if seen:
                        raise NotImplementedError("TemplateProcessing with the sequence twice is not supported")
                    seen = True
                elif "SpecialToken" in piece:
                    name = piece["SpecialToken"].get("id")
                    sp = specials.get(name)
                    if not isinstance(sp, dict) or not isinstance(sp.get("ids"), list):
                        raise ValueError(f"TemplateProcessing: special token {name!r} is not defined")
                    ids = [int_id(i, "TemplateProcessing") for i in sp["ids"]]
                    (suf if seen else pre).extend(ids)
                else:
                    raise ValueError(f"TemplateProcessing: bad template piece {piece!r}")
            self._set_template(pre, suf)
            return
        raise NotImplementedError(f"tokenizer.json post-processor {t!r} is not supported by nbtok")

    def wrap(self, ids, starts, ends, doc_offsets):
        """``(ids, starts, ends, doc_offsets)`` with the template's special tokens around each
        document (offsets (0, 0) at them; ``starts`` / ``ends`` may be None)."""
        new_ids, new_offsets = wrap_rows(ids, doc_offsets, self.prefix_ids, self.suffix_ids)
        if starts is not None:
            zeros = (np.zeros(self.prefix_ids.size, np.int64), np.zeros(self.suffix_ids.size, np.int64))
            starts = wrap_rows(starts, doc_offsets, *zeros)[0]
            ends = wrap_rows(ends, doc_offsets, *zeros)[0]
        return new_ids, starts, ends, new_offsets

    def _set_template(self, pre, suf):
        self.prefix_ids = np.concatenate([self.prefix_ids, np.array(pre, np.int32)]).astype(np.int32)
        self.suffix_ids = np.concatenate([np.array(suf, np.int32), self.suffix_ids]).astype(np.int32)


def whitespace_ends(text, byte_space=True):
    """``(lead, trail)``: the white-space characters at each end of ``text`` (HF's classes; with
    ``byte_space`` also ``Ġ``, GPT-2's space), each end counted on its own."""
    ws = hf_class_table()
    g = bytes_to_unicode()[32] if byte_space else None

    def run(chars):
        k = 0
        for c in chars:
            if not (c == g or ws[ord(c)] & K.C_WS):
                break
            k += 1
        return k
    return run(text), run(reversed(text))


def trim_tables(tokens):
    """Per id, the leading / trailing spaces (``Ġ`` or Unicode white space) ByteLevel's offset
    trimming removes: ``(lead, trail)`` int64 arrays."""
    n = len(tokens)
    lead = np.zeros(n, np.int64)
    trail = np.zeros(n, np.int64)
    for i, t in enumerate(tokens):
        if t:
            lead[i], trail[i] = whitespace_ends(t)
    return lead, trail
