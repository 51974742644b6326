"""The census: counts of a league's players for league-wide labels (a percentile),
answered by each store as by a count of every record."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rankcraft
from rankcraft import Census, PlayerRecord
from rankcraft.store.sql_census import COUNTED_KEYS, WALKED_ROWS

START = datetime(2024, 1, 1, tzinfo=UTC)


def games(n: int, players: int, seed: int) -> list[dict[str, Any]]:
    """``n`` one-on-one games among ``players`` ids, hours to days apart, so that the
    players' last matches spread over weeks."""
    rng = random.Random(seed)
    out, at = [], START
    for i in range(n):
        a, b = rng.sample(range(players), 2)
        at += timedelta(hours=rng.choice([1, 2, 7, 30]))
        out.append(
            {
                "id": f"g{i}",
                "played_at": at.isoformat(),
                "teams": [[f"p{a}"], [f"p{b}"]],
                "scores": [1, 0] if rng.random() < 0.55 else [0, 1],
            }
        )
    return out


def counted_by_hand(
    records: list[PlayerRecord],
    key: Any,
    keys: list[float],
    since: datetime | None,
    matches_from: int,
) -> tuple[int, list[int]]:
    """The census's counts, one record at a time."""
    passing = [
        key(r)
        for r in records
        if r.matches >= matches_from
        and (since is None or (r.last_played is not None and r.last_played >= since))
    ]
    return len(passing), [sum(1 for k in passing if k < mine) for mine in keys]


def check_counts(league: rankcraft.League) -> None:
    """``league.store.count_below`` against a count of every record, on filters and keys
    drawn by hypothesis: the players' own values (ties: wager ranks to the cent), values
    between them, -inf; no time, each player's last match, a time after every match."""
    records = league.players()
    key = league.codec.sort_key
    values = sorted({key(r) for r in records})
    times = sorted({r.last_played for r in records if r.last_played is not None})
    assert len(values) > 10 and len(times) > 30  # (ties, and last matches spread out)
    count = league.store.count_below

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        keys=st.lists(
            st.sampled_from(values) | st.floats(0, 3) | st.just(float("-inf")), max_size=6
        ),
        since=st.none() | st.sampled_from(times) | st.just(times[-1] + timedelta(days=1)),
        matches_from=st.integers(0, 25),
    )
    def check(keys: list[float], since: datetime | None, matches_from: int) -> None:
        expected = counted_by_hand(records, key, keys, since, matches_from)
        assert count(keys, since, matches_from) == expected

    check()


@pytest.mark.parametrize(
    ("walked_rows", "counted_keys"), [(WALKED_ROWS, COUNTED_KEYS), (5, COUNTED_KEYS), (0, 2)]
)
def test_a_database_counts_as_the_records_do(
    db_url: str, walked_rows: int, counted_keys: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database's counts give the count of every record, whichever way it counts:
    along the key index for keys near the top (``WALKED_ROWS``), in SQL as it reads the
    total, or past ``COUNTED_KEYS`` keys by reading the keys; on SQLite reading along
    the time index or by a scan, as the window holds few players or many."""
    monkeypatch.setattr(rankcraft.store.sql_census, "WALKED_ROWS", walked_rows)
    monkeypatch.setattr(rankcraft.store.sql_census, "COUNTED_KEYS", counted_keys)
    with rankcraft.League.open(db_url, "team-wager") as league:
        league.record_many(games(400, 60, 3))
    with rankcraft.League.open(db_url) as league:
        check_counts(league)


def test_the_memory_store_counts_as_the_records_do() -> None:
    league = rankcraft.League("team-wager")
    league.record_many(games(400, 60, 3))
    check_counts(league)


def test_a_census_counts_a_league_and_checks_its_filter() -> None:
    league = rankcraft.League("team-wager")
    league.record_many(games(200, 20, 5))
    records = league.players()
    census = Census.of(records, key=lambda r: r.skill.rank)
    assert census.latest == max(r.last_played for r in records if r.last_played)
    counted = census.count(records, matches_from=15)
    keys = [r.skill.rank for r in records]
    total, below = counted_by_hand(records, lambda r: r.skill.rank, keys, None, 15)
    assert 0 < counted.total == total < len(records)
    assert counted.below == {r.id: n for r, n in zip(records, below, strict=True)}
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match=rf"'matches_from' must be .*: {bad!r}$"):
            census.count(matches_from=bad)  # type: ignore[arg-type]
    for since in (datetime(2024, 1, 2), "2024-01-02", 1.5):  # (naive: local time on SQL)
        with pytest.raises(ValueError, match=r"'played_since' must be a datetime with a time"):
            census.count(played_since=since)  # type: ignore[arg-type]


def test_a_store_without_counts_has_its_players_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store written before ``Store.count_below`` still gives percentiles: the league
    reads every player and counts them itself."""
    path = tmp_path / "l.sqlite"
    with rankcraft.League.open(path, "team-wager") as league:
        league.record_many(games(300, 20, 7))
        everyone = league.standings()
    assert sum(label.startswith("percentile") for label in everyone.values()) > 10
    monkeypatch.delattr(rankcraft.store.sql_census.SQLCensus, "count_below")
    with rankcraft.League.open(path) as league:
        some = sorted(everyone)[:5]
        assert league.standings(some) == {p: everyone[p] for p in some}
