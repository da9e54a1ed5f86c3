"""An on-disk cache of the arrays a model derives from its files, so that a later process
reads them back instead of running the build kernels (and loading each one from numba's
cache): ``load(name, key)`` and ``store(name, key, arrays)``.

Where: ``$NBTOK_CACHE_DIR``, else ``$XDG_CACHE_HOME/nbtok``, else ``~/.cache/nbtok``.
``NBTOK_CACHE_DIR=""`` turns the cache off. A directory that cannot be written to is the same
as no cache: nothing here ever fails a load.

One file per ``name`` (e.g. the digest of a ranks file): a later build for the same name
with a different ``key`` (another nbtok, another format) replaces it, so the directory does
not grow with every version. The file is::

    b"nbtokarr" | uint64 header length | sha256 of everything after it (32 bytes)
    | header (JSON: key, and name, dtype, shape, offset of each array) | arrays
    (every array at a multiple of 64 bytes from the start of the file)

Kernels do not check bounds, so a file is used only if its digest, key, names, dtypes and
sizes all check out; anything else reads as a miss and the arrays are built and stored
again. Files are written to a temporary name in the same directory and renamed over the old
one, so a concurrent reader sees the old file or the new one, never half of one; a temporary
file left by a writer that was killed is removed by the next store after an hour.
"""
import functools
import hashlib
import json
import os
import sys
import tempfile
import time

import numpy as np

FORMAT_VERSION = 1  # bump when the file layout changes
MAGIC = b"nbtokarr"
_HEAD = len(MAGIC) + 8 + 32
_ALIGN = 64
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def cache_dir():
    """The cache directory, or None when the cache is off (``NBTOK_CACHE_DIR=""``)."""
    env = os.environ.get("NBTOK_CACHE_DIR")
    if env is not None:
        return env or None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        home = os.path.expanduser("~")
        if home.startswith("~"):  # no home directory: no cache (not one in the working directory)
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "nbtok")


def digest(*parts):
    """Hex digest of ``parts`` (bytes, or anything with a stable ``repr``)."""
    h = hashlib.sha256()
    for p in parts:
        p = p if isinstance(p, (bytes, bytearray, memoryview)) else repr(p).encode()
        h.update(len(p).to_bytes(8, "little"))
        h.update(p)
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def source_key(*sources):
    """Digest of the format version, this platform's byte order and the text of ``sources``
    (paths in the nbtok package): the code that builds and reads the cached arrays. Any edit
    to them (another nbtok, another branch sharing the cache directory) makes the files stale."""
    from . import __version__
    parts = [FORMAT_VERSION, sys.byteorder, np.dtype(np.intp).str]
    for s in sources:
        try:
            with open(os.path.join(_PACKAGE, s), "rb") as f:
                parts.append(f.read())
        except OSError:  # no source files (a zip, a frozen app): trust the version number
            parts.append((s, __version__))
    return digest(*parts)


def _path(directory, name):
    return os.path.join(directory, name + ".arrays")


def load(name, key, directory=None):
    """The arrays stored under ``name`` for ``key`` (a dict), or None if there is no valid
    file."""
    directory = directory or cache_dir()
    if directory is None:
        return None
    try:
        with open(_path(directory, name), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            buf = np.empty(size, np.uint8)  # writable: kernels are compiled for mutable arrays
            if size < _HEAD or f.readinto(buf) != size:
                return None
        data = memoryview(buf)
        header_len = int.from_bytes(data[8:16], "little")
        if data[:8] != MAGIC or _HEAD + header_len > size:
            return None
        if hashlib.sha256(data[_HEAD:]).digest() != bytes(data[16:_HEAD]):
            return None
        header = json.loads(bytes(data[_HEAD:_HEAD + header_len]))
        if header.get("key") != key:
            return None
        payload = buf[_HEAD + header_len:]
        arrays = {}
        for array_name, dtype, shape, offset in header["arrays"]:
            dtype = np.dtype(dtype)
            nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
            if offset % _ALIGN or offset + nbytes > payload.shape[0] or dtype.hasobject:
                return None
            arrays[array_name] = payload[offset:offset + nbytes].view(dtype).reshape(shape)
        return arrays
    except (OSError, ValueError, TypeError, KeyError):
        return None


def store(name, key, arrays, directory=None):
    """Write ``arrays`` (a dict of ndarrays) under ``name`` for ``key``; False if it could
    not be written (never raises for that)."""
    directory = directory or cache_dir()
    if directory is None:
        return False
    entries, chunks, offset = [], [], 0
    for array_name, a in arrays.items():
        a = np.ascontiguousarray(a)
        pad = -offset % _ALIGN
        offset += pad
        entries.append([array_name, a.dtype.str, list(a.shape), offset])
        chunks += [bytes(pad), a]
        offset += a.nbytes
    header = json.dumps({"key": key, "arrays": entries}).encode()
    header += b" " * (-(_HEAD + len(header)) % _ALIGN)  # the arrays start 64-byte aligned
    h = hashlib.sha256(header)
    for c in chunks:
        h.update(c)
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".arrays")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + len(header).to_bytes(8, "little") + h.digest() + header)
            for c in chunks:
                f.write(c)
        os.chmod(tmp, 0o644)  # (mkstemp's is 0o600)
        os.replace(tmp, _path(directory, name))
        _remove_stale_temporaries(directory)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


STALE_SECONDS = 3600  # a temporary file this old belongs to no writer still running


def _remove_stale_temporaries(directory):
    """Delete ``.tmp-*.arrays`` files older than ``STALE_SECONDS`` (a writer killed between
    writing and renaming leaves one behind); a writer at work has a fresh one."""
    now = time.time()
    try:
        names = [n for n in os.listdir(directory) if n.startswith(".tmp-") and n.endswith(".arrays")]
    except OSError:
        return
    for n in names:
        path = os.path.join(directory, n)
        try:
            if now - os.stat(path).st_mtime > STALE_SECONDS:
                os.unlink(path)
        except OSError:
            pass
