"""When the cyclic garbage collector runs around rating batches.

A write transaction pauses the collector (a long batch allocates many small objects that
its passes would walk again and again) and, as it ends, moves what it made to the oldest
generation (:func:`keep_batch`), running a full pass once enough was moved; a consumer of
a log pauses it for its whole run (:func:`paused`) and passes after each batch
(:func:`collect`). docs/decisions.md, "A full pass of the collector after batches that
moved enough", says why.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collect", "keep_batch", "paused"]


def _live() -> int:
    """Objects in the oldest generation (all that live, right after a full pass)."""
    return len(gc.get_objects(generation=2))


FULL_PASS_FLOOR = 500_000
"""Objects batches may move to the collector's oldest generation before a full pass
(:func:`keep_batch`), at the least."""


class _Moved:
    """What batches moved to the oldest generation since the collector's last full pass
    started by :func:`keep_batch` (an overcount: what they return and is freed after
    counts too), and what lived there after it (process-wide, as the collector is)."""

    since = 0
    live = 0


def keep_batch() -> None:
    """Move what a batch made and keeps (a store in memory keeps every match) straight to
    the collector's oldest generation: the next young collection would otherwise walk
    all of it at once. The collector starts its full passes from what its own
    collections promote, which never counts what is moved so, so the cycles a batch
    leaves (a scratch league of a re-rate: its matches, entries and parts refer to each
    other) would stay until the process ends: a full pass runs here once more than a
    quarter of what lives there (at least :data:`FULL_PASS_FLOOR` objects) was moved
    since the last, as the collector's own rule does with what it promotes."""
    made = gc.get_count()[0]  # (the collector was paused: the batch's objects, net)
    gc.freeze()
    gc.unfreeze()
    _Moved.since += made
    if _Moved.since > max(FULL_PASS_FLOOR, _Moved.live // 4):
        gc.collect()
        # (counted, not estimated: what a batch returns and frees later is counted as
        # moved, the count being reset by the freeze, so an estimate would only grow)
        _Moved.live = _live()
        _Moved.since = 0


COLLECT_AFTER = 200_000
"""Objects the cyclic garbage collector may see made (net of those freed) before it
passes over them while consuming (:func:`collect`)."""
FULL_EVERY = 10
"""Young passes of :func:`collect` to one full pass."""


class _Passes:
    young = 0  # (process-wide, as the collector is)


def collect() -> None:
    """The cyclic collector's pass over what was made since its last (its young
    generations), once :data:`COLLECT_AFTER` more objects live, and over everything every
    :data:`FULL_EVERY` passes (it is paused while the consumer runs,
    :func:`paused`): the cycles a batch leaves are freed (a late match placed
    by a re-rate leaves tens of thousands), the batch's messages are not walked again and
    again while it is rated, and what lives on is walked only now and then."""
    if gc.get_count()[0] < COLLECT_AFTER:
        return
    _Passes.young += 1
    gc.collect(2 if _Passes.young % FULL_EVERY == 0 else 1)


@contextlib.contextmanager
def paused(keep: bool = False) -> Iterator[None]:
    """The cyclic garbage collector paused, and resumed as it was: a rating batch's
    objects are not walked again and again while it runs (with ``keep``, what it made is
    then moved out of the young generations, :func:`keep_batch`). The consumer pauses it
    for its whole run and runs it after each batch once enough new objects live
    (:func:`collect`): its automatic passes walked each batch's messages, still held,
    again and again, about a tenth of the consumer's time. Reference counting frees
    everything else as before."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if keep:
                keep_batch()
            gc.enable()
