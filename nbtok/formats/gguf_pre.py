"""The pre-tokenizers of ``gpt2`` GGUF vocabularies: ``PRE_TOKENIZERS`` maps each
``tokenizer.ggml.pre`` nbtok reads to its regex passes (see ``_pre_tokenizers``);
``UNSUPPORTED_PRE`` says, for the pre types of llama.cpp's ``llama-vocab.cpp`` that nbtok does
not map, what llama.cpp does that is more than a list of regexes."""


_GPT2_RE = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"""
# DeepSeek LLM's letters (its tokenizer.json; llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM): the
# cased letters (Lu, Ll, Lt) of Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, Glagolitic,
# Coptic, Deseret, Osage, Old Hungarian, Warang Citi and Adlam; escaped, since Unicode
# normalization of a source file would change some of them (U+1F7D, U+2126, U+212A, ...)
_DEEPSEEK_LLM_LETTERS = "\\s?[" + (
    "A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf"
    "\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d"
    "\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-"
    "\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113"
    "\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149"
    "\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b"
    "\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
    "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-"
    "\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943"
) + "]+"


# llama.cpp's own spelling (LLAMA_VOCAB_PRE_TYPE_GRANITE_EMB_MULTI: GPT-4o's lookaheads with \p{M})
_APOS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
GRANITE_EMB_MULTI = (r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+" + _APOS
                     + r"|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*" + _APOS
                     + r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")

#: llama.cpp pre types that are not a list of regexes over GPT-2's byte alphabet, and why
UNSUPPORTED_PRE = {
    "kimi-k2": "llama.cpp splits with a custom handler (unicode.cpp's K2 patterns with Han exclusion), "
               "not a regex",
    "afmoe": "llama.cpp groups digits with a custom handler (\\p{AFMoE_digits} in unicode.cpp), not a regex",
    "gemma4": "llama.cpp's Gemma 4 BPE works on raw UTF-8 with '\u2581' for spaces and takes a newline run "
              "whole when it is a token (llm_tokenizer_bpe_session)",
    "granite-embed-multi-311m": "llama.cpp tokenizes it as Gemma 4 (raw UTF-8, '\u2581' for spaces, newline "
                                "runs whole when they are tokens)",
    "sarvam-moe": "llama.cpp's Sarvam BPE works on raw UTF-8 with '\u2581' for spaces and <0xXX> byte "
                  "tokens, not GPT-2's byte alphabet",
    "whitespace": "llama.cpp splits at Unicode whitespace in its own session and merges raw UTF-8, not "
                  "GPT-2's byte alphabet",
}


def _pre_tokenizers():
    """``{tokenizer.ggml.pre: (regex passes, ByteLevel with GPT-2's regex, ignore_merges)}``.

    Each regex pass splits every piece of the one before into its matches and the text between
    them (HF's ``Split(behavior="Isolated")``, llama.cpp's ``unicode_regex_split``); then the
    bytes go to GPT-2's alphabet, with GPT-2's own regex where the middle value is True. The
    patterns are the ones of each model's tokenizer.json (where llama.cpp spells a
    case-insensitive group ``'[sS]|...``, the tokenizer.json's ``(?i:...)`` is used); the pre
    types and their groups follow llama.cpp's ``llama-vocab.cpp``."""
    from ..pre_tokenizers.bytelevel import DEEPSEEK_V3, LLAMA3, O200K, QWEN2, QWEN35  # the tokenizer.json spellings
    gpt2 = ((), True, False)
    digits_gpt2 = ((r"\p{N}",), True, False)
    llama3 = ((LLAMA3,), False, True)
    qwen2 = ((QWEN2,), False, False)
    table = {}
    for names, spec in [
        (("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
          "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4", "jina-v1-en",
          "jina-v2-code", "roberta-bpe"), gpt2),
        (("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"), digits_gpt2),
        (("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
          "jina-v5-nano"), llama3),
        (("dbrx", "smaug-bpe", "chatglm-bpe", "glm4"), ((LLAMA3,), False, False)),
        (("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "solar-open", "megrez",
          "grok-2"), qwen2),
        (("qwen35",), ((QWEN35,), False, False)),
        (("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"), (tuple(DEEPSEEK_V3), False, False)),
        (("deepseek-coder",), ((r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", r"[一-龥ࠀ-一가-퟿]+", r"\p{N}"), False, False)),
        (("falcon",), ((r"[\p{P}\$\+<=>\^~\|`]+", _GPT2_RE, r"[0-9][0-9][0-9]"), False, False)),
        (("default",), ((r"[\p{P}\$\+<=>\^~\|]+", _GPT2_RE, r"\p{N}+", r"[0-9][0-9][0-9]"), False, False)),
        (("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"), ((O200K,), False, False)),
        (("poro-chat", "bloom", "gpt3-finnish"), ((r" ?[^(\s|.,!?…。，、।۔،)]+",), False, False)),
        (("viking",), ((r" ?[^(\s|.,!?…。，、।۔،)]+", r"\p{N}"), False, False)),
        (("tekken",), ((r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
                        r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
                        r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",), False, True)),
        (("bailingmoe", "bailingmoe2", "llada-moe"),
         ((r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]"
           r"|\s+(?!\S)|\s+",), False, False)),
        (("seed-coder",), ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}"
                            r"| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+",), False, False)),
        (("deepseek-llm",), ((r"[\r\n]", _DEEPSEEK_LLM_LETTERS, r"\s?[!-/:-~！-／：-～‘-‟　-。]+", r"\s+$",
                              r"[一-龥ࠀ-一가-퟿]+", r"\p{N}+"), False, False)),
        (("minicpm5",), ((r"\p{N}{1,3}", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+"
                          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"), False, True)),
        (("ufakzeka",), ((r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",),
                         False, False)),
        (("laguna",), ((r"[^\n]+|[\n]+", QWEN2), False, False)),
        (("jais-2",), ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                        r"|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)"
                        r"|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}",), False, False)),
        (("exaone-moe",), ((r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                            r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+",), False, False)),
        (("tiny_aya", "cohere2moe"), ((r"\d{1,3}(?=(?:\d{3})*\b)", O200K), False, False)),
        (("spark2_5",), ((r"\p{N}{1,3}", r"[一-龥぀-ゟ゠-ヿ]+",
                          r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
                          r"""| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+""", r"\p{N}"), False, False)),
        (("chameleon",), ((r"<sentinel:[0-9]+>", r"(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", r"([\t\n]|    |  )", r"\p{N}",
                           r"[\p{P}!-/:-@\[-`{-~]", _GPT2_RE), False, False)),
        # llama.cpp's second pass, "(?=(\d{3})+(?!\d))", matches only empty strings: its matches
        # are split points (unicode_regex_split_stl keeps the text between them), cutting digit
        # runs into threes from the right. nbtok's Split skips empty matches, so the pass is
        # written as what it leaves: the shortest text up to the next such point or the end.
        # It has no \p{...} class, so llama.cpp runs it with std::wregex, whose \d is ASCII only
        # (iswdigit): [0-9] here
        (("superbpe",), ((r"\p{N}+", r"(?s:.+?)(?=(?:[0-9]{3})+(?![0-9])|\Z)"), False, False)),
        (("granite-embed-multi-97m",), ((GRANITE_EMB_MULTI,), False, True)),
        (("youtu",), ((r"[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
                       O200K.replace(r"\p{N}{1,3}", r"\p{N}")), False, True)),
    ]:
        for name in names:
            table[name] = spec
    return table


PRE_TOKENIZERS = _pre_tokenizers()