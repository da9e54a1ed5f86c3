"""``AddedToken`` and HF's added vocabulary rules (which id a new token gets, which are ignored)."""


class AddedToken:
    """A token matched in the text before the model runs (HF's ``tokenizers.AddedToken``).

    ``normalized`` defaults to ``not special``.

    Examples:
        >>> AddedToken("<mask>", lstrip=True)
        AddedToken("<mask>", rstrip=False, lstrip=True, single_word=False, normalized=True, special=False)
    """

    def __init__(self, content="", single_word=False, lstrip=False, rstrip=False, normalized=None,
                 special=False):
        if not isinstance(content, str):
            raise TypeError("AddedToken content must be a str")
        self.content = content
        self.single_word = bool(single_word)
        self.lstrip = bool(lstrip)
        self.rstrip = bool(rstrip)
        self._normalized = None if normalized is None else bool(normalized)
        self.special = bool(special)

    @property
    def normalized(self):
        return (not self.special) if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, v):
        self._normalized = bool(v)

    def _json(self, i):
        return {"id": i, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}

    @classmethod
    def _from_json(cls, js):
        return cls(js["content"], js.get("single_word", False), js.get("lstrip", False),
                   js.get("rstrip", False), js.get("normalized", not js.get("special", False)),
                   js.get("special", False))

    def __str__(self):
        return self.content

    def __repr__(self):
        b = lambda v: "True" if v else "False"
        return (f'AddedToken("{self.content}", rstrip={b(self.rstrip)}, lstrip={b(self.lstrip)}, '
                f'single_word={b(self.single_word)}, normalized={b(self.normalized)}, special={b(self.special)})')

    def __getstate__(self):
        return self._json(0)

    def __setstate__(self, st):
        self.__init__(st["content"], st["single_word"], st["lstrip"], st["rstrip"], st["normalized"], st["special"])

    def __eq__(self, other):
        if isinstance(other, AddedToken):
            return self.content == other.content
        return NotImplemented

    def __hash__(self):
        return hash(self.content)


def add_to_vocabulary(added, tokens, model_vocab, model_size, special):
    """HF's ``AddedVocabulary::add_tokens``: ``added`` is the list of ``tokenizer.json``
    ``added_tokens`` objects (changed in place); returns how many of ``tokens`` were added.
    A token already added with the same properties is ignored; one already added or in the
    model's vocabulary keeps its id (its properties are replaced); a new one gets the next id
    after the model's and the added ones'."""
    objs = []
    for t in tokens:
        if isinstance(t, str):
            t = AddedToken(t, special=special)
        elif not isinstance(t, AddedToken):
            if not all(hasattr(t, k) for k in ("content", "single_word", "lstrip", "rstrip", "normalized", "special")):
                raise TypeError("Input must be a List[Union[str, AddedToken]]")
            if special:     # another library's AddedToken (transformers passes HF's): its fields
                t.special = True
            t = AddedToken(t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
        elif special:
            t.special = True
        objs.append(t)
    by_content = {a["content"]: a for a in added}
    by_id = {a["id"]: a for a in added}
    if by_id:
        top = max(by_id)
        next_id = top + 1 if (top >= model_size or model_size == 0) else model_size
    else:
        next_id = model_size
    ignored = 0
    for t in objs:
        if not t.content:
            ignored += 1
            continue
        old = by_content.get(t.content)
        if old is not None and old == t._json(old["id"]):
            ignored += 1
            continue
        if old is not None:
            i = old["id"]
        elif t.content in model_vocab:
            i = model_vocab[t.content]
        else:
            i, next_id = next_id, next_id + 1
        by_id[i] = by_content[t.content] = t._json(i)
    added[:] = sorted(by_id.values(), key=lambda a: a["id"])
    return len(objs) - ignored
