"""Reference tokenizers built offline from the bundled / committed files (test oracles)."""
from functools import lru_cache

import pytest

from nbtok.formats.tiktoken import load_tiktoken_ranks


@lru_cache(maxsize=None)
def gpt2_ranks():
    from importlib import resources
    with resources.as_file(resources.files("nbtok") / "data" / "gpt2.tiktoken.gz") as p:
        return load_tiktoken_ranks(p)


@lru_cache(maxsize=None)
def tiktoken_pattern(name):
    """The pattern string tiktoken itself uses for ``name`` (gpt2, cl100k_base, o200k_base),
    taken from tiktoken's own constructor with the rank download stubbed out."""
    pytest.importorskip("tiktoken")
    import tiktoken_ext.openai_public as public
    saved = public.load_tiktoken_bpe, public.data_gym_to_mergeable_bpe_ranks
    public.load_tiktoken_bpe = public.data_gym_to_mergeable_bpe_ranks = lambda *a, **k: {}
    try:
        return public.ENCODING_CONSTRUCTORS[name]()["pat_str"]
    finally:
        public.load_tiktoken_bpe, public.data_gym_to_mergeable_bpe_ranks = saved


@lru_cache(maxsize=None)
def tiktoken_gpt2_ranks_with(pattern_name, specials=(("<|endoftext|>", 50256),)):
    """``tiktoken.Encoding`` over GPT-2's ranks with the pattern of ``pattern_name``."""
    tiktoken = pytest.importorskip("tiktoken")
    return tiktoken.Encoding(f"gpt2-ranks-{pattern_name}", pat_str=tiktoken_pattern(pattern_name),
                             mergeable_ranks=gpt2_ranks(), special_tokens=dict(specials))
