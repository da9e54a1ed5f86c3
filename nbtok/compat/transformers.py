"""``transformers``' fast tokenizers on nbtok: ``from nbtok.compat.transformers import AutoTokenizer``.

``AutoTokenizer.from_pretrained(folder)`` returns the tokenizer class transformers itself picks
for a local model folder (``RobertaTokenizerFast``, ``T5TokenizerFast``, ``LlamaTokenizerFast``,
``PreTrainedTokenizerFast`` ... on transformers 4; ``T5Tokenizer``, ``LlamaTokenizer``,
``TokenizersBackend`` ... on transformers 5), with every argument and behaviour of transformers'
own Python code (``__call__`` with padding / truncation / ``return_tensors`` /
``return_offsets_mapping``, ``batch_decode``, special tokens, chat templates), but its backend is
``nbtok.compat.tokenizers.Tokenizer`` instead of HF ``tokenizers``: the encoding and decoding run
in nbtok. ``PreTrainedTokenizerFast`` is transformers' class of that name with the same backend.

transformers 4.40 to 4.57: the ``tokenizer.json`` is read by ``nbtok.compat.tokenizers.Tokenizer``
(transformers' ``TokenizerFast`` name, while loading). transformers 5: its classes build the
backend in Python, from the ``tokenizer.json`` or from the vocabulary and merges they take from it
(``Tokenizer(BPE(...))`` with ``normalizers`` / ``pre_tokenizers`` / ``decoders`` objects, in each
model's code); while loading, the names those modules imported from HF ``tokenizers`` are
``nbtok.compat.tokenizers``' (``nbtok/compat/_transformers5.py``), so the settings they apply
that way (``add_prefix_space``, ``legacy``, ``add_bos_token`` ...) run on nbtok too.

``transformers`` is an optional dependency (``pip install nbtok[transformers]``, transformers
>=4.40,<6); this module raises ImportError naming it when it is missing. A folder must hold a
``tokenizer.json`` (NotImplementedError otherwise): transformers builds the others (a ``.model`` /
``vocab.txt`` / tiktoken file alone, a GGUF file) with converters written on HF ``tokenizers``,
which nbtok does not use at run time; transformers 4 also converts for the settings its classes
apply only by converting (T5's and Llama's ``add_prefix_space``, ...).

Examples:
    >>> from nbtok.compat.transformers import AutoTokenizer                 # doctest: +SKIP
    >>> tok = AutoTokenizer.from_pretrained("path/to/roberta-base")          # doctest: +SKIP
    >>> tok(["Hello world"], padding=True, return_tensors="np")["input_ids"]  # doctest: +SKIP
    array([[    0, 31414,   232,     2]])
"""
import os
import threading
from contextlib import contextmanager

__all__ = ["AutoTokenizer", "from_pretrained", "nbtok_backend"]   # and PreTrainedTokenizerFast, made on first use


def _transformers():
    try:
        import transformers
    except ImportError as e:
        raise ImportError("nbtok.compat.transformers needs the transformers package (an optional extra: "
                          f"pip install 'nbtok[transformers]'): {e}") from None
    major = _major(transformers)
    if major not in (4, 5):
        raise NotImplementedError(
            f"nbtok.compat.transformers runs on transformers 4 (4.40 to 4.57) and 5; transformers "
            f"{getattr(transformers, '__version__', '?')} is not one of them: install transformers>=4.40,<6, "
            "or use nbtok.compat.tokenizers")
    return transformers


def _major(transformers):
    major = str(getattr(transformers, "__version__", "0")).split(".")[0]
    return int(major) if major.isdigit() else 0


_SWAP = threading.RLock()


_SLOW = ("transformers rebuilds this tokenizer from its slow files (a .model / vocab file: no tokenizer.json, "
         "from_slow=True, or a setting such as add_prefix_space that its class only applies by converting) with HF "
         "tokenizers, which nbtok does not use at run time; save a tokenizer.json and load that")


def _no_conversion(*args, **kwargs):
    raise NotImplementedError(_SLOW)


@contextmanager
def nbtok_backend():
    """While it lasts, transformers builds its fast tokenizers' backend with nbtok. On
    transformers 4 a ``tokenizer.json`` is read by ``nbtok.compat.tokenizers.Tokenizer`` and
    converting slow tokenizer files (done with HF tokenizers) raises NotImplementedError; on
    transformers 5 the ``tokenizers`` names its tokenizer modules use are nbtok's
    (``nbtok/compat/_transformers5.py``) and a ``from_pretrained`` without a ``tokenizer.json``
    raises NotImplementedError. Every other decision (which class, which files, which settings)
    stays transformers' own. Not thread-safe against transformers' own loading in other threads
    (the swapped names are module globals)."""
    if _major(_transformers()) >= 5:
        from ._transformers5 import backend
        with _SWAP, backend():
            yield
        return
    import transformers.tokenization_utils_fast as fast
    from .tokenizers import Tokenizer
    with _SWAP:
        saved = fast.TokenizerFast, fast.convert_slow_tokenizer
        fast.TokenizerFast, fast.convert_slow_tokenizer = Tokenizer, _no_conversion
        try:
            yield
        finally:
            fast.TokenizerFast, fast.convert_slow_tokenizer = saved


def _local(folder):
    if not os.path.exists(folder):
        raise FileNotFoundError(f"{folder!r}: not a local model folder (nbtok does not download from the Hub)")


class AutoTokenizer:
    """``transformers.AutoTokenizer`` for local folders, backed by nbtok (see the module docstring)."""

    def __init__(self):
        raise EnvironmentError("AutoTokenizer is designed to be instantiated using the "
                               "`AutoTokenizer.from_pretrained(pretrained_model_name_or_path)` method.")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
        t = _transformers()
        if kwargs.get("use_fast") is False:
            raise NotImplementedError("use_fast=False: transformers' slow tokenizers do not run on nbtok")
        _local(str(pretrained_model_name_or_path))
        kwargs.setdefault("local_files_only", True)
        with nbtok_backend():
            tok = t.AutoTokenizer.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)
        if not hasattr(tok, "backend_tokenizer"):   # (transformers falls back when the conversion fails)
            raise NotImplementedError(f"{_SLOW} (transformers gave {type(tok).__name__})")
        _check_backend(tok)
        return tok


def _check_backend(tok):
    from .tokenizers import Tokenizer
    backend = getattr(tok, "_tokenizer", None)
    if not isinstance(backend, Tokenizer):   # (transformers 5's converters build HF tokenizers' own)
        from ._transformers5 import SLOW
        raise NotImplementedError(f"{SLOW} (transformers built a {type(backend).__module__}."
                                  f"{type(backend).__name__} backend)")


def from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs):
    """``AutoTokenizer.from_pretrained``."""
    return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)


_CLASSES = {}


def __getattr__(name):
    # transformers' PreTrainedTokenizerFast with nbtok's backend, made when first asked for
    if name != "PreTrainedTokenizerFast":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _CLASSES and _major(_transformers()) >= 5:
        _CLASSES[name] = _fast_class_5()
    if name not in _CLASSES:
        base = _transformers().PreTrainedTokenizerFast

        class PreTrainedTokenizerFast(base):
            """transformers' ``PreTrainedTokenizerFast`` whose backend is nbtok's."""

            def __init__(self, *args, **kwargs):
                with nbtok_backend():
                    super().__init__(*args, **kwargs)

            @classmethod
            def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
                _local(str(pretrained_model_name_or_path))
                kwargs.setdefault("local_files_only", True)
                with nbtok_backend():
                    return super().from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)

        PreTrainedTokenizerFast.__module__ = __name__
        _CLASSES[name] = PreTrainedTokenizerFast
    return _CLASSES[name]


def _fast_class_5():
    """transformers 5's ``PreTrainedTokenizerFast`` (``TokenizersBackend``) on nbtok: the class
    defines no ``__init__`` (transformers 5 would then rebuild the backend from the vocabulary
    instead of loading the tokenizer.json); its metaclass builds instances inside
    ``nbtok_backend()``."""
    base = _transformers().PreTrainedTokenizerFast

    class _OnNbtok(type(base)):
        def __call__(cls, *args, **kwargs):
            with nbtok_backend():
                tok = super().__call__(*args, **kwargs)
            _check_backend(tok)
            return tok

    def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
        _local(str(pretrained_model_name_or_path))
        kwargs.setdefault("local_files_only", True)
        with nbtok_backend():
            return base.from_pretrained.__func__(cls, pretrained_model_name_or_path, *inputs, **kwargs)

    cls = _OnNbtok("PreTrainedTokenizerFast", (base,), {
        "__doc__": "transformers' ``PreTrainedTokenizerFast`` whose backend is nbtok's.", "__module__": __name__,
        "from_pretrained": classmethod(from_pretrained)})
    return cls
