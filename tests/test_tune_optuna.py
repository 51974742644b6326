"""`rankcraft tune` with Optuna: a seeded TPE study improves on its start point, prunes on
the validation slice, and a storage URL lets two searches share one study."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import rankcraft
from rankcraft.errors import InputError
from rankcraft.tune import optuna_storage, parse_param, tune

from .conftest import PG_SERVER

optuna = pytest.importorskip("optuna", reason="Optuna is the optional 'tune' extra")


def _history(path: Path) -> Path:
    rng = random.Random(3)
    skill = {f"p{i}": rng.gauss(0, 1) for i in range(12)}
    lines = []
    for i in range(300):
        a, b = rng.sample(sorted(skill), 2)
        won = rng.random() < 1 / (1 + 10 ** (skill[b] - skill[a]))
        lines.append(
            json.dumps(
                {
                    "id": f"m{i}",
                    "played_at": f"2021-{1 + i // 30:02d}-01",
                    "teams": [[a], [b]],
                    "scores": [int(won), int(not won)],
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def _bad_start() -> rankcraft.Ruleset:
    return rankcraft.loads_ruleset(
        'name = "slow"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = 2.0\n'
    )


def test_seeded_study_improves_on_its_start_point(tmp_path: Path) -> None:
    path = _history(tmp_path / "h.jsonl")
    ruleset = _bad_start()
    params = [parse_param("update.k_factor=1:120", ruleset)]
    runs = [
        tune(
            path, ruleset, params, test_from="2021-09-01", trials=6, jobs=1, seed=7, method="optuna"
        )
        for _ in range(2)
    ]
    result = runs[0]
    start = result.trials[0]
    assert start.values == (2.0,)  # the ruleset's own value is the first trial
    assert result.validation_log_loss < start.log_loss - 0.02
    assert result.best[0] > 10.0
    assert result.ruleset.update.params.k_factor == pytest.approx(result.best[0])
    # seeded: the same trials again
    assert [t.values for t in runs[1].trials] == [t.values for t in result.trials]


def test_random_method_and_errors(tmp_path: Path) -> None:
    path = _history(tmp_path / "h.jsonl")
    ruleset = _bad_start()
    params = [parse_param("update.k_factor=1:120", ruleset)]
    with pytest.raises(InputError, match="--storage needs the optuna method"):
        tune(path, ruleset, params, test_from="2021-09-01", method="random", storage="sqlite://")
    with pytest.raises(InputError, match="--method must be"):
        tune(path, ruleset, params, test_from="2021-09-01", method="grid")


def test_pruned_trials_stop_early() -> None:
    from rankcraft.tunetrial import run_checked

    history = _history(Path(__import__("tempfile").mkdtemp()) / "h.jsonl")
    ruleset = _bad_start()
    params = (parse_param("update.k_factor=1:120", ruleset),)
    job = (str(history), None, rankcraft.dumps(ruleset), params, (2.0,), "2021-07-01", "2021-09-01")
    job = (*job, "log-loss")
    running, pruned, counts = run_checked((*job, ()))
    assert not pruned and len(running) == 4
    # the validation slice, 2021-07-01 to 2021-09-01: the 30 matches of each month
    assert counts == (60, 60)
    stopped, pruned, counts = run_checked((*job, (running[0] - 0.01,) * 4))
    assert pruned and stopped == running[:1]
    assert counts == (15, 60)  # stopped at the first of four checkpoints (issue 42)


def test_a_pruned_trial_says_its_score_is_partial(tmp_path: Path) -> None:
    """Issue 42 item 5: a pruned trial's line read "pruned at 0.34113 (best 0.33719)", as
    if better than the best; it says now that the score is partial, and over how many of
    the validation slice's matches."""
    import re

    from rankcraft.cli import main

    path = _history(tmp_path / "h.jsonl")
    start = tmp_path / "slow.toml"
    start.write_text(rankcraft.dumps(_bad_start()))
    out, err = io.StringIO(), io.StringIO()
    argv = ["tune", str(path), "--ruleset", str(start), "--test-from", "2021-09-01"]
    argv += ["--param", "update.k_factor=1:120", "--trials", "12", "--jobs", "1", "--seed", "2"]
    argv += ["--method", "optuna", "--out", str(tmp_path / "tuned.toml"), "--json"]
    assert main(argv, out=out, err=err) == 0, err.getvalue()
    data = json.loads(out.getvalue())
    trial_lines = [line for line in err.getvalue().splitlines() if line.startswith("trial ")]
    assert len(trial_lines) == 12
    # the slice counted from the file: the matches from validation_from to the test part
    dates = [json.loads(line)["played_at"] for line in path.read_text().splitlines()]
    slice_size = sum(data["validation_from"] <= d < "2021-09-01" for d in dates)
    assert slice_size == 60
    pruned = [t for t in data["trials"] if t["pruned"]]
    assert pruned  # (seed 2 prunes two of the 12)
    for t in pruned:
        line = trial_lines[t["number"] - 1]
        found = re.search(
            r": pruned: partial score (\d\.\d{5}) after (\d+) of (\d+) validation matches "
            r"\(best full (\d\.\d{5})\)$",
            line,
        )
        assert found, line
        assert float(found[1]) == pytest.approx(t["value"], abs=5e-6)
        # stopped at a checkpoint: a quarter, a half or three quarters of the slice
        assert int(found[3]) == slice_size
        assert int(found[2]) in {slice_size * k // 4 for k in (1, 2, 3)}
        earlier = [u["value"] for u in data["trials"][: t["number"]] if not u["pruned"]]
        assert float(found[4]) == pytest.approx(min(earlier), abs=5e-6)
    whole = [trial_lines[t["number"] - 1] for t in data["trials"] if not t["pruned"]]
    assert all(": scored " in line and "partial" not in line for line in whole)


def _pg_schema() -> tuple[str, str] | None:
    """A fresh schema on the test server: (base URL, schema), or None without a server."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover
        return None
    schema = f"t_{uuid.uuid4().hex[:12]}"
    base = PG_SERVER.split("?")[0]
    try:
        with psycopg.connect(base, autocommit=True, connect_timeout=3) as connection:
            connection.execute(f'CREATE SCHEMA "{schema}"')
    except psycopg.OperationalError:  # pragma: no cover - no server here
        return None
    return base, schema


@pytest.mark.slow(seconds=7)
def test_storage_url_shared_by_two_studies(tmp_path: Path) -> None:
    """Two searches (as on two machines) against one PostgreSQL study (SQLite when this
    machine has no server): the second sees the first's trials and picks the study's best."""
    server = _pg_schema()
    if server is None:  # pragma: no cover
        url = f"sqlite:///{tmp_path / 'study.db'}"
    else:
        url = f"{server[0]}?options=-csearch_path%3D{server[1]}"
        assert optuna_storage(url).startswith(("postgresql://", "postgresql+psycopg://"))
    try:
        path = _history(tmp_path / "h.jsonl")
        ruleset = _bad_start()
        params = [parse_param("update.k_factor=1:120", ruleset)]
        first = tune(
            path,
            ruleset,
            params,
            test_from="2021-09-01",
            trials=3,
            jobs=1,
            storage=url,
            study_name="shared",
        )
        second = tune(
            path,
            ruleset,
            params,
            test_from="2021-09-01",
            trials=3,
            jobs=1,
            seed=1,
            storage=url,
            study_name="shared",
        )
        storage = optuna.storages.RDBStorage(optuna_storage(url))
        try:
            trials = optuna.load_study(study_name="shared", storage=storage).trials
        finally:
            storage.engine.dispose()
        assert len(trials) == 6
        assert trials[0].params == {"update.params.k_factor": 2.0}  # enqueued once
        # (the running score of the chunks, and the chosen ruleset's replayed whole)
        best = min(t.value for t in trials if t.value is not None)
        assert second.validation_log_loss == pytest.approx(best, rel=1e-12)
        assert second.validation_log_loss <= first.validation_log_loss + 1e-12
    finally:
        if server is not None:
            import psycopg

            with psycopg.connect(server[0], autocommit=True) as connection:
                connection.execute(f'DROP SCHEMA "{server[1]}" CASCADE')


@pytest.mark.slow(seconds=6)
def test_two_tune_processes_started_apart_join_one_postgres_study(tmp_path: Path) -> None:
    """Two ``rankcraft tune`` processes, started separately (as on two machines) and
    running at once, search one study in PostgreSQL: each runs its own trials into it,
    and the one that finishes last chooses the best trial of both."""
    server = _pg_schema()
    if server is None:
        pytest.skip(f"no PostgreSQL server answers at {PG_SERVER} (RANKCRAFT_PG_URL)")
    url = f"{server[0]}?options=-csearch_path%3D{server[1]}"
    exe = Path(sys.executable).with_name("rankcraft")
    path = _history(tmp_path / "h.jsonl")
    (tmp_path / "slow.toml").write_text(
        'name = "slow"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = 2.0\n'
    )
    try:
        started = [
            subprocess.Popen(
                [
                    *(str(exe), "tune", str(path), "--ruleset", str(tmp_path / "slow.toml")),
                    *("--test-from", "2021-09-01", "--param", "update.k_factor=1:120"),
                    *("--out", str(tmp_path / f"tuned{n}.toml"), "--trials", "4", "--jobs", "1"),
                    *("--seed", str(n), "--storage", url, "--study", "joined", "--json"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(2)
        ]
        answers = []
        for process in started:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err
            answers.append(json.loads(out))
        storage = optuna.storages.RDBStorage(optuna_storage(url))
        try:
            trials = optuna.load_study(study_name="joined", storage=storage).trials
        finally:
            storage.engine.dispose()
        assert len(trials) == 8  # four of each process's, in one study
        assert all(t.state.name in ("COMPLETE", "PRUNED") for t in trials)
        starts = [t for t in trials if t.params == {"update.params.k_factor": 2.0}]
        assert len(starts) == 1  # the start queued once, by whichever came first
        best = min(t.value for t in trials if t.value is not None and t.state.name == "COMPLETE")
        chosen = [a["validation_log_loss"] for a in answers]
        assert min(chosen) == pytest.approx(best, rel=1e-12)
        assert len(answers[0]["trials"]) == len(answers[1]["trials"]) == 4
    finally:
        import psycopg

        with psycopg.connect(server[0], autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{server[1]}" CASCADE')


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_study_made_for_another_search_is_refused_before_any_trial(
    tmp_path: Path, kind: str
) -> None:
    """issue 43 item 5: a reused --study with another --param set, or another ruleset, ran
    every trial and ended in an internal KeyError, writing nothing."""
    server = None
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'study.db'}"
    else:
        server = _pg_schema()
        if server is None:  # pragma: no cover
            pytest.skip(f"no PostgreSQL server answers at {PG_SERVER}")
        url = f"{server[0]}?options=-csearch_path%3D{server[1]}"
    path = _history(tmp_path / "h.jsonl")
    ruleset = _bad_start()

    def search(start: rankcraft.Ruleset, *params: str) -> None:
        ranges = [parse_param(p, start) for p in params]
        tune(
            path,
            start,
            ranges,
            test_from="2021-09-01",
            trials=2,
            jobs=1,
            storage=url,
            study_name="shared",
        )

    def trials() -> int:
        storage = optuna.storages.RDBStorage(optuna_storage(url))
        try:
            return len(optuna.load_study(study_name="shared", storage=storage).trials)
        finally:
            storage.engine.dispose()

    try:
        search(ruleset, "update.k_factor=1:120")
        assert trials() == 2
        with pytest.raises(InputError) as caught:
            search(ruleset, "update.k_factor=1:120", "update.initial_rating=1000:2000")
        assert str(caught.value) == (
            "'--study' 'shared' was made for another search, and its trials cannot be "
            "compared with this one's: params: ['update.params.k_factor=1.0:120.0'] there, "
            "['update.params.k_factor=1.0:120.0', 'update.params.initial_rating=1000.0:2000.0'] "
            "here (name another study, or search as it did)"
        )
        other = rankcraft.loads_ruleset(
            'name = "slow"\n[update]\nplugin = "elo"\n[update.params]\nk_factor = 3.0\n'
        )
        with pytest.raises(
            InputError, match=r"ruleset: k_factor = 2\.0 there, k_factor = 3\.0 here"
        ):
            search(other, "update.k_factor=1:120")
        assert trials() == 2  # (no trial ran)
        search(ruleset, "update.k_factor=1:120")  # the same search joins it
        assert trials() == 4
    finally:
        if server is not None:
            import psycopg

            with psycopg.connect(server[0], autocommit=True) as connection:
                connection.execute(f'DROP SCHEMA "{server[1]}" CASCADE')
