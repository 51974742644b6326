"""Defects a review found after the issue-30/31/33 merges, each reproduced: the lab's
per-client limit keyed by the token (not the header's spelling), ended jobs capped and
the job folder swept, the draw fit at its rate's bound, a CSV cell past the csv
module's size limit, and a draw-fitting replay held to the command line's limits and
to the league's ruleset."""

from __future__ import annotations

import io
import json
import math
import os
import random
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

import rankcraft
from rankcraft.cli import main
from rankcraft.jobs import ENDED_KEPT, JobPool, Shelf, UnknownJob, waiting
from rankcraft.plugins._drawfit import davidson_log_likelihood, fit_davidson
from rankcraft.serve import Settings, create_app
from rankcraft.tokens import create_token


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_one_token_spelt_several_ways_is_one_client() -> None:
    league = rankcraft.League("elo")
    league.record_many(
        [
            {
                "id": f"g{i}",
                "played_at": f"2024-05-0{i + 1}",
                "teams": [["a"], ["b"]],
                "scores": [1, 0],
            }
            for i in range(3)
        ]
    )
    _, secret = create_token(league.store, scope="read", name="t")
    app = create_app(league, Settings(auth_reads=True, lab_workers=1, lab_jobs_per_client=1))
    body = {"rulesets": ["elo", "glicko1", "elo-fide", "glicko2"]}
    spellings = [f"Bearer {secret}", f"bearer {secret}", f"BEARER {secret}", f"Bearer  {secret} "]
    for _ in range(5):  # (a first job that ended before the last post proves nothing)
        with TestClient(app) as client:
            answers = [
                client.post("/web/lab/jobs", json=body, headers={"Authorization": h})
                for h in spellings
            ]
            first = client.get(
                f"/web/lab/jobs/{answers[0].json()['id']}", headers={"Authorization": spellings[0]}
            ).json()
            if first["state"] in ("queued", "running"):
                break
            app = create_app(
                league, Settings(auth_reads=True, lab_workers=1, lab_jobs_per_client=1)
            )
    assert [a.status_code for a in answers] == [202, 429, 429, 429]


def test_a_client_that_submits_and_cancels_keeps_few_ended_jobs() -> None:
    pool = JobPool(workers=1, per_client=1, queued=2, keep=600)
    try:
        ids = []
        for _ in range(12):
            job = pool.submit("ann", waiting, 5.0, 1)
            ids.append(job.id)
            assert pool.cancel(job.id).state == "cancelled"
        kept = ENDED_KEPT * 1
        for job_id in ids[-kept:]:
            assert pool.get(job_id).state == "cancelled"
        for job_id in ids[: -kept - 1]:  # (the newest submit forgets before it adds)
            with pytest.raises(UnknownJob):
                pool.get(job_id)
    finally:
        pool.close()


def test_the_job_folder_is_swept_of_files_nobody_reads(tmp_path: Path) -> None:
    shelf = Shelf(str(tmp_path / "jobs"), keep=10.0)
    folder = Path(shelf.folder)
    names = ["old.json", "old.cancel", "old.json.1.2.part", "new.json", "notes.txt"]
    for name in names:
        (folder / name).write_text("{}")
    past = time.time() - 10.0 - Shelf.STALE - 1
    for name in ("old.json", "old.cancel", "old.json.1.2.part", "notes.txt"):
        os.utime(folder / name, (past, past))
    shelf.sweep()
    assert sorted(p.name for p in folder.iterdir()) == ["new.json", "notes.txt"]


def test_the_draw_fit_leaves_its_rate_at_the_bound_and_still_fits_kappa() -> None:
    # draws at 30% whatever the gap: the best rate is below 0, so it stays at 0 and κ
    # is the maximum-likelihood value with the rate held there (expected = observed)
    rng = random.Random(3)
    items = []
    for _ in range(3000):
        u = rng.uniform(-1.5, 1.5)
        won = 0 if rng.random() < 1 / (1 + 10 ** (-u)) else 2
        outcome = 1 if rng.random() < 0.3 else won
        items.append((u, outcome, 0))
    (kappa,), rate = fit_davidson(items, groups=1)
    (held,), held_rate = fit_davidson(items, groups=1, fit_rate=False)
    assert rate == held_rate == 0.0
    assert kappa == pytest.approx(held, rel=1e-9)
    assert davidson_log_likelihood(items, [kappa], rate) == pytest.approx(
        davidson_log_likelihood(items, [held], 0.0), abs=1e-12
    )
    expected = 0.0
    for u, _, _ in items:
        s = abs(u) * math.log(10)
        a = math.exp(-s / 2)
        expected += kappa * a / (1 + a * a + kappa * a)
    assert expected == pytest.approx(sum(o == 1 for _, o, _ in items), abs=1e-3)


def test_a_csv_cell_past_the_csv_module_s_limit_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text(
        'id,played_at,teams,scores\n"m1","2024-01-01","[[""a""],[""b""]]","[1,0]"\n'
        f'"m2","2024-01-02","[[""a""],[""b""]]","[{"1," * 70_000}0]"\n'
    )
    code, _, err = run("replay", str(path), "--ruleset", "elo", "--db", str(tmp_path / "x.db"))
    assert code == 2 and "line 3: a CSV cell in column 'scores' holds more than 128 KiB" in err
    assert "internal error" not in err


DRAW_FIT = (
    'name = "d"\n[update]\nplugin = "elo"\n[update.params]\ndraw = "davidson"\n'
    'draw_fit = "overall"\n'
)


def _history(path: Path, extra: list[dict[str, object]]) -> None:
    rows = [
        {
            "id": f"m{i}",
            "played_at": f"2023-01-{1 + i % 28:02d}",
            "teams": [[f"p{i % 5}"], [f"p{5 + i % 4}"]],
            "scores": [i % 3, 1],
        }
        for i in range(40)
    ]
    rows.sort(key=lambda r: str(r["played_at"]))
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, *extra]))


def test_a_draw_fitting_replay_holds_matches_to_the_limits_first(tmp_path: Path) -> None:
    ruleset = tmp_path / "d.toml"
    ruleset.write_text(DRAW_FIT)
    wide = {
        "id": "w",
        "played_at": "2023-02-01",
        "teams": [[f"x{i}"] for i in range(70)],
        "ranks": list(range(1, 71)),
    }
    history = tmp_path / "m.jsonl"
    _history(history, [wide])
    code, _, err = run(
        "replay", str(history), "--ruleset", str(ruleset), "--db", str(tmp_path / "l.db")
    )
    assert code == 2 and "line 41" in err and "70 sides" in err, err
    assert not (tmp_path / "l.db").exists()


def test_a_draw_fitting_replay_names_the_line_of_a_match_the_fit_refuses(tmp_path: Path) -> None:
    ruleset = tmp_path / "d.toml"
    ruleset.write_text(DRAW_FIT)
    again = {"id": "m3", "played_at": "2023-02-01", "teams": [["a"], ["b"]], "scores": [1, 0]}
    history = tmp_path / "m.jsonl"
    _history(history, [again])
    code, _, err = run(
        "replay", str(history), "--ruleset", str(ruleset), "--db", str(tmp_path / "l.db")
    )
    assert code == 2 and "line 41" in err and "'m3'" in err, err


def test_a_draw_fitting_ruleset_of_another_name_is_refused_by_an_existing_league(
    tmp_path: Path,
) -> None:
    history = tmp_path / "m.jsonl"
    _history(history, [])
    first, other = tmp_path / "d.toml", tmp_path / "e.toml"
    first.write_text(DRAW_FIT)
    other.write_text(DRAW_FIT.replace('"d"', '"e"'))
    db = str(tmp_path / "l.db")
    assert run("replay", str(history), "--ruleset", str(first), "--db", db)[0] == 0
    code, _, err = run("replay", str(history), "--ruleset", str(other), "--db", db, "--skip-seen")
    assert code == 2 and "'e'" in err and "'d'" in err, err
    assert run("replay", str(history), "--ruleset", str(first), "--db", db, "--skip-seen")[0] == 0


def test_tune_out_writes_the_fitted_draw_values_it_was_scored_with(tmp_path: Path) -> None:
    import tomllib

    history = tmp_path / "m.jsonl"
    _history(history, [])
    ruleset = tmp_path / "d.toml"
    ruleset.write_text(DRAW_FIT + "draw_kappa = 0.1\n")
    out = tmp_path / "t.toml"
    code, _, err = run(
        "tune", str(history), "--ruleset", str(ruleset), "--test-from", "2023-01-21",
        "--param", "update.k_factor=10:40", "--trials", "2", "--jobs", "1",
        "--method", "random", "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    params = tomllib.loads(out.read_text())["update"]["params"]
    assert params["draw_kappa"] != 0.1 and "draw_gap" in params
