"""``transformers``' fast tokenizers on nbtok: ``from nbtok.compat.transformers import AutoTokenizer``.

``AutoTokenizer.from_pretrained(folder)`` returns the tokenizer class transformers itself picks
for a local model folder (``RobertaTokenizerFast``, ``T5TokenizerFast``, ``LlamaTokenizerFast``,
``PreTrainedTokenizerFast`` ...), with every argument and behaviour of transformers' own Python
code (``__call__`` with padding / truncation / ``return_tensors`` / ``return_offsets_mapping``,
``batch_decode``, special tokens, chat templates), but its backend, the ``tokenizer.json``
pipeline, is ``nbtok.compat.tokenizers.Tokenizer`` instead of HF ``tokenizers``: the encoding and
decoding run in nbtok. ``PreTrainedTokenizerFast`` is transformers' class of that name with the
same backend.

``transformers`` is an optional dependency (``pip install nbtok[transformers]``); this module
raises ImportError naming it when it is missing. A folder must hold a ``tokenizer.json``:
transformers converts slow tokenizers (a ``.model`` / ``vocab.txt`` alone) with HF
``tokenizers``, which nbtok does not use at run time (NotImplementedError).

Examples:
    >>> from nbtok.compat.transformers import AutoTokenizer                 # doctest: +SKIP
    >>> tok = AutoTokenizer.from_pretrained("path/to/roberta-base")          # doctest: +SKIP
    >>> tok(["Hello world"], padding=True, return_tensors="np")["input_ids"]  # doctest: +SKIP
    array([[    0, 31414,   232,     2]])
"""
import os

__all__ = ["AutoTokenizer", "from_pretrained"]   # and PreTrainedTokenizerFast, made on first use


def _transformers():
    try:
        import transformers
    except ImportError as e:
        raise ImportError("nbtok.compat.transformers needs the transformers package (an optional extra: "
                          f"pip install 'nbtok[transformers]'): {e}") from None
    return transformers


def _backend(folder, kwargs):
    """nbtok's ``tokenizer.json`` backend for a local folder (or the given ``tokenizer_file``)."""
    from .tokenizers import Tokenizer
    path = kwargs.pop("tokenizer_file", None) or os.path.join(folder, "tokenizer.json")
    if not os.path.isdir(folder) and not os.path.isfile(path):
        raise FileNotFoundError(f"{folder!r}: not a local model folder (nbtok does not download from the Hub)")
    if not os.path.isfile(path):
        raise NotImplementedError(f"{folder!r} has no tokenizer.json: transformers would convert the slow tokenizer "
                                  "files with HF tokenizers, which nbtok does not use at run time; save a "
                                  "tokenizer.json (e.g. with nbtok.Tokenizer.save_huggingface) and load that")
    return Tokenizer.from_file(path)


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
        if "tokenizer_object" not in kwargs:
            kwargs["tokenizer_object"] = _backend(str(pretrained_model_name_or_path), kwargs)
        return t.AutoTokenizer.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)


def from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs):
    """``AutoTokenizer.from_pretrained``."""
    return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)


_CLASSES = {}


def __getattr__(name):
    # transformers' PreTrainedTokenizerFast with nbtok's backend, made when first asked for
    if name != "PreTrainedTokenizerFast":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _CLASSES:
        base = _transformers().PreTrainedTokenizerFast

        class PreTrainedTokenizerFast(base):
            """transformers' ``PreTrainedTokenizerFast`` whose backend is nbtok's."""

            def __init__(self, *args, **kwargs):
                if kwargs.get("tokenizer_object") is None:
                    from .tokenizers import Tokenizer
                    path = kwargs.pop("tokenizer_file", None)
                    if path is None:
                        raise NotImplementedError("PreTrainedTokenizerFast on nbtok needs tokenizer_file= or "
                                                  "tokenizer_object= (a tokenizer.json)")
                    kwargs["tokenizer_object"] = Tokenizer.from_file(path)
                super().__init__(*args, **kwargs)

            @classmethod
            def from_pretrained(cls, pretrained_model_name_or_path, *inputs, **kwargs):
                if "tokenizer_object" not in kwargs:
                    kwargs["tokenizer_object"] = _backend(str(pretrained_model_name_or_path), kwargs)
                return super().from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)

        PreTrainedTokenizerFast.__module__ = __name__
        _CLASSES[name] = PreTrainedTokenizerFast
    return _CLASSES[name]
