"""Added tokens (HF ``AddedVocabulary``): the trie ``pipeline.unit_kernels.added_split`` walks to find
them leftmost-longest in the text, before normalizing (``normalized: false``) or after."""
import numpy as np

from ..kernels.hashmap import IntMap
from .units import MAX_ID, int_id


def added_token_trie(pats):
    """The trie of ``[(content, token)]``: ``(keys, values, term, ids, flags, map)``, children in a
    hash map keyed ``node * 0x110000 + code point``; ``flags`` bits 1 single_word, 2 lstrip,
    4 rstrip, 8 special."""
    children = {}
    term = [-1]
    flags, ids = [], []
    for content, a in pats:
        node = 0
        for ch in content:
            key = node * 0x110000 + ord(ch)
            nxt = children.get(key)
            if nxt is None:
                nxt = len(term)
                children[key] = nxt
                term.append(-1)
            node = nxt
        if term[node] < 0:   # first occurrence of equal contents wins
            term[node] = len(ids)
            ids.append(a["id"])
            flags.append(int(a["single_word"]) | 2 * int(a["lstrip"]) | 4 * int(a["rstrip"]) | 8 * int(a["special"]))
    mp = IntMap.from_arrays(np.array(list(children), np.int64), np.array(list(children.values()), np.int64))
    return (mp.keys, mp.values, np.array(term, np.int64), np.array(ids, np.int64), np.array(flags, np.int64), mp)


def resolve_ids(added, token_to_id, model_size):
    """``{id: token}`` for the file's ``added_tokens`` list, as HF numbers them: HF ignores the
    ids written in the file (``AddedVocabulary::add_tokens``): each token gets the id it already
    has (added before, or in the model's vocabulary ``token_to_id``), else the next free id from
    ``model_size``. Each token is a dict of its content and flags."""
    by_content, by_id = {}, {}
    next_id = model_size
    for e in added:
        if not isinstance(e, dict) or not isinstance(e.get("content"), str):
            raise ValueError(f"added token must be an object with a string 'content', got {e!r}")
        if "id" in e:
            int_id(e.get("id"), "added token")
        if not e["content"]:
            continue
        tok = {"content": e["content"], "single_word": bool(e.get("single_word", False)),
               "lstrip": bool(e.get("lstrip", False)), "rstrip": bool(e.get("rstrip", False)),
               "normalized": bool(e.get("normalized", not e.get("special", False))),
               "special": bool(e.get("special", False))}
        i = by_content.get(tok["content"])
        if i is not None and by_id.get(i) == tok:
            continue
        if i is None:
            i = token_to_id.get(tok["content"])
        if i is None:
            i = next_id
            next_id += 1
        if i >= MAX_ID:
            raise ValueError("added token id is too large")
        by_content[tok["content"]] = i
        by_id[i] = tok
    return by_id
