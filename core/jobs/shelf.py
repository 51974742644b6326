"""The shelf: a folder where the worker processes of one service publish their jobs, so
that any of them answers (or cancels) a job another one runs."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .job import error_of

if TYPE_CHECKING:
    from .job import Job


class Shelf:
    """A folder where each worker process's :class:`JobPool` publishes its jobs (one JSON
    file each, written whole), so that any worker answers a job's state and result, and
    asks the one holding it to cancel it (a ``.cancel`` file beside). A job whose file
    has not been written for :data:`STALE` seconds while unfinished was held by a worker
    that went away: it is answered as failed. The folder is the user's own (mode 0700).
    """

    STALE = 30.0

    def __init__(self, folder: str, keep: float) -> None:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if os.stat(folder).st_uid != os.getuid():
            raise InputError(f"the lab's job folder {folder!r} belongs to another user")
        self.folder = folder
        self.keep = keep

    def _path(self, job_id: str, suffix: str = ".json") -> str | None:
        if not _JOB_ID.fullmatch(job_id):
            return None
        return os.path.join(self.folder, job_id + suffix)

    def publish(self, job: Job) -> None:
        path = self._path(job.id)
        if path is None:
            return
        part = f"{path}.{os.getpid()}.{threading.get_ident()}.part"
        try:
            with open(part, "w", encoding="utf-8") as out:
                json.dump(job.to_dict(), out)
            os.replace(part, path)
        finally:
            if os.path.exists(part):
                os.remove(part)

    def sweep(self) -> None:
        """Remove the files no worker will read again: older than ``keep`` and
        :data:`STALE` together (a worker that restarted never removes its jobs' files)."""
        limit = time.time() - self.keep - self.STALE
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        for name in names:
            if not name.endswith((".json", ".cancel", ".part")):
                continue
            path = os.path.join(self.folder, name)
            try:
                if os.stat(path).st_mtime < limit:
                    os.remove(path)
            except OSError:
                pass  # (another worker swept it first)

    def read(self, job_id: str) -> dict[str, Any] | None:
        path = self._path(job_id)
        try:
            with open(path or "", encoding="utf-8") as source:
                found: dict[str, Any] = json.load(source)
            age = time.time() - os.stat(path or "").st_mtime
        except (OSError, ValueError):
            return None
        if found["state"] in ("queued", "running") and age > self.STALE:
            message = "the worker process that held the job went away"
            return {**found, "state": "failed", "error": error_of(RuntimeError(message), 500)}
        return None if found["state"] not in ("queued", "running") and age > self.keep else found

    def ask_cancel(self, job_id: str) -> None:
        path = self._path(job_id, ".cancel")
        if path is not None:
            with open(path, "w", encoding="utf-8"):
                pass

    def cancel_asked(self, job_id: str) -> bool:
        path = self._path(job_id, ".cancel")
        return path is not None and os.path.exists(path)

    def remove(self, job_id: str) -> None:
        for suffix in (".json", ".cancel"):
            path = self._path(job_id, suffix)
            if path is not None and os.path.exists(path):
                os.remove(path)


_JOB_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
