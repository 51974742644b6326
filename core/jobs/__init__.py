"""Work the HTTP service does off its event loop: the league's thread and a pool of jobs.

The service's event loop only reads requests and writes answers; it never waits on the
league or on a long computation, so ``/health`` and every other request keep answering.

- :class:`LeagueThread`: one thread with its own event loop that runs every handler
  touching the league, one at a time (a league is not shared between threads), its
  request body brought over from the service's loop (:func:`LeagueThread.handler`);
  whatever the work raises, the thread lives on (:class:`Escaped`).
- :class:`Worker`: short CPU work an anonymous request causes (decoding a large body,
  checking a ruleset, a forecast's place integral), in a worker process kept between
  requests, so that neither the loop nor the league's thread (one interpreter lock)
  pays for it.
- :class:`JobPool`: long work (a ruleset lab's replays) as *jobs*: submitted, queued,
  run in at most ``workers`` processes at once (each job its own process, so that a
  job can be cancelled by ending it), with its progress (``done`` of ``total``), a
  limit of unfinished jobs per client and in all, a time limit, and its result kept
  ``keep`` seconds after it ends.

>>> pool = JobPool(workers=1)
>>> job = pool.submit("me", waiting, 0.01, 3)
>>> _ = pool.join(job.id, 60)
>>> pool.get(job.id).state, pool.get(job.id).to_dict()["result"]
('done', {'waited': 0.03})
>>> pool.close()
"""

from .job import STATES as STATES
from .job import Busy, Job, Refused, UnknownJob, error_of, outcome_of, plugin_error, waiting
from .league_thread import Escaped, LeagueThread
from .pool import ENDED_KEPT as ENDED_KEPT
from .pool import JobPool
from .shelf import Shelf
from .worker import Worker

__all__ = [
    "Busy",
    "Escaped",
    "Job",
    "JobPool",
    "LeagueThread",
    "Refused",
    "Shelf",
    "UnknownJob",
    "Worker",
    "error_of",
    "outcome_of",
    "plugin_error",
    "waiting",
]
