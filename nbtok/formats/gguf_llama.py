"""llama.cpp's way of tokenizing a ``llama`` (SentencePiece BPE) GGUF vocabulary, where it differs
from sentencepiece's: which tokens are found whole in the raw text, and the dummy-prefix space.

What llama.cpp (``src/llama-vocab.cpp``) does, read from its source:

* **Token attributes.** Each token starts with its ``tokenizer.ggml.token_type``; then tokens
  are recognised by their text: the end-of-generation ones (``EOG_TEXTS``: ``<|endoftext|>``,
  ``<|end|>``, ``</s>``, ...) and, where the file has no ``fim_*_token_id`` key, the first
  fill-in-the-middle one of each kind (``FIM_TEXTS``) become *control* tokens; gpt-oss's
  ``<|channel|>`` and friends become *user-defined*; with both ``<|return|>`` / ``<|call|>`` (or
  ``<|calls|>`` / ``<|flush|>``) present, ``<|end|>`` becomes user-defined; with
  ``<|tool_response>`` present, ``</s>`` becomes normal. A ``general.name`` containing "phi-3" /
  "phi3" gives every control / user-defined / unknown token *rstrip* (whitespace after it is
  dropped), except ``<unk>``, ``<s>``, ``<|endoftext|>``.
* **Partition** (``tokenizer_st_partition``). Before the model runs, every occurrence of each
  user-defined token that is not also control or unknown (``parse_special=false``, llama.cpp's
  default for text; control tokens are then text) is cut out of the raw text, longest token
  first (over the whole text, not leftmost first; tokens of one length in id order here,
  llama.cpp's sort leaves their order open), with the rstrip / lstrip whitespace (ASCII
  ``isspace``) beside it.
* **Space prefix.** Each remaining text fragment gets its own " " in front when
  ``add_space_prefix`` is set (llama.cpp's ``is_prev_special``: true at the start and after every
  token cut out, and two text fragments are never adjacent), then spaces become "▁" and the
  fragment is merged by piece scores. sentencepiece instead adds one "▁" to the whole text.
* llama.cpp's SPM tokenizer applies no normalization: ``remove_extra_whitespaces`` and a
  ``precompiled_charsmap`` are ignored for a ``llama`` vocabulary.

``LlamaCppSPM`` is a ``SentencePieceModel`` that partitions first and encodes each fragment with
the sentencepiece model (its dummy prefix = llama.cpp's space prefix per fragment). Tokens that
became control are no longer matched in the text (as with llama.cpp's ``parse_special=false``).
"""
import re

import numpy as np

from ..models.sentencepiece import SentencePieceModel

# llama.cpp's token type numbering (sentencepiece's)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED = 1, 2, 3, 4

#: texts llama.cpp marks end-of-generation, each made a control token (llama-vocab.cpp's list)
EOG_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
             "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
             "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
             "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[")
#: fill-in-the-middle texts per kind, with the GGUF keys that name the kind's id (deprecated last)
FIM_TEXTS = (
    (("fim_pre_token_id", "prefix_token_id"),
     ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uff5cfim\u2581begin\uff5c>", "<PRE>", "\u2581<PRE>",
      "<|code_prefix|>", "<|prefix|>")),
    (("fim_suf_token_id", "suffix_token_id"),
     ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uff5cfim\u2581hole\uff5c>", "<SUF>", "\u2581<SUF>",
      "<|code_suffix|>", "<|suffix|>")),
    (("fim_mid_token_id", "middle_token_id"),
     ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uff5cfim\u2581end\uff5c>", "<MID>", "\u2581<MID>",
      "<|code_middle|>", "<|middle|>")),
    (("fim_pad_token_id",), ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]")),
    (("fim_rep_token_id",), ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>")),
    (("fim_sep_token_id",), ("<|file_sep|>",)),
)
GPT_OSS_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")
_SPACE_BYTES = b" \t\n\v\f\r"  # C isspace


def token_attributes(v, metadata):
    """``(kinds, rstrip, lstrip)`` of a ``GGUFVocab`` as llama.cpp ends up with them: ``kinds`` a
    list of sets of {NORMAL, UNKNOWN, CONTROL, USER_DEFINED} per token, ``rstrip`` / ``lstrip``
    sets of ids. ``NotImplementedError`` where llama.cpp's choice depends on its hash order (two
    candidates of one fill-in-the-middle kind that are not control tokens)."""
    ids = {t: i for i, t in enumerate(v.tokens)}
    kinds = [{int(k)} for k in v.types.tolist()]
    for keys, texts in FIM_TEXTS:
        if any(f"tokenizer.ggml.{k}" in metadata for k in keys):
            continue
        found = [ids[t] for t in texts if t in ids]
        if len(found) > 1 and any(CONTROL not in kinds[i] for i in found):
            raise NotImplementedError(f"{v.where}: fill-in-the-middle tokens {[v.tokens[i] for i in found]} without a "
                                      f"tokenizer.ggml.{keys[0]} key: llama.cpp makes one of them (in its hash "
                                      "order) a control token")
        for i in found:
            kinds[i].add(CONTROL)
    for t in EOG_TEXTS:
        if t in ids:
            kinds[ids[t]].add(CONTROL)
    for t in GPT_OSS_USER_DEFINED:
        if t in ids:
            kinds[ids[t]] = {USER_DEFINED}
    has = ids.__contains__
    if has("<|end|>") and ((has("<|return|>") and has("<|call|>"))
                           or ((has("<|call|>") or has("<|calls|>")) and has("<|flush|>"))):
        kinds[ids["<|end|>"]] = {USER_DEFINED}
    if has("<|tool_response>") and has("</s>"):
        kinds[ids["</s>"]] = {NORMAL}
    special = [i for i, k in enumerate(kinds) if k & {CONTROL, USER_DEFINED, UNKNOWN}]
    rstrip, lstrip = set(), set()
    name = metadata.get("general.name")
    name = name.lower() if isinstance(name, str) else ""
    arch = metadata.get("general.architecture")
    arch = arch if isinstance(arch, str) else ""
    if any(p in v.pre for p in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) \
            or any(a in arch for a in ("nomic-bert-moe", "jina-bert-v3")):
        if has("<mask>"):
            lstrip.add(ids["<mask>"])
    elif "phi-3" in name or "phi3" in name:
        missing = [t for t in ("</s>", "<unk>", "<s>", "<|endoftext|>") if not has(t)]
        if missing:
            raise ValueError(f"{v.where}: a Phi-3 vocabulary without {missing[0]!r} (llama.cpp refuses it)")
        rstrip.update(special)
        rstrip.add(ids["</s>"])
        rstrip.difference_update(ids[t] for t in ("<unk>", "<s>", "<|endoftext|>"))
    elif "modern-bert" in name and has("[MASK]"):
        lstrip.add(ids["[MASK]"])
    return kinds, rstrip, lstrip


def partition_tokens(v, metadata):
    """``[(token bytes, id, lstrip, rstrip)]`` llama.cpp cuts out of raw text with
    ``parse_special=false``: user-defined tokens that are not control or unknown, longest first."""
    kinds, rstrip, lstrip = token_attributes(v, metadata)
    found = [i for i, k in enumerate(kinds) if USER_DEFINED in k and not k & {CONTROL, UNKNOWN}]
    found.sort(key=lambda i: (-len(v.tokens[i].encode("utf-8")), i))
    return [(v.tokens[i].encode("utf-8"), i, i in lstrip, i in rstrip) for i in found]


def partition(raw, tokens):
    """llama.cpp's ``tokenizer_st_partition`` of the UTF-8 bytes ``raw``: a list of fragments,
    each ``bytes`` (text) or an ``int`` (a token cut out)."""
    frags = [raw] if raw else []
    for text, tid, lstrip, rstrip in tokens:
        out = []
        for f in frags:
            if type(f) is int or text not in f:
                out.append(f)
                continue
            pos = 0
            while True:
                at = f.find(text, pos)
                if at < 0:
                    break
                left = f[pos:at]
                if lstrip:
                    left = left.rstrip(_SPACE_BYTES)
                if left:
                    out.append(left)
                out.append(tid)
                pos = at + len(text)
                if rstrip:
                    while pos < len(f) and f[pos] in _SPACE_BYTES:
                        pos += 1
            if pos < len(f):
                out.append(f[pos:])
        frags = out
    return frags


class LlamaCppSPM(SentencePieceModel):
    """A ``llama`` GGUF vocabulary's model: llama.cpp's partition and per-fragment space prefix
    around sentencepiece's BPE (see the module docstring). ``encode``, ``encode_batch_ragged``
    and ``encode_as_pieces`` follow llama.cpp; offsets are refused for a text holding a token
    that is cut out; sampling and n-best are sentencepiece's (over the whole text). Pickles, and
    saves in the native format (the model proto and the tokens cut out)."""

    def __init__(self, proto, tokens):
        super().__init__(proto)
        self.partition_tokens = [(bytes(t), int(i), bool(ls), bool(rs)) for t, i, ls, rs in tokens]
        if any(not t or not 0 <= i < self.vocab_size for t, i, _, _ in self.partition_tokens):
            raise ValueError("a token cut out of the text must be non-empty text with an id in the vocabulary")
        # one scan tells whether a text holds any of them (most texts hold none)
        self._any_token = re.compile(b"|".join(re.escape(t) for t, _, _, _ in self.partition_tokens)) \
            if self.partition_tokens else None

    @classmethod
    def from_proto_bytes(cls, data, tokens):
        from .sentencepiece_model import read_model_proto
        return cls(read_model_proto(data), tokens)

    def state(self):
        return {"model_proto": self.serialized_model_proto(),
                "partition_tokens": [list(t) for t in self.partition_tokens]}

    @classmethod
    def from_state(cls, state):
        return cls.from_proto_bytes(state["model_proto"], [tuple(t) for t in state["partition_tokens"]])

    def __reduce__(self):
        return (type(self).from_state, (self.state(),))

    def _fragments(self, text):
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        if self._any_token is None or self._any_token.search(raw) is None:
            return None
        frags = partition(raw, self.partition_tokens)
        return None if len(frags) == 1 and type(frags[0]) is bytes else frags

    def encode(self, text, add_bos=False, add_eos=False, **opts):
        frags = self._fragments(text)
        if frags is None:
            return super().encode(text, add_bos, add_eos, **opts)
        self._check_opts(opts)
        self._F(add_bos, add_eos)  # the BOS / EOS checks
        parts = [np.array([self.bos_id], np.int32)] if add_bos else []
        for f in frags:
            parts.append(np.array([f], np.int32) if type(f) is int else super().encode(f))
        if add_eos:
            parts.append(np.array([self.eos_id], np.int32))
        return np.concatenate(parts).astype(np.int32) if parts else np.zeros(0, np.int32)

    def encode_batch_ragged(self, texts, add_bos=False, add_eos=False, num_threads=None, **opts):
        if isinstance(texts, (str, bytes)):
            raise TypeError("encode_batch expects a list of texts, not a single text")
        texts = list(texts)
        if not any(self._fragments(t) is not None for t in texts):
            return super().encode_batch_ragged(texts, add_bos, add_eos, num_threads, **opts)
        self._check_opts(opts)
        rows = [self.encode(t, add_bos, add_eos) for t in texts]
        offsets = np.zeros(len(rows) + 1, np.int64)
        offsets[1:] = np.cumsum([len(r) for r in rows])
        return (np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32)), offsets

    def encode_packed(self, buf, offsets, texts, add_bos=False, add_eos=False):
        return self.encode_batch_ragged(texts, add_bos, add_eos)

    def encode_as_pieces(self, text):
        return [self.id_to_piece(i) for i in self.encode(text).tolist()]

    def _refuse_cut(self, texts, what):
        if any(self._fragments(t) is not None for t in texts):
            raise NotImplementedError(f"{what} of a text holding a user-defined token: nbtok gives llama.cpp's ids "
                                      "for these GGUF vocabularies only through encode / encode_batch")

    def encode_batch_offsets(self, texts, *args, **opts):
        self._refuse_cut(texts, "offsets")
        return super().encode_batch_offsets(texts, *args, **opts)
