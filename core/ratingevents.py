"""The rating-change events of ``rankcraft consume``, written from the rated entries.

One event per player of each rated match: ``{"league", "match_id", "player", "before",
"after"}`` (the skill states as ``rankcraft export`` writes them), with ``rank_before``,
``rank_after`` (and ``tier_before``, ``tier_after`` where the rank has a tier) under a
rank layer; its id ``<subject>:<match id>:<player>`` (the ``Nats-Msg-Id`` that makes
JetStream drop a second copy). :class:`EventWriter` writes them from the entries the
league kept while rating (:meth:`rankcraft.League.collecting`), each state's JSON text
from the report writer (remembered by identity: a player's state after one match is
their state before the next), so nothing is read back from the store nor decoded.
:func:`events_of` writes the same events from stored reports (a late match, placed by a
re-rate, is read back).

With ``pack`` > 1 (``rankcraft consume --pack N``, off by default) up to ``pack``
consecutive events go into one message: their JSON texts, one a line, under the id
``<subject>:<first match id>:<first player>+<count>``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .forms import Form, tuple_form
from .rated import Rated, ReportWriter, compact_json

__all__ = ["EventWriter", "events_of", "packed"]

RANK_KEYS = ("rank_before", "rank_after")
"""The rank-layer fields of a report's change that an event carries, where present."""

_text: Callable[[str], str] = json.encoder.encode_basestring_ascii


class EventWriter:
    """Writes the events of rated entries for one league.

    :param skill_class: the league's skill state class. :param rank_class: its rank
        state class, or None. :param subject: the league's subject (the events'
        ``league`` and the start of their ids).
    """

    def __init__(self, skill_class: type, rank_class: type | None, subject: str) -> None:
        rank_names = () if rank_class is None else Form(rank_class).names
        self.writer = ReportWriter(Form(skill_class).names, rank_names)
        self.subject = subject
        # each player's last state written, its text and their id's: the state after a
        # match is the state before their next one
        self._last: dict[str, tuple[Any, str, str]] = {}
        self._head = '{"league":' + _text(subject) + ',"match_id":'
        tier = rank_names.index("tier") if "tier" in rank_names else None
        values = tuple_form(rank_names)
        self._tier: Callable[[Any], str] | None = (
            None if tier is None else lambda state: compact_json(values(state)[tier])
        )

    def events(self, entries: Iterable[Rated]) -> list[tuple[str, str]]:
        """Each entry's events, in order: (id, JSON text), the text exactly what
        ``compact_json`` writes of the event's dict (:func:`events_of`)."""
        skill, rank, tier = self.writer.skill_text, self.writer.rank_text, self._tier
        head, prefix = self._head, self.subject + ":"
        out: list[tuple[str, str]] = []
        append = out.append
        last = self._last
        if len(last) > 100_000:
            last.clear()
        for entry in entries:
            mid = entry[0].id
            start = head + _text(mid) + ',"player":'
            key = prefix + mid + ":"
            for player, _, before, _, after, rank_before, rank_after, _ in entry[2]:
                known = last.get(player)  # (their state after their last match here)
                if known is not None and known[0] is before:
                    said, was = known[2], known[1]
                else:
                    said, was = _text(player), skill(before)
                now = skill(after)
                last[player] = (after, now, said)
                text = f'{start}{said},"before":{was},"after":{now}'
                if rank_after is not None:
                    text += f',"rank_before":{rank(rank_before)},"rank_after":{rank(rank_after)}'
                    if tier is not None:
                        text += (
                            f',"tier_before":{tier(rank_before)},"tier_after":{tier(rank_after)}'
                        )
                append((key + player, text + "}"))
        return out


def events_of(league: Any, subject: str, match_ids: Sequence[str]) -> list[tuple[str, str]]:
    """The events of recorded matches, from their stored reports (what
    :meth:`EventWriter.events` writes from the entries)."""
    events = []
    to_dict = league.codec.report_to_dict
    for mid in match_ids:
        for change in to_dict(league.report(mid))["changes"]:
            player = change["player"]
            event = {
                "league": subject,
                "match_id": mid,
                "player": player,
                "before": change.get("skill_before"),
                "after": change.get("skill_after"),
            }
            event.update({k: change[k] for k in RANK_KEYS if k in change})
            for when in ("before", "after"):  # (a rank layer's tier, said on its own)
                rank = change.get(f"rank_{when}")
                if isinstance(rank, dict) and "tier" in rank:
                    event[f"tier_{when}"] = rank["tier"]
            events.append((f"{subject}:{mid}:{player}", compact_json(event)))
    return events


def packed(events: Sequence[tuple[str, str]], pack: int) -> list[tuple[str, str]]:
    """``events`` in messages of up to ``pack`` events each, one JSON text a line, the
    id naming the first event and the count (``pack`` 1: the events as they are)."""
    if pack <= 1:
        return list(events)
    out = []
    for start in range(0, len(events), pack):
        part = events[start : start + pack]
        out.append((f"{part[0][0]}+{len(part)}", "\n".join(text for _, text in part)))
    return out
