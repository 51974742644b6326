"""The foundation issue's acceptance check on real data.

``rankcraft replay atp_singles…jsonl.gz --ruleset elo --db x.sqlite`` then
``rankcraft leaderboard --db x.sqlite --json`` must give, for every player, the rating of
a plain K = 32 Elo replay (start 1500, draws ½) to 1e-6.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest


def plain_elo(path: Path) -> tuple[dict[str, float], int]:
    ratings: dict[str, float] = {}
    count = 0
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for text in handle:
            m = json.loads(text)
            (a,), (b,) = m["teams"]
            sa, sb = m["scores"]
            s = 1.0 if sa > sb else 0.0 if sa < sb else 0.5
            ra, rb = ratings.get(a, 1500.0), ratings.get(b, 1500.0)
            e = 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))
            ratings[a] = ra + 32.0 * (s - e)
            ratings[b] = rb + 32.0 * ((1.0 - s) - (1.0 - e))
            count += 1
    return ratings, count


@pytest.mark.slow(seconds=15)
def test_atp_singles_replay_matches_plain_elo(tmp_path: Path, shared_data: Path) -> None:
    source = shared_data / "atp_singles_2000_2024.jsonl.gz"
    db = tmp_path / "x.sqlite"
    exe = str(Path(sys.executable).with_name("rankcraft"))
    subprocess.run(
        [exe, "replay", str(source), "--ruleset", "elo", "--db", str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    result = subprocess.run(
        [exe, "leaderboard", "--db", str(db), "--json"], check=True, capture_output=True, text=True
    )
    board = json.loads(result.stdout)
    expected, count = plain_elo(source)
    assert count == 74_515
    assert len(board) == len(expected) == 2_639
    got = {row["id"]: row["skill"]["rating"] for row in board}
    worst = max(abs(got[pid] - rating) for pid, rating in expected.items())
    assert worst <= 1e-6, worst
    assert [row["place"] for row in board] == list(range(1, len(board) + 1))
    ordered = [row["skill"]["rating"] for row in board]
    assert ordered == sorted(ordered, reverse=True)


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", ["inversus", "glicko1"])
def test_glicko_rulesets_replay_atp_doubles(
    tmp_path: Path, shared_data: Path, ruleset: str
) -> None:
    source = shared_data / "atp_doubles_2000_2020.jsonl.gz"
    db = tmp_path / "d.sqlite"
    exe = str(Path(sys.executable).with_name("rankcraft"))
    done = subprocess.run(
        [exe, "replay", str(source), "--ruleset", ruleset, "--db", str(db), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(done.stdout)["recorded"] == 25_781
    board = json.loads(
        subprocess.run(
            [exe, "leaderboard", "--db", str(db), "--json"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert len(board) == 1_806
    for row in board:
        for value in row["skill"].values():
            assert value == value and abs(value) < 1e6  # finite, no NaN


def test_tennis_starts_a_newcomer_from_their_ranking() -> None:
    """``tennis`` reads ``meta.atp_rank`` (issue 33): a newcomer starts at
    1831.2 − 22.0 ln(rank); no ranking, or a player already rated, ignores it."""
    import math

    import rankcraft
    from rankcraft.plugins.elo import expected_score

    def match(i: int, a: str, b: str, ranks: object) -> dict[str, object]:
        meta = {"surface": "Indoor", "best_of": 3, "atp_rank": ranks}  # (no surface rating)
        return {
            "id": f"m{i}",
            "played_at": "2024-01-01",
            "teams": [[a], [b]],
            "scores": [1, 0],
            "meta": meta,
        }

    league = rankcraft.League("tennis")
    ranked = league.record(match(0, "top", "qualifier", [1, 1000]))
    prior = (1831.2 - 22.0 * math.log(1), 1831.2 - 22.0 * math.log(1000))
    assert ranked.expected[0] == pytest.approx(expected_score(*prior))
    unranked = league.record(match(1, "new", "other", [None, "x"]))
    assert unranked.expected[0] == pytest.approx(0.5)  # both at 1500
    # once rated, a player's ranking no longer counts
    top = league.player("top").skill.rating
    again = league.record(match(2, "top", "fresh", [500, 1]))
    assert top > prior[0]
    assert again.expected[0] == pytest.approx(expected_score(top, 1831.2), rel=1e-9)
