"""transformers' side files of a model folder: ``tokenizer_config.json`` and
``special_tokens_map.json``, applied to a tokenizer.json pipeline as transformers' tokenizer
backend applies them when ``AutoTokenizer.from_pretrained(folder)`` loads it (``from_pretrained``
in ``nbtok/formats/detect.py``):

* **special tokens**: the named ones (``bos_token``, ``eos_token``, ``unk_token``, ``sep_token``,
  ``pad_token``, ``cls_token``, ``mask_token``; a string or an ``AddedToken`` dict),
  ``additional_special_tokens`` / ``extra_special_tokens`` and the entries of
  ``added_tokens_decoder``. ``special_tokens_map.json`` overrides ``tokenizer_config.json``'s named
  tokens unless the config has an ``added_tokens_decoder`` (then it is not read, as in
  transformers). A token the pipeline does not yet have as an added token becomes one (matched
  in the raw text, special unless an ``added_tokens_decoder`` entry says otherwise), with its
  vocabulary id, or the next free id when the vocabulary lacks it (transformers' ``add_tokens``).
* **add_bos_token / add_eos_token** are not applied to a tokenizer.json: its own post-processor
  decides (transformers 5 drops these keys when the folder has a tokenizer.json).
* **do_lower_case** of a ``BertTokenizer``: the ``BertNormalizer``'s lowercase (and accent
  stripping) follow it, as ``BertTokenizerFast`` rebuilds its normalizer.
* the tokenizer.json's own ``truncation`` and ``padding`` are not applied on ``encode``
  (transformers turns them off unless a call asks for them).
* a sentencepiece ``.model`` folder whose config asks for BOS / EOS (``add_bos_token`` /
  ``add_eos_token`` true) or names special tokens the model lacks is built as tokenizer.json
  (``SentencePieceModel.to_huggingface_json``, the form of transformers 4's ``LlamaConverter``)
  with a ``<bos> $A <eos>`` template as asked and the above applied; otherwise it stays a
  sentencepiece model (``encode(text, add_bos=True)``).

Not followed: the model-specific pipelines transformers 5 rebuilds for some classes (its
``LlamaTokenizer`` replaces the normalizer and pre-tokenizer with a ``Metaspace`` that does not
prefix a text already starting with a space, where transformers 4 and sentencepiece do;
``WhisperTokenizer`` sets language prefixes).

Examples:
    >>> cfg = read_tokenizer_config("models/llama-3.1")  # doctest: +SKIP
    >>> cfg.named["bos_token"]["content"]  # doctest: +SKIP
    '<|begin_of_text|>'
"""
import json
from pathlib import Path

NAMED = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


class TokenizerConfig:
    """What nbtok takes from a folder's ``tokenizer_config.json`` / ``special_tokens_map.json``:
    ``tokenizer_class`` (str or None), ``named`` (``{role: token dict or None}``), ``extra``
    (list of token dicts), ``decoder`` (``{id: token dict}``), ``add_bos_token`` /
    ``add_eos_token`` / ``do_lower_case`` (None when absent). A token dict has tokenizer.json's
    added-token fields (``content``, ``special``, ``lstrip``, ...)."""

    def __init__(self, tokenizer_class=None, named=None, extra=(), decoder=None, add_bos_token=None,
                 add_eos_token=None, do_lower_case=None):
        self.tokenizer_class = tokenizer_class
        self.named = dict(named or {})
        self.extra = list(extra)
        self.decoder = dict(decoder or {})
        self.add_bos_token = add_bos_token
        self.add_eos_token = add_eos_token
        self.do_lower_case = do_lower_case


def _read(path):
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return obj


def _token(value, where, special=None):
    """A token dict for a config value: a string or an ``AddedToken`` dict; None stays None.
    ``special`` None: the dict's own flag (an ``added_tokens_decoder`` entry); named and extra
    special tokens are special whatever the dict says, as in transformers."""
    if value is None:
        return None
    if isinstance(value, str):
        special = True if special is None else special
        return {"content": value, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": not special, "special": special}
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        own = value.get("special", False)
        tok = {"content": value["content"], "single_word": False, "lstrip": False, "rstrip": False,
               "normalized": not (own if special is None else special), "special": own}
        for k in _FLAGS:
            if k in value:
                if not isinstance(value[k], bool):
                    raise ValueError(f"{where}: {k} must be true or false, not {value[k]!r}")
                tok[k] = value[k]
        if special is not None:
            tok["special"] = special
        return tok
    raise ValueError(f"{where}: a token must be a string or an object with a 'content' string, not {value!r}")


def _extra(obj, where):
    """``additional_special_tokens`` (transformers 4) and ``extra_special_tokens`` (5: a list, or
    a dict of model-specific named tokens) of a config object."""
    out = []
    for key in ("additional_special_tokens", "extra_special_tokens"):
        value = obj.get(key)
        if isinstance(value, dict):
            value = list(value.values())
        if value is not None and not isinstance(value, list):
            raise ValueError(f"{where}: {key} must be a list")
        out += value or []
    return out


def _bool(obj, key, where):
    value = obj.get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{where}: {key} must be true or false, not {value!r}")
    return value


def read_tokenizer_config(folder):
    """The ``TokenizerConfig`` of a model folder, or None when it has neither file."""
    folder = Path(folder)
    cfg_path, map_path = folder / "tokenizer_config.json", folder / "special_tokens_map.json"
    if not cfg_path.is_file() and not map_path.is_file():
        return None
    cfg = _read(cfg_path) if cfg_path.is_file() else {}
    where = str(cfg_path)
    decoder = {}
    raw_decoder = cfg.get("added_tokens_decoder")
    if raw_decoder is not None:
        if not isinstance(raw_decoder, dict):
            raise ValueError(f"{where}: added_tokens_decoder must be an object")
        for idx, tok in raw_decoder.items():
            try:
                i = int(idx)
            except ValueError:
                raise ValueError(f"{where}: added_tokens_decoder key {idx!r} is not an id") from None
            decoder[i] = _token(tok, f"{where}: added_tokens_decoder[{idx}]")
    values = {k: cfg.get(k) for k in NAMED}
    extra = _extra(cfg, where)
    if raw_decoder is None and map_path.is_file():  # as transformers: the map only without a decoder
        smap = _read(map_path)
        for k in NAMED:
            if k in smap:
                values[k] = smap[k]
        extra += [t for t in _extra(smap, str(map_path)) if t not in extra]
    cls = cfg.get("tokenizer_class")
    if cls is not None and not isinstance(cls, str):
        raise ValueError(f"{where}: tokenizer_class must be a string")
    return TokenizerConfig(
        tokenizer_class=cls,
        named={k: _token(v, f"{where}: {k}", special=True) for k, v in values.items()},
        extra=[_token(t, f"{where}: additional_special_tokens", special=True) for t in extra],
        decoder=decoder,
        add_bos_token=_bool(cfg, "add_bos_token", where), add_eos_token=_bool(cfg, "add_eos_token", where),
        do_lower_case=_bool(cfg, "do_lower_case", where))


def pipeline_for(path, kind, tc):
    """The tokenizer.json dict ``from_pretrained`` builds for the folder file ``path`` ("tokenizer.json"
    or "sentencepiece" ``kind``) with the folder's ``TokenizerConfig`` ``tc`` applied, or None
    when the file is to load as it is (a sentencepiece model the config changes nothing of)."""
    if kind == "tokenizer.json":
        from .huggingface import read_json
        return apply_tokenizer_config(read_json(path), tc)
    if tc is None:
        return None
    from ..models.sentencepiece import SentencePieceModel
    model = SentencePieceModel.load(path)
    add_bos, add_eos = bool(tc.add_bos_token), bool(tc.add_eos_token)
    missing = [t for t in [*tc.named.values(), *tc.extra, *tc.decoder.values()]
               if t and model.piece_to_id(t["content"]) in (-1, model.unk_id) and t["content"] != model.id_to_piece(model.unk_id)]
    if not (add_bos or add_eos or missing):
        return None
    cfg = apply_tokenizer_config(model.to_huggingface_json(), tc)
    if add_bos or add_eos:
        cfg["post_processor"] = _template(tc if add_bos else None, tc if add_eos else None, cfg["added_tokens"])
    return cfg


def _vocab_ids(model):
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        return {k: v for k, v in vocab.items() if isinstance(v, int)}
    if isinstance(vocab, list):  # Unigram: [piece, score] per id
        return {p[0]: i for i, p in enumerate(vocab) if isinstance(p, (list, tuple)) and p}
    return {}


def apply_tokenizer_config(cfg, tc):
    """A copy of the tokenizer.json dict ``cfg`` with the ``TokenizerConfig`` ``tc`` applied
    (see the module docstring); ``tc`` None applies only the truncation / padding rule."""
    cfg = dict(cfg, truncation=None, padding=None)
    if tc is None:
        return cfg
    added = [dict(a) for a in cfg.get("added_tokens") or []]
    have = {a.get("content"): a for a in added}
    vocab = _vocab_ids(cfg.get("model") or {})
    next_id = max([*vocab.values(), *(a.get("id", -1) for a in added), -1]) + 1
    wanted = [tc.decoder[i] for i in sorted(tc.decoder)] + [t for t in tc.named.values() if t] + tc.extra
    for tok in wanted:
        if tok["content"] in have:
            continue
        i = vocab.get(tok["content"])
        if i is None:
            i, next_id = next_id, next_id + 1
        entry = dict(tok, id=i)
        added.append(entry)
        have[tok["content"]] = entry
    cfg["added_tokens"] = added
    if tc.do_lower_case is not None and (tc.tokenizer_class or "").startswith("Bert"):
        norm = cfg.get("normalizer")
        if isinstance(norm, dict) and norm.get("type") == "BertNormalizer" and norm.get("lowercase") != tc.do_lower_case:
            cfg["normalizer"] = dict(norm, lowercase=tc.do_lower_case)
    return cfg


def _template(bos_tc, eos_tc, added):
    """transformers' ``update_post_processor``: ``bos:0 $A:0 eos:0`` (pair: ``... bos:1 $B:1 eos:1``),
    with the config's named bos / eos token (``bos_tc`` / ``eos_tc`` None: not added; a config
    without that token: none, as transformers). ``added``: the added tokens, which hold them."""
    ids = {a["content"]: a["id"] for a in added}
    bos, eos = (tc.named[role]["content"] if tc is not None and tc.named.get(role) else None
                for tc, role in ((bos_tc, "bos_token"), (eos_tc, "eos_token")))

    def seq(name, tid):
        return ([{"SpecialToken": {"id": bos, "type_id": tid}}] if bos else []) + \
            [{"Sequence": {"id": name, "type_id": tid}}] + \
            ([{"SpecialToken": {"id": eos, "type_id": tid}}] if eos else [])
    specials = {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in (bos, eos) if t}
    return {"type": "TemplateProcessing", "single": seq("A", 0), "pair": seq("A", 0) + seq("B", 1),
            "special_tokens": specials}
