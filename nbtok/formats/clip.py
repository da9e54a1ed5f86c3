"""OpenAI CLIP's BPE files as the tokenizer.json pipeline transformers' ``CLIPTokenizerFast``
runs: NFC, whitespace runs to one space, lower-case; CLIP's word regex; byte-level BPE whose
word-final tokens end in ``</w>``; ``<|startoftext|> $A <|endoftext|>``.

Two sources: a ``vocab.json`` + ``merges.txt`` pair whose tokens end in ``</w>`` (Stable
Diffusion's tokenizer folders), and CLIP's own ``bpe_simple_vocab_16e6.txt.gz`` (a merges list;
the vocabulary follows from it as CLIP's ``SimpleTokenizer`` builds it: the 256 byte characters,
the same with ``</w>``, one token per merge, the two special tokens).
"""
import gzip

from .gpt2 import bytes_to_unicode

SUFFIX = "</w>"
START, END = "<|startoftext|>", "<|endoftext|>"
N_MERGES = 49152 - 256 - 2   # the merges CLIP's SimpleTokenizer reads from its list
PATTERN = r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"


def is_clip_vocab(vocab):
    return START in vocab and END in vocab and any(t.endswith(SUFFIX) for t in vocab)


def read_merges_gz(path):
    """``(vocab, merges)`` of CLIP's gzipped merges list, as its ``SimpleTokenizer`` builds them."""
    try:
        lines = gzip.decompress(open(path, "rb").read()).decode("utf-8").split("\n")
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    merges = []
    for i, line in enumerate(lines[1:N_MERGES + 1], start=2):
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{path}:{i}: a merge is two tokens, got {line!r}")
        merges.append((parts[0], parts[1]))
    if len(merges) != N_MERGES:
        raise ValueError(f"{path}: {len(merges)} merges, CLIP's list has {N_MERGES}")
    # the byte characters in the order of GPT-2's ``bytes_to_unicode`` list: the printable bytes
    # (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) first, then the others
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = bytes_to_unicode()
    chars = [table[b] for b in printable + [b for b in range(256) if b not in set(printable)]]
    tokens = chars + [c + SUFFIX for c in chars] + [a + b for a, b in merges] + [START, END]
    return {t: i for i, t in enumerate(tokens)}, merges


def clip_config(vocab, merges):
    """The tokenizer.json dict of CLIP's pipeline over ``vocab`` ({token: id}) and ``merges``."""
    if not is_clip_vocab(vocab):
        raise ValueError(f"not a CLIP vocabulary: it needs {START}, {END} and tokens ending in {SUFFIX}")
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": t == START, "special": True} for t in (START, END)]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
            {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Removed", "invert": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": {"type": "RobertaProcessing", "sep": [END, vocab[END]], "cls": [START, vocab[START]],
                           "trim_offsets": False, "add_prefix_space": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": END, "continuing_subword_prefix": "",
                  "end_of_word_suffix": SUFFIX, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }


def read_pair(vocab_json_path, merges_txt_path):
    """``(vocab, merges)`` of a CLIP ``vocab.json`` + ``merges.txt``, merges as strings."""
    import json
    from pathlib import Path
    try:
        vocab = json.loads(Path(vocab_json_path).read_text(encoding="utf-8"))
        lines = Path(merges_txt_path).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read {vocab_json_path} / {merges_txt_path}: {e}") from None
    merges = []
    for i, line in enumerate(lines, start=1):
        if not line or (i == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2:
            raise ValueError(f"{merges_txt_path}:{i}: a merge is two tokens, got {line[:60]!r}")
        merges.append((parts[0], parts[1]))
    return vocab, merges
