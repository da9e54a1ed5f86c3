"""Per-sequence ``Encoding`` objects from a ``tokenizer.json`` pipeline, before its
post-processor: ids, token strings, original char offsets and word indices, as HF's
``encode_single_sequence`` gives them (a word is one split of the pre-tokenizer, added tokens
included). Used by the per-encoding API (``nbtok.compat.tokenizers``); the batch API
(``HuggingFaceModel.encode_batch_with_offsets``) returns the same ids and offsets as arrays.

Examples:
    >>> import nbtok
    >>> tok = nbtok.Tokenizer.from_file("tests/data/tiny_bpe.json")   # doctest: +SKIP
    >>> [e.tokens for e in sequence_encodings(tok.model, ["a b"])]     # doctest: +SKIP
"""
import gc
from contextlib import contextmanager

import numpy as np

from . import unit_kernels as K
from ..post_processors.encoding import Encoding


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused while a batch's ``Encoding`` objects are built
    (they hold no cycles): each of the many lists they are made of otherwise counts towards a
    collection that walks every list built so far. GPT-2's tokenizer.json, 16,919 lines through
    ``compat.tokenizers.Tokenizer.encode_batch``: 1.13 s -> 0.73 s of CPU. A
    collector the caller had paused stays paused."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def sequence_encodings(model, texts, type_id=0, split_special_tokens=False):
    """One ``Encoding`` per text of ``texts`` (a ``HuggingFaceModel``'s stages, no post-processor,
    no truncation or padding). A Unigram model's unknown token shows the text it covers, as
    HF's ``Encoding.tokens`` does."""
    if not isinstance(texts, list) or any(not isinstance(t, str) for t in texts):
        raise TypeError("texts must be a list of str")
    if not texts:
        return []
    b = model._pre_model(texts, split_special_tokens, None)
    t_ids, t_s, t_e, t_off = model._model(b, None)
    ids, st, en, doc_off, _, _ = K.assemble(b.U, t_ids, t_s, t_e, t_off, b.a_s, b.a_e, b.n_docs, b.doc_start)
    if ids.size and ids.min() < 0:
        raise ValueError("the text needs the unknown token, but the model defines none")
    U = b.U
    added = U[:, K.TOK] >= 0
    per_unit = np.where(added, 1, np.diff(t_off))
    unit_of = np.repeat(np.arange(len(U)), per_unit)
    # a word is a non-empty split: its rank among the document's non-empty units
    nonempty = added | (U[:, K.END] > U[:, K.START])
    before = np.zeros(len(U) + 1, np.int64)     # non-empty units before each unit
    np.cumsum(nonempty, out=before[1:])
    doc_first = np.searchsorted(U[:, K.DOC], np.arange(len(texts)))   # (units are in document order)
    words = before[unit_of + 1] - 1 - before[doc_first[U[unit_of, K.DOC]]]
    tokens = _token_strings(model)[ids].tolist()
    if model.kind == "Unigram" and model.unk_id >= 0:
        from_text = ~np.repeat(added, per_unit)
        t_index = np.cumsum(from_text) - 1
        for k in np.nonzero((ids == model.unk_id) & from_text)[0].tolist():
            t = t_index[k]
            tokens[k] = b.cps[t_s[t]:t_e[t]].tobytes().decode("utf-32-le")
    # an added token shows the text it was found in (with the white space lstrip / rstrip took),
    # normalized if the token matches normalized text
    is_added = np.repeat(added, per_unit)
    if is_added.any():
        normalized = {a["id"]: a["normalized"] for a in model.added}
        doc_of = np.repeat(np.arange(len(texts)), np.diff(doc_off))
        for k in np.nonzero(is_added)[0].tolist():
            text = texts[doc_of[k]][st[k]:en[k]]
            if normalized.get(int(ids[k])) and model.normalizer is not None:
                text = model.normalizer.normalize_str(text)
            tokens[k] = text
    ids_l, w_l, off = ids.tolist(), words.tolist(), doc_off.tolist()
    spans = list(zip(st.tolist(), en.tolist()))
    return [Encoding.of_sequence(ids_l[a:z], type_id, tokens[a:z], w_l[a:z], spans[a:z])
            for a, z in zip(off[:-1], off[1:])]


def _token_strings(model):
    """The model's token strings as an object array (cached on the model): one gather gives the
    strings of a batch's ids."""
    arr = getattr(model, "_token_strings", None)
    if arr is None or len(arr) != len(model.tokens):
        arr = np.empty(len(model.tokens), object)
        arr[:] = model.tokens
        model._token_strings = arr
    return arr
