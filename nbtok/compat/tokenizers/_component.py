"""The base of every pipeline component built in Python (``models.BPE(...)``,
``normalizers.NFKC()``, ...): it holds its ``tokenizer.json`` fragment, HF's own schema, and
nothing else; a ``Tokenizer`` assembles the fragments and nbtok's pipeline runs them.

Examples:
    >>> from nbtok.compat.tokenizers import normalizers
    >>> n = normalizers.Strip(right=False)
    >>> n.right = True
    >>> n._json
    {'type': 'Strip', 'strip_left': True, 'strip_right': True}
"""
import json

_MISSING = object()
EDITS = [0]   # bumped on every change of a component: tokenizers rebuild their pipeline lazily


class Component:
    """A component: ``_type`` (the JSON type), ``_fields`` ((name, json key, default), ...) in
    HF's constructor order; ``_family`` names the submodule whose ``_from_json`` rebuilds it."""

    _type = None
    _fields = ()
    _hidden = ()         # fields HF gives no Python access to (in the JSON only)
    _registry = None     # family: {json type: class}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "_registry" in cls.__dict__:
            return
        if cls._type is not None:
            for base in cls.__mro__[1:]:
                if "_registry" in base.__dict__ and base._registry is not None:
                    base._registry.setdefault(cls._type, cls)
                    break

    def __init__(self, *args, **kwargs):
        if len(args) > len(self._fields):
            raise TypeError(f"{type(self).__name__}() takes at most {len(self._fields)} positional arguments")
        js = {"type": self._type}
        names = [f[0] for f in self._fields]
        for k in kwargs:
            if k not in names:
                raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {k!r}")
        for i, (name, key, default) in enumerate(self._fields):
            v = args[i] if i < len(args) else kwargs.get(name, default)
            js[key] = self._to_json(name, v)
        object.__setattr__(self, "_json", js)

    # subclasses convert values where HF's Python form differs from its JSON form
    def _to_json(self, name, value):
        return value

    def _from_json_value(self, name, value):
        return value

    def _key(self, name):
        if name in self._hidden:
            raise AttributeError(f"{type(self).__name__!r} object has no readable or writable attribute {name!r}")
        for n, key, _ in self._fields:
            if n == name:
                return key
        return None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        key = self._key(name)
        if key is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self._from_json_value(name, self._json.get(key))

    def __setattr__(self, name, value):
        key = self._key(name)
        if key is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._json[key] = self._to_json(name, value)
        EDITS[0] += 1

    @classmethod
    def _wrap(cls, js):
        """The component object of a JSON fragment, sharing it (edits change the tokenizer)."""
        if js is None:
            return None
        reg = cls._registry or {}
        sub = reg.get(js.get("type"))
        if sub is None:
            raise NotImplementedError(f"{cls.__name__} {js.get('type')!r} is not supported by nbtok")
        obj = sub.__new__(sub)
        object.__setattr__(obj, "_json", js)
        return obj

    def __getstate__(self):
        return json.dumps(self._json, ensure_ascii=False)

    def __setstate__(self, state):
        object.__setattr__(self, "_json", json.loads(state))

    def __repr__(self):
        return repr_json(self._json)

    def __eq__(self, other):
        return type(self) is type(other) and self._json == other._json

    __hash__ = object.__hash__


class Regex:
    """A regular expression pattern, for ``Replace`` / ``Split`` (HF's ``tokenizers.Regex``).

    Examples:
        >>> Regex(r"\\s+").pattern
        '\\\\s+'
    """

    def __init__(self, pattern):
        if not isinstance(pattern, str):
            raise TypeError("Regex pattern must be a str")
        self.pattern = pattern

    def __repr__(self):
        return f"Regex({self.pattern!r})"


def pattern_json(p):
    """HF's JSON form of a ``str`` / ``Regex`` pattern."""
    if isinstance(p, Regex):
        return {"Regex": p.pattern}
    if isinstance(p, str):
        return {"String": p}
    if isinstance(p, dict) and len(p) == 1 and set(p) <= {"String", "Regex"}:
        return p
    raise TypeError("pattern must be a str or a tokenizers.Regex")


def pattern_value(js):
    if isinstance(js, dict) and "Regex" in js:
        return Regex(js["Regex"])
    if isinstance(js, dict):
        return js.get("String")
    return js


class SequenceMixin:
    """``Sequence`` components: a list of components under ``_items_key``, indexable."""

    _items_key = None

    def __init__(self, items):
        if not isinstance(items, (list, tuple)):
            raise TypeError(f"{type(self).__name__} takes a list")
        base = type(self).__mro__[2]
        for it in items:
            if not isinstance(it, base):
                raise TypeError(f"{type(self).__name__}: every item must be a {base.__name__}")
        object.__setattr__(self, "_json", {"type": "Sequence", self._items_key: [it._json for it in items]})

    def __getitem__(self, i):
        return type(self).__mro__[2]._wrap(self._json[self._items_key][i])

    def __len__(self):
        return len(self._json[self._items_key])

    def __setitem__(self, i, value):
        base = type(self).__mro__[2]
        if not isinstance(value, base):
            raise TypeError(f"a {base.__name__} is needed")
        self._json[self._items_key][i] = value._json
        EDITS[0] += 1


def repr_json(v):
    """HF's ``repr`` of a component / tokenizer.json value: ``Name(key=value, ...)``."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(map(repr_json, v)) + "]"
    if isinstance(v, dict):
        if "type" in v and isinstance(v["type"], str):
            return v["type"] + "(" + ", ".join(f"{k}={_enum(k, x)}" for k, x in v.items() if k != "type") + ")"
        if len(v) == 1 and next(iter(v)) in ("Regex", "String") and isinstance(next(iter(v.values())), str):
            name, body = next(iter(v.items()))
            return f'{name}("{body}")'
        if len(v) == 1 and next(iter(v)) in ("Sequence", "SpecialToken") and isinstance(next(iter(v.values())), dict):
            name, body = next(iter(v.items()))
            return name + "(" + ", ".join(f"{k}={x if name == 'Sequence' and k == 'id' else repr_json(x)}"
                                          for k, x in body.items()) + ")"
        if v and all(isinstance(x, dict) and set(x) == {"id", "ids", "tokens"} for x in v.values()):
            return "{" + ", ".join(f'"{k}":SpecialToken(' + ", ".join(f"{a}={repr_json(b)}" for a, b in x.items()) + ")"
                                   for k, x in v.items()) + "}"
        return "{" + ", ".join(f'"{k}":{repr_json(x)}' for k, x in v.items()) + "}"
    return repr(v)


def _enum(key, x):
    """Rust's Debug writes enum values bare: ``behavior=Isolated``, ``prepend_scheme=Always``."""
    if key == "behavior" and isinstance(x, str):
        return x
    if key == "prepend_scheme" and isinstance(x, str):
        return x.capitalize()
    return repr_json(x)
