"""Atomic file writes: every save of nbtok goes through here (models in every format, the
corpus shards, the pre-token counts).

A save writes each target to a temporary file in the target's own directory (same file system,
so the rename cannot turn into a copy), flushes and ``fsync``s it, and only then renames it over
the target with ``os.replace``. A save of several files (GPT-2's ``vocab.json`` + ``merges.txt``,
a SentencePiece ``.model`` + ``.vocab``) writes and syncs every temporary before it renames the
first, so a failure while writing (an exception in the serializer, a full disk, ``RLIMIT_FSIZE``,
SIGKILL) leaves every old file byte for byte as it was, and no temporary behind (an exception
removes them; after SIGKILL a ``.<name>.<random>.tmp`` may remain, never under the target's
name). Between the renames of a multi-file save a crash can still leave one new file beside one
old one: POSIX has no rename of two files at once.

A temporary is created with mode 0o666 (the umask applies, as for ``open``); when the target
already exists its permission bits are copied. A target that is a symbolic link is written
through: the file it points to is replaced, the link stays.
"""
import contextlib
import os
import secrets


def _temporary_beside(path):
    """``(fd, name)`` of a new, empty file in ``path``'s directory."""
    directory, name = os.path.split(path)
    while True:
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def _target(path):
    path = os.fspath(path)
    return os.path.realpath(path) if os.path.islink(path) else path


def _sync_directory(directory):
    """Make the renames in ``directory`` durable (best effort: not every file system allows
    opening a directory)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_files(*paths, text=False):
    """Open a temporary file beside each of ``paths``; yield their file objects (binary, or
    UTF-8 text with ``text=True``) in the same order. On a clean exit every file is flushed and
    synced, then each is renamed over its target; on an exception (or a failing flush) every
    temporary is removed, the targets are untouched, and the exception propagates.

    Examples:
        >>> with atomic_files("vocab.json", "merges.txt", text=True) as (v, m):  # doctest: +SKIP
        ...     v.write("{}"); m.write("#version: 0.2\\n")
    """
    targets = [_target(p) for p in paths]
    files, temporaries = [], []
    try:
        for target in targets:
            fd, tmp = _temporary_beside(target)
            temporaries.append(tmp)
            files.append(os.fdopen(fd, "w", encoding="utf-8", newline="") if text else os.fdopen(fd, "wb"))
        yield tuple(files)
        for f in files:
            f.flush()
            os.fsync(f.fileno())
        for f in files:
            f.close()
        for target, tmp in zip(targets, temporaries):
            try:
                os.chmod(tmp, os.stat(target).st_mode & 0o7777)
            except FileNotFoundError:
                pass
        for target, tmp in zip(targets, temporaries):
            os.replace(tmp, target)
        for directory in {os.path.dirname(t) for t in targets}:
            _sync_directory(directory)
    finally:
        for f in files:
            try:
                f.close()
            except OSError:
                pass
        for tmp in temporaries:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def write_atomic(path, data):
    """Write ``data`` (``bytes``, or ``str`` written as UTF-8) to ``path`` atomically."""
    with atomic_files(path, text=isinstance(data, str)) as (f,):
        f.write(data)


def write_many_atomic(items):
    """Write every ``(path, data)`` of ``items`` atomically, all temporaries before any rename
    (``data`` is ``bytes`` or a ``str`` written as UTF-8)."""
    items = list(items)
    with atomic_files(*(p for p, _ in items)) as files:
        for f, (_, data) in zip(files, items):
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
