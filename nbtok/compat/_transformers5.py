"""transformers 5's tokenizer loading on nbtok's backend (used by ``nbtok.compat.transformers``).

transformers 5 builds a tokenizer's backend in Python: ``TokenizersBackend`` reads a
``tokenizer.json`` with ``tokenizers.Tokenizer.from_file`` (or, for a model class with its own
``__init__`` such as ``LlamaTokenizer`` / ``T5Tokenizer``, takes its vocabulary and merges from it
and builds ``Tokenizer(BPE(...))`` with ``normalizers`` / ``pre_tokenizers`` / ``decoders``
objects in the model's own code). While ``backend()`` lasts, the names those modules imported from
HF ``tokenizers`` (``Tokenizer``, the model classes, the ``models`` / ``normalizers`` /
``pre_tokenizers`` / ``decoders`` / ``processors`` modules and their classes, ``Regex``) are
``nbtok.compat.tokenizers``' objects of the same names, so every component transformers builds
is nbtok's and the backend is ``nbtok.compat.tokenizers.Tokenizer``. ``AddedToken``, ``Encoding``
and the trainers stay HF's (nbtok's tokenizer takes HF's ``AddedToken``; components transformers
builds after loading, e.g. ``update_post_processor``'s ``TemplateProcessing``, are taken through
their JSON state). The modules patched are ``tokenization_utils_base``,
``tokenization_utils_tokenizers`` and the modules of the loaded class and its bases, and, while
``_patch_mistral_regex`` runs (it imports ``tokenizers`` in its body), ``sys.modules["tokenizers"]``;
all are restored on exit.
"""
import sys
from contextlib import contextmanager

SLOW = ("no tokenizer.json: transformers 5 builds this tokenizer from its slow files (a .model / vocab / tiktoken "
        "/ GGUF file), partly with HF tokenizers' converters, which nbtok does not use at run time; "
        "nbtok.compat.transformers loads folders with a tokenizer.json: save one and load that")
_SUBMODULES = ("models", "normalizers", "pre_tokenizers", "decoders", "processors")


def _replacements():
    """``{id(HF object): (HF object, nbtok's object)}`` for the names swapped."""
    import tokenizers as hf
    from . import tokenizers as ours
    pairs = [(hf.Tokenizer, ours.Tokenizer), (hf.Regex, ours.Regex)]
    for sub in _SUBMODULES:
        h, o = getattr(hf, sub), getattr(ours, sub)
        pairs.append((h, o))
        for name in dir(h):
            v = getattr(h, name)
            if isinstance(v, type) and isinstance(getattr(o, name, None), type):
                pairs.append((v, getattr(o, name)))
    return {id(h): (h, o) for h, o in pairs}


class _Swap:
    """The module globals swapped so far, to restore."""

    def __init__(self):
        self.table = _replacements()
        self.saved = []
        self.done = set()

    def module(self, mod):
        if mod is None or id(mod) in self.done:
            return
        self.done.add(id(mod))
        g = vars(mod)
        for k, v in list(g.items()):
            hit = self.table.get(id(v))
            if hit is not None and hit[0] is v:
                self.saved.append((g, k, v, hit[1]))
                g[k] = hit[1]

    def classes(self, cls):
        for c in getattr(cls, "__mro__", ()):
            name = getattr(c, "__module__", "") or ""
            if name.split(".")[0] == "transformers":
                self.module(sys.modules.get(name))

    def restore(self):
        for g, k, v, ours in reversed(self.saved):
            if g.get(k) is ours:
                g[k] = v
        self.saved.clear()
        self.done.clear()


@contextmanager
def backend():
    """While it lasts, transformers 5 builds its tokenizers' backends with
    ``nbtok.compat.tokenizers`` (see the module docstring); a ``from_pretrained`` without a
    ``tokenizer.json`` raises NotImplementedError."""
    import transformers.tokenization_utils_base as base_mod
    import transformers.tokenization_utils_tokenizers as tok_mod
    base = base_mod.PreTrainedTokenizerBase
    swap = _Swap()
    original = base.__dict__["_from_pretrained"]

    def _from_pretrained(cls, resolved_vocab_files, *args, **kwargs):
        if issubclass(cls, tok_mod.TokenizersBackend) and not (resolved_vocab_files or {}).get("tokenizer_file"):
            raise NotImplementedError(SLOW)
        swap.classes(cls)
        return original.__func__(cls, resolved_vocab_files, *args, **kwargs)

    backend_cls = tok_mod.TokenizersBackend
    patch = backend_cls.__dict__["_patch_mistral_regex"]

    def _patch_mistral_regex(cls, *args, **kwargs):
        # (it imports ``tokenizers`` in its body to rebuild a Mistral pre-tokenizer: nbtok's while it runs)
        saved = sys.modules.get("tokenizers")
        from . import tokenizers as ours
        sys.modules["tokenizers"] = ours
        try:
            return patch.__func__(cls, *args, **kwargs)
        finally:
            sys.modules["tokenizers"] = saved

    try:
        swap.module(base_mod)
        swap.module(tok_mod)
        base._from_pretrained = classmethod(_from_pretrained)
        backend_cls._patch_mistral_regex = classmethod(_patch_mistral_regex)
        yield
    finally:
        base._from_pretrained = original
        backend_cls._patch_mistral_regex = patch
        swap.restore()
