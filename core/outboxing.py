"""The outbox of a league fed by ``rankcraft consume``: its events kept with each batch,
published after the batch's acknowledgement, and removed once JetStream has stored them.

A batch's events are kept in the outbox in the batch's own transaction (:meth:`Outbox.keep`)
and published, once the batch is acknowledged, as one round (:meth:`Outbox.send`) whose
acknowledgements arrive while the next batch is fetched and rated; a round confirmed
(every event acknowledged) lets its rows go with the next transaction, in order. A round
refused or not confirmed in time (a server away) is given up: its rows stay, and the
outbox is then published from the store (:meth:`Outbox.publish`), in order, each round
confirmed before its rows are removed; JetStream drops the copies it already holds
(their ``Nats-Msg-Id``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from .jetstream import Publisher, Round
from .relay import Relay

__all__ = ["Outbox"]

IN_FLIGHT = 3
"""Rounds that may await JetStream's acknowledgements at once (then the oldest is waited
for)."""
READ = 10_000
"""Events read from the store per round when the outbox is published from it."""


def _lost() -> tuple[type[BaseException], ...]:
    """The errors of a round not confirmed: a connection lost, a server away, a refusal."""
    import nats

    return (TimeoutError, OSError, nats.errors.Error)


class Outbox:
    """The outbox of ``league``, published by ``publisher``; ``counts.published`` counts
    the outbox rows whose publication JetStream acknowledged."""

    def __init__(self, league: Any, publisher: Publisher | Relay, counts: Any) -> None:
        self.league, self.publisher, self.counts = league, publisher, counts
        self.flights: deque[tuple[Round, int]] = deque()  # (a round, its last row's n)
        self.drop_upto = 0  # rows confirmed, removed with the next transaction
        self.stale = False  # rows to publish from the store (a round given up)
        self.last_kept = 0  # the last row :meth:`keep` kept in the open transaction
        self.unsent = False  # rows committed that no round has been sent for yet

    def keep(self, events: Sequence[tuple[str, str]]) -> int:
        """In the open transaction: remove the rows confirmed, keep ``events``; the number
        of the last row kept (0: none). :meth:`kept` once the transaction committed."""
        store = self.league.store
        if self.drop_upto:
            store.drop_outbox(self.drop_upto)
        self.last_kept = int(store.add_outbox(events))
        return self.last_kept

    def kept(self) -> None:
        """The transaction of :meth:`keep` committed (the confirmed rows are gone). Rows
        committed before and never sent (a connection lost between a commit and its
        round) make the outbox published from the store: a later round's confirmation
        must not remove them."""
        self.drop_upto = 0
        if self.unsent:
            self.stale = True
        self.unsent, self.last_kept = self.last_kept > 0, 0

    async def send(self, events: Sequence[tuple[str, str]], upto: int) -> None:
        """Publish a committed batch's ``events`` (the outbox's rows up to ``upto``) as a
        round, its acknowledgements read while the caller goes on; the outbox from the
        store instead when a round was given up. :raises: a connection lost (the rows
        stay)."""
        if self.stale:
            await self.publish()
            return
        if events:
            self.flights.append((await self.publisher.send(events), upto))
        self.unsent = False
        await self.settle(block=len(self.flights) > IN_FLIGHT)

    async def settle(self, block: bool = False) -> None:
        """Take the confirmed rounds, oldest first (with ``block``, waiting for each);
        a round refused or not confirmed in time gives up every round under way."""
        while self.flights:
            sent, upto = self.flights[0]
            if not (block or sent.done.is_set()):
                return
            try:
                await self.publisher.confirm(sent, 2 + sent.count / 1000)
            except _lost():
                self.flights.clear()
                self.publisher.forget()
                self.stale = True
                return
            self.flights.popleft()
            self.drop_upto = upto
            self.counts.published += sent.count

    async def publish(self) -> None:
        """Publish the whole outbox from the store, in order, each round confirmed before
        its rows are removed (in a transaction of their own). :raises: a connection lost
        (what is left stays)."""
        await self.settle(block=True)
        league, store = self.league, self.league.store
        if self.drop_upto:
            with league.batch():
                store.drop_outbox(self.drop_upto)
            self.drop_upto = 0
        while rows := store.outbox(READ):
            sent = await self.publisher.send([(eid, text) for _, eid, text in rows])
            await self.publisher.confirm(sent, 2 + len(rows) / 1000)
            with league.batch():
                store.drop_outbox(rows[-1][0])
            self.counts.published += len(rows)
        self.stale = self.unsent = False

    def waiting(self) -> bool:
        """Whether events are still to be published or removed."""
        return bool(self.flights or self.drop_upto or self.league.store.outbox(1))
