"""Writing the files the command line produces without ever leaving a truncated one.

A file is written to a temporary file in the same folder, flushed to disk (``fsync``) and
then renamed over the target (``os.replace``, atomic on POSIX and Windows). If anything
fails on the way (a full disk, an interrupted write), the temporary file is removed and
a file that was already there is left exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import RankcraftError

__all__ = ["atomic_file", "write_atomically"]


def _mode_for(target: Path) -> int:
    """The permission bits the file should get: the old file's, else the umask's default."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_file(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path``'s new contents into; it replaces ``path`` only when
    the ``with`` block ends without an error.

    :raises RankcraftError: the file could not be written (the message names it and the
        reason; the old file is unchanged).
    """
    target = Path(path)
    folder = target.parent
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".partial")
    except OSError as exc:
        raise RankcraftError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise RankcraftError(
                f"cannot write {str(target)!r}: {exc.strerror or exc} "
                "(a file that was there is unchanged)"
            ) from None
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where possible
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` with :func:`atomic_file`."""
    with atomic_file(path) as handle:
        handle.write(text.encode("utf-8"))
