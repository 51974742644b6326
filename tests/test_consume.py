"""`rankcraft consume` against the real NATS JetStream server (skipped, saying why, when
none answers at $RANKCRAFT_NATS_URL): exactly once under redelivery, republishing, a
restart, a SIGKILL between commit and acknowledgement and between commit and publish, a
poison message and a NATS restart; each league equal to a replay of the same matches."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

import rankcraft
from rankcraft.cli import main
from rankcraft.consume import LATE_EDIT
from rankcraft.store.base import CONSUMED, FED_BY

NATS_URL = os.environ.get("RANKCRAFT_NATS_URL", "nats://127.0.0.1:4222")


def _unreachable(url: str) -> str | None:
    try:
        import nats  # noqa: F401
    except ImportError:
        return "needs nats-py for the NATS tests (pip install -e '.[test]')"
    where = urlparse(url)
    try:
        socket.create_connection((where.hostname or "", where.port or 4222), 1).close()
    except OSError as exc:
        return f"needs a NATS JetStream server at {url} (set RANKCRAFT_NATS_URL): {exc}"
    return None


def games(n: int, start: int = 0) -> list[dict[str, Any]]:
    """``n`` 1-v-1 matches among 12 players, one a minute."""
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    out = []
    for i in range(start, start + n):
        a, b = f"p{i % 12}", f"p{(i * 5 + 1) % 12}"
        b = b if b != a else f"p{(i + 1) % 12}"
        when = (t0 + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        ranks = [1, 2] if i % 3 else [2, 1]
        out.append({"id": f"m{i}", "played_at": when, "teams": [[a], [b]], "ranks": ranks})
    return out


class Log:
    """A test's own stream (subjects ``SUBJECT`` and ``SUBJECT.>``), deleted after it."""

    def __init__(self, url: str) -> None:
        suffix = uuid.uuid4().hex[:10]
        self.url, self.stream, self.subject = url, f"rctest_{suffix}", f"rctest.{suffix}.matches"

    async def _js(self, work: Any) -> Any:
        import nats

        nc = await nats.connect(self.url, connect_timeout=2)
        try:
            return await work(nc.jetstream())
        finally:
            await nc.close()

    def create(self) -> None:
        async def work(js: Any) -> None:
            await js.add_stream(name=self.stream, subjects=[self.subject, f"{self.subject}.>"])

        asyncio.run(self._js(work))

    def delete(self) -> None:
        async def work(js: Any) -> None:
            await js.delete_stream(self.stream)

        asyncio.run(self._js(work))

    def publish(self, items: list[Any]) -> None:
        async def work(js: Any) -> None:
            futures = []
            for item in items:
                data = item if isinstance(item, bytes) else json.dumps(item).encode()
                futures.append(await js.publish_async(self.subject, data))
            await asyncio.gather(*futures)

        asyncio.run(self._js(work))

    def read(self, subject: str, parse: Any = json.loads) -> list[tuple[str | None, Any]]:
        """Every message the stream holds on ``subject``: (its Nats-Msg-Id, its JSON)."""

        async def work(js: Any) -> list[tuple[str | None, Any]]:
            from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

            info = await js.stream_info(self.stream, subjects_filter=subject)
            count = (info.state.subjects or {}).get(subject, 0)
            if not count:
                return []
            config = ConsumerConfig(deliver_policy=DeliverPolicy.ALL, ack_policy=AckPolicy.NONE)
            sub = await js.pull_subscribe(subject, stream=self.stream, config=config)
            msgs: list[Any] = []
            with contextlib.suppress(TimeoutError):  # (all read: the count is checked)
                while len(msgs) < count:
                    msgs += await sub.fetch(min(500, count - len(msgs)), timeout=1)
            return [((m.headers or {}).get("Nats-Msg-Id"), parse(m.data)) for m in msgs]

        found: list[tuple[str | None, Any]] = asyncio.run(self._js(work))
        return found


@pytest.fixture
def log() -> Iterator[Log]:
    reason = _unreachable(NATS_URL)
    if reason:
        pytest.skip(reason)
    made = Log(NATS_URL)
    made.create()
    yield made
    made.delete()


def consume(log: Log, db: str, *more: str) -> tuple[int, dict[str, Any], str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["consume", "--db", db, "--nats", log.url, "--stream", log.stream]
    argv += ["--subject", log.subject, "--ruleset", "elo", "--json", *more]
    code = main(argv, out=out, err=err)
    return code, json.loads(out.getvalue() or "{}"), err.getvalue()


def consume_process(
    log: Log, db: str, *more: str, kill: str | None = None
) -> subprocess.Popen[str]:
    env = {**os.environ, "RANKCRAFT_CONSUME_KILL": kill or ""}
    argv = [sys.executable, "-m", "rankcraft.cli", "consume", "--db", db, "--nats", log.url]
    argv += ["--stream", log.stream, "--subject", log.subject, "--ruleset", "elo", *more]
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def each_event_once(log: Log, count: int) -> list[tuple[str | None, Any]]:
    """The events on the league's ratings subject, checked to be ``count``, each id
    (``SUBJECT:MATCH:PLAYER``) once."""
    events = log.read(f"{log.subject}.ratings")
    assert len(events) == count and len({mid for mid, _ in events}) == count
    return events


def replayed(matches: list[dict[str, Any]]) -> list[Any]:
    league = rankcraft.League("elo")
    league.record_many(matches)
    return league.players()


def players_at(db: str) -> list[Any]:
    with rankcraft.League.open(db, create=False) as league:
        return league.players()


def test_a_league_fed_by_the_consumer_equals_a_replay_and_publishes_each_change(
    log: Log, db_url: str
) -> None:
    matches = games(240)
    log.publish(matches)
    code, done, _ = consume(log, db_url, "--batch", "100", "--max-messages", "240")
    assert code == 0, done
    assert (done["consumed"], done["rated"], done["skipped"], done["dead"]) == (240, 240, 0, 0)
    assert done["matches"] == 240 and done["published"] == 480
    assert players_at(db_url) == replayed(matches)
    events = each_event_once(log, 480)
    reference = rankcraft.League("elo")
    reference.record_many(matches[:1])
    first = {e["player"]: e for mid, e in events if e["match_id"] == "m0"}
    report = reference.codec.report_to_dict(reference.report("m0"))
    for change in report["changes"]:
        event = first[change["player"]]
        assert event["before"] == change["skill_before"] and event["after"] == change["skill_after"]
        assert event["league"] == log.subject
    assert events[0][0] == f"{log.subject}:m0:{events[0][1]['player']}"
    with rankcraft.League.open(db_url, create=False) as league:
        assert league.store.outbox(10) == []
        fed = league.store.get_meta(FED_BY)  # (what the HTTP service refuses writes with)
        said = json.loads(league.store.get_meta(CONSUMED) or "{}")  # (what /health shows)
    assert fed is not None and fed.endswith(f" {log.subject}")
    assert said["log"] == fed and said["rated"] + 100 >= 240
    code, found, _ = consume(log, db_url, "--status")
    assert code == 0 and (found["lag"], found["matches"], found["outbox"]) == (0, 240, 0)


def test_a_republished_match_is_rated_once_and_a_restart_goes_on_from_its_place(
    log: Log, tmp_path: Path
) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(150)
    log.publish([*matches[:100], matches[10], matches[99]])  # (two again, within the batch)
    code, done, _ = consume(log, db, "--batch", "60", "--max-messages", "70")
    assert code == 0 and (done["consumed"], done["rated"]) == (70, 70)
    code, done, _ = consume(log, db, "--batch", "60", "--idle-exit", "0")
    assert (done["consumed"], done["rated"], done["skipped"]) == (32, 30, 2)
    log.publish([matches[5], *matches[100:]])
    code, done, _ = consume(log, db, "--idle-exit", "0")
    assert (done["consumed"], done["rated"], done["skipped"]) == (51, 50, 1)
    assert players_at(db) == replayed(matches)
    assert len(log.read(f"{log.subject}.ratings")) == 300


def test_a_poison_message_goes_to_the_dead_letter_subject_and_the_rest_is_rated(
    log: Log, tmp_path: Path
) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(20)
    bad_time = {**games(1, 50)[0], "played_at": "yesterday"}
    one_side = {**games(1, 51)[0], "teams": [["p1"]], "ranks": [1]}
    log.publish([*matches[:5], b"{not json", bad_time, *matches[5:12], one_side, *matches[12:]])
    code, done, _ = consume(
        log, db, "--batch", "10", "--idle-exit", "0", "--dead-letter", f"{log.subject}.bad"
    )
    assert code == 0 and (done["rated"], done["dead"]) == (20, 3)
    assert players_at(db) == replayed(matches)
    dead = log.read(f"{log.subject}.bad")
    assert [e["stream_seq"] for _, e in dead] == [6, 7, 15]
    assert "not a JSON match" in dead[0][1]["error"] and dead[0][1]["data"] == "{not json"
    assert "played_at" in dead[1][1]["error"] and "yesterday" in dead[1][1]["error"]
    assert "teams" in dead[2][1]["error"]
    assert json.loads(dead[1][1]["data"])["id"] == "m50"


def test_a_rank_layer_s_changes_are_in_the_events(log: Log, tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(12)
    log.publish(matches)
    code, done, _ = consume(log, db, "--ruleset", "skyweaver", "--idle-exit", "0")
    assert code == 0 and done["published"] == 24
    reference = rankcraft.League("skyweaver")
    reference.record_many(matches)
    report = reference.codec.report_to_dict(reference.report("m11"))
    events = {(e["match_id"], e["player"]): e for _, e in log.read(f"{log.subject}.ratings")}
    for change in report["changes"]:
        event = events["m11", change["player"]]
        assert event["rank_before"] == change["rank_before"]
        assert event["rank_after"] == change["rank_after"]
        assert (event["tier_before"], event["tier_after"]) == (
            change["rank_before"]["tier"],
            change["rank_after"]["tier"],
        )


def wait_for(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err


def test_a_consumer_killed_between_commit_and_acknowledgement_loses_and_doubles_nothing(
    log: Log, tmp_path: Path
) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(200)
    log.publish(matches)
    killed = consume_process(log, db, "--batch", "80", kill="commit")
    assert wait_for(killed)[0] == -signal.SIGKILL
    assert len(players_at(db)) > 0 and log.read(f"{log.subject}.ratings") == []
    code, done, _ = consume(log, db, "--batch", "80", "--idle-exit", "0")
    assert code == 0 and (done["rated"], done["skipped"]) == (120, 80)
    assert players_at(db) == replayed(matches)
    each_event_once(log, 400)


def test_a_consumer_killed_between_commit_and_publish_publishes_each_event_once(
    log: Log, tmp_path: Path
) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(100)
    log.publish(matches)
    killed = consume_process(log, db, "--batch", "60", kill="ack")
    assert wait_for(killed)[0] == -signal.SIGKILL
    with rankcraft.League.open(db, create=False) as league:
        assert len(league.store.outbox(1000)) == 120  # (the first batch's, kept)
    assert log.read(f"{log.subject}.ratings") == []
    code, done, _ = consume(log, db, "--batch", "60", "--idle-exit", "0")
    assert code == 0 and (done["consumed"], done["rated"], done["published"]) == (40, 40, 200)
    assert players_at(db) == replayed(matches)
    each_event_once(log, 200)


def left_behind(db: str) -> list[int]:
    """The processes whose command line names ``db`` (a consumer, or its relay)."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and db in (entry / "cmdline").read_text():
                found.append(int(entry.name))
    return found


def test_a_killed_consumer_leaves_no_relay_process_behind(log: Log, tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    log.publish(games(30))
    killed = consume_process(log, db, "--batch", "10", kill="ack")
    assert wait_for(killed)[0] == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while left_behind(db) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left_behind(db) == []


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            if entry.name.isdigit():
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def open_files(pid: int) -> set[str]:
    """What the descriptors of ``pid`` point at (paths, ``socket:[inode]``, ...)."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            found.add(os.readlink(fd))
    return found


def test_the_relay_holds_none_of_the_consumer_s_files(log: Log, tmp_path: Path) -> None:
    """The relay closes what it inherited: the consumer's NATS socket (which would
    outlive a reconnection), its database files, its standard streams."""
    db = str(tmp_path / "league.sqlite")
    proc = consume_process(log, db, "--idle-exit", "30")
    try:
        deadline, relay = time.monotonic() + 15, []
        while not relay and time.monotonic() < deadline:
            relay = [p for p in children_of(proc.pid) if open_files(p) is not None]
            time.sleep(0.05)
        assert len(relay) == 1
        time.sleep(0.3)  # (it closes them first thing)
        theirs, mine = open_files(proc.pid), open_files(relay[0])
        assert not any(str(tmp_path) in f for f in mine), mine
        shared = {f for f in theirs & mine if f.startswith("socket:")}
        assert shared == set() and os.devnull in mine
    finally:
        proc.send_signal(signal.SIGTERM)
        assert wait_for(proc)[0] == 0


def test_a_stuck_relay_is_killed_and_its_round_given_up(log: Log) -> None:
    """A relay that takes no round (stopped) does not stop the consumer's loop: after
    HAND_WAIT it is killed and the round fails (its events stay in the outbox)."""
    from rankcraft import relay as relays

    async def work() -> tuple[str | None, bool]:
        relay = await relays.Relay(log.url, f"{log.subject}.ratings", lambda _: None).start()
        child = relay.child
        os.kill(child.pid, signal.SIGSTOP)
        try:
            events = [(f"e{i}", "x" * 200) for i in range(20_000)]  # (more than a pipe holds)
            beats = 0

            async def beat() -> None:
                nonlocal beats
                while True:
                    await asyncio.sleep(0.05)
                    beats += 1

            ticking = asyncio.create_task(beat())
            sent = await relay.send(events)
            with contextlib.suppress(Exception):
                await relay.confirm(sent, 0.1)
            ticking.cancel()
            return sent.error, beats > 5
        finally:
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGCONT)
            await relay.stop()

    import rankcraft.relay

    saved = rankcraft.relay.HAND_WAIT
    rankcraft.relay.HAND_WAIT = 1.0
    try:
        error, loop_went_on = asyncio.run(work())
    finally:
        rankcraft.relay.HAND_WAIT = saved
    assert error is not None and "stuck" in error and loop_went_on


def test_a_relay_that_dies_while_a_round_is_written_fails_the_round(log: Log) -> None:
    """The child dies (killed) while the consumer's thread is writing a round larger
    than the pipe holds: the round fails, to be published again; nothing raises."""
    from rankcraft import relay as relays

    async def work() -> str | None:
        relay = await relays.Relay(log.url, f"{log.subject}.ratings", lambda _: None).start()
        child = relay.child
        os.kill(child.pid, signal.SIGSTOP)  # (it takes nothing: the pipe fills)

        async def kill() -> None:
            await asyncio.sleep(0.3)
            os.kill(child.pid, signal.SIGKILL)

        killing = asyncio.create_task(kill())
        sent = await relay.send([(f"e{i}", "x" * 200) for i in range(40_000)])
        await killing
        await relay.stop()
        return sent.error

    assert asyncio.run(work()) == "the relay process ended"


def test_the_consumer_collects_the_cycles_a_batch_leaves() -> None:
    """With the collector paused, a pass runs once enough new objects live."""
    import gc
    import weakref

    from rankcraft import collector as consuming

    class Node:
        pass

    saved = consuming.COLLECT_AFTER
    consuming.COLLECT_AFTER = 1000
    gc.collect()  # (the count of new objects starts from 0)
    try:
        with consuming.paused():
            cycle = Node()
            cycle.me = cycle  # type: ignore[attr-defined]
            gone = weakref.ref(cycle)
            del cycle
            consuming.collect()  # (too few objects yet: not collected)
            assert gone() is not None and not gc.isenabled()
            keep = [[i] for i in range(2000)]
            consuming.collect()
            assert gone() is None and len(keep) == 2000
    finally:
        consuming.COLLECT_AFTER = saved


def test_a_relay_that_dies_is_replaced_and_each_event_is_published_once(
    log: Log, tmp_path: Path
) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(100)
    log.publish(matches)
    proc = consume_process(log, db, "--batch", "30", "--idle-exit", "0", kill="relay")
    code, err = wait_for(proc)
    assert code == 0, err
    assert players_at(db) == replayed(matches)
    each_event_once(log, 200)
    with rankcraft.League.open(db, create=False) as league:
        assert league.store.outbox(10) == []


def test_no_relay_publishes_the_events_from_the_consumer_itself(log: Log, tmp_path: Path) -> None:
    from rankcraft.ratingevents import events_of

    matches = games(60)
    log.publish(matches)
    db = str(tmp_path / "league.sqlite")
    code, done, _ = consume(log, db, "--batch", "25", "--idle-exit", "0", "--no-relay")
    assert code == 0 and (done["rated"], done["published"]) == (60, 120)
    assert players_at(db) == replayed(matches)
    with rankcraft.League.open(db, create=False) as league:
        stored = events_of(league, log.subject, [m["id"] for m in matches])
    events = log.read(f"{log.subject}.ratings")
    assert events == [(eid, json.loads(text)) for eid, text in stored]


def test_sigterm_finishes_the_batch_under_way_and_exits_0(log: Log, tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(50)
    log.publish(matches)
    proc = consume_process(log, db, "--batch", "20")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        code, found, _ = consume(log, db, "--status")
        if code == 0 and found["lag"] == 0 and found["outbox"] == 0 and found["matches"] == 50:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    code, err = wait_for(proc)
    assert code == 0, err
    assert "50 messages" in err and "lag 0" in err
    assert players_at(db) == replayed(matches)


def test_bad_options_are_refused_naming_them_and_create_nothing(log: Log, tmp_path: Path) -> None:
    db = tmp_path / "league.sqlite"
    for more, named in (
        (["--batch", "0"], "'--batch'"),
        (["--max-messages", "-1"], "'--max-messages'"),
        (["--durable", "a b"], "'--durable'"),
        (["--pack", "0"], "'--pack'"),
    ):
        code, found, _ = consume(log, str(db), *more)
        assert code == 2 and named in found["error"]["message"]
        assert not db.exists()
    out, err = io.StringIO(), io.StringIO()
    argv = ["consume", "--db", str(db), "--nats", log.url, "--stream", "rctest_none_here"]
    argv += ["--ruleset", "elo", "--idle-exit", "0", "--subject"]
    code = main([*argv, "rctest.none"], out=out, err=err)
    assert code == 2 and "'--stream' names no stream" in err.getvalue()
    argv[argv.index("rctest_none_here")] = log.stream
    code = main([*argv, log.subject, "--events", "rctest.nowhere"], out=out, err=err)
    assert code == 2 and "'--events' is a subject no stream" in err.getvalue()
    assert not db.exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_nats(port: int, store: Path) -> subprocess.Popen[bytes]:
    argv = [shutil.which("nats-server") or "nats-server", "-js", "-a", "127.0.0.1"]
    proc = subprocess.Popen([*argv, "-p", str(port), "-sd", str(store)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not _jetstream_answers(f"nats://127.0.0.1:{port}") and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc


def _jetstream_answers(url: str) -> bool:
    import nats

    async def ask() -> bool:
        try:
            nc = await nats.connect(url, connect_timeout=0.5, max_reconnect_attempts=0)
        except Exception:
            return False
        try:
            await nc.jetstream().account_info()
        except Exception:
            return False
        finally:
            await nc.close()
        return True

    return asyncio.run(ask())


def matches_at(db: str) -> int:
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            return int(con.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.Error:  # (not made yet)
        return 0


@pytest.mark.slow(seconds=7)
def test_a_nats_restart_while_consuming_loses_and_doubles_nothing(tmp_path: Path) -> None:
    if shutil.which("nats-server") is None:
        pytest.skip("needs the nats-server binary to restart a server of its own")
    if _unreachable(NATS_URL) and "nats-py" in (_unreachable(NATS_URL) or ""):
        pytest.skip(_unreachable(NATS_URL) or "")
    port, store, db = free_port(), tmp_path / "js", str(tmp_path / "league.sqlite")
    server = start_nats(port, store)
    try:
        log = Log(f"nats://127.0.0.1:{port}")
        log.create()
        matches = games(1500)
        log.publish(matches[:1400])
        proc = consume_process(log, db, "--batch", "50", "--idle-exit", "1")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and matches_at(db) < 100:
            time.sleep(0.01)  # (the server is killed while the consumer is busy)
        server.send_signal(signal.SIGKILL)
        server.wait()
        server = start_nats(port, store)
        log.publish(matches[1400:])
        code, err = wait_for(proc)
        assert code == 0, err
        assert players_at(db) == replayed(matches), err
        each_event_once(log, 3000)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(10)


def test_the_memory_store_keeps_the_outbox_with_its_batch() -> None:
    league = rankcraft.League("elo")
    with league.batch():
        league.record_many(games(2))
        league.store.add_outbox([("e1", "{}"), ("e2", "[]")])
        assert league.store.outbox(10) == []  # (kept when the batch commits)
    with pytest.raises(RuntimeError), league.batch():
        league.store.add_outbox([("e3", "{}")])
        league.store.drop_outbox(2)
        raise RuntimeError
    assert league.store.outbox(10) == [(1, "e1", "{}"), (2, "e2", "[]")]
    with league.batch():
        league.store.drop_outbox(1)
        league.store.add_outbox([("e3", "1")])
    assert league.store.outbox(10) == [(2, "e2", "[]"), (3, "e3", "1")]


def offline_consumer() -> Any:
    """A consumer of an ``elo`` league in memory, ``--idle-exit 0``, whose loop is fed
    by the test (no server: its outbox publishes nothing)."""
    from rankcraft.consume import ConsumeOptions, Consumer

    class Outbox:
        async def publish(self) -> None:
            pass

    options = ConsumeOptions(nats="nats://x:1", stream="s", subject="t", idle_exit=0)
    consumer = Consumer(rankcraft.League("elo"), options, ":memory:", None)
    consumer.outbox = Outbox()
    return consumer


def test_only_a_quiet_log_counts_as_idle_not_a_server_away() -> None:
    """``--idle-exit 0`` stops once a fetch finds nothing, not at a connection error (a
    server restarting): the consumer goes on and asks again."""
    pytest.importorskip("nats")
    import nats

    class Sub:
        def __init__(self) -> None:
            self.said: list[BaseException] = [nats.errors.TimeoutError(), OSError("reset")]

        async def fetch(self, *args: Any, **kwargs: Any) -> Any:
            raise self.said.pop()

    consumer = offline_consumer()
    sub = Sub()
    asyncio.run(consumer._loop(nats, None, sub))
    assert sub.said == []  # (the error, then the quiet log that ends it)


def test_a_gap_within_a_batch_reads_again_from_the_floor() -> None:
    """A batch whose consumer sequences skip one (a delivery lost on the way) is not
    rated (acknowledging its last message would acknowledge the lost one too): the
    consumer is made again from its acknowledgement floor."""
    pytest.importorskip("nats")
    import nats

    class Seq:
        def __init__(self, n: int) -> None:
            self.sequence = type("S", (), {"consumer": n, "stream": n})()
            self.num_pending = 0

    class Msg:
        def __init__(self, n: int) -> None:
            self.metadata = Seq(n)

    class Sub:
        def __init__(self, batches: list[Any]) -> None:
            self.batches = batches

        async def fetch(self, *args: Any, **kwargs: Any) -> Any:
            if not self.batches:
                raise nats.errors.TimeoutError
            return self.batches.pop(0)

    consumer = offline_consumer()
    handled, recovered = [], []

    async def handle(js: Any, msgs: Any) -> None:
        handled.append([m.metadata.sequence.consumer for m in msgs])

    async def recover(nats: Any, js: Any, sub: Any) -> Any:
        recovered.append(consumer.last_delivery)
        return sub

    consumer.handle = handle  # type: ignore[method-assign]
    consumer._recover = recover  # type: ignore[method-assign]
    sub = Sub([[Msg(1), Msg(2)], [Msg(3), Msg(5)], [Msg(3), Msg(4)]])
    asyncio.run(consumer._loop(nats, None, sub))
    assert handled == [[1, 2], [3, 4]] and recovered == [2]


def test_a_pull_sent_ahead_and_lost_leaves_the_next_fetch_its_own_request() -> None:
    """The next fetch waits for a request sent ahead, then still asks for itself (the
    wait does not use up its time): a request lost in a server's restart is not read as
    an idle log."""
    from rankcraft.jetstream import Puller

    class Status:  # (the server's answer to a request it has no message for)
        def __init__(self, subject: str) -> None:
            self.subject, self.reply, self.headers = subject, "", {"Status": "404"}

    class NC:
        def __init__(self) -> None:
            self.asked: list[bytes] = []
            self.puller: Any = None

        def new_inbox(self) -> str:
            return "_INBOX.x"

        async def publish(self, subject: str, data: bytes, reply: str = "") -> None:
            self.asked.append(data)
            if json.loads(data).get("no_wait"):  # (answered at once: nothing there)
                asyncio.get_running_loop().create_task(self.puller._on_msg(Status(reply)))

    async def work() -> list[bytes]:
        nc = NC()
        nc.puller = puller = Puller(nc, "s", "d")
        puller.ahead = True  # (a request sent ahead, whose answer was lost)
        with contextlib.suppress(Exception):
            await puller.fetch(10, timeout=0.3)
        return nc.asked

    asked = asyncio.run(work())
    assert [json.loads(a).get("no_wait") for a in asked] == [True, None]


RERATES = 'extends = "elo"\nname = "elo_rerate"\n[history]\nlate = "rerate"\n'


def late_one(matches: list[dict[str, Any]]) -> dict[str, Any]:
    """A match of p0 and p1 half a minute after ``matches[5]``: earlier than the later ones."""
    when = datetime.fromisoformat(matches[5]["played_at"]) + timedelta(seconds=30)
    return {
        "id": "late",
        "played_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "teams": [["p0"], ["p1"]],
        "ranks": [2, 1],
    }


def test_a_late_match_is_placed_at_its_time_where_the_ruleset_rerates(
    log: Log, tmp_path: Path
) -> None:
    db, ruleset = str(tmp_path / "league.sqlite"), tmp_path / "rerate.toml"
    ruleset.write_text(RERATES)
    matches = games(30)
    late = late_one(matches)
    log.publish([*matches[:25], late, *matches[25:]])  # (in the middle of a batch)
    code, done, err = consume(
        log, db, "--ruleset", str(ruleset), "--batch", "10", "--idle-exit", "0"
    )
    assert code == 0 and (done["rated"], done["dead"], done["published"]) == (31, 0, 62), err
    in_time = sorted([*matches, late], key=lambda m: m["played_at"])
    assert players_at(db) == replayed(in_time)  # (a replay in time order: the reference)
    with rankcraft.League.open(db, create=False) as league:
        assert [(e.kind, e.match_id) for e in league.edits()] == [("late", "late")]
        report = league.codec.report_to_dict(league.report("late"))
    events = each_event_once(log, 62)
    placed = {e["player"]: e for _, e in events if e["match_id"] == "late"}
    reference = rankcraft.League("elo")
    reference.record_many(in_time[: in_time.index(late) + 1])
    for change in reference.codec.report_to_dict(reference.report("late"))["changes"]:
        assert placed[change["player"]]["after"] == change["skill_after"]
    assert [c["skill_after"] for c in report["changes"]] == [
        placed[p]["after"] for p in ("p0", "p1")
    ]


def test_a_late_match_is_dead_lettered_with_its_reason_where_the_ruleset_refuses(
    log: Log, tmp_path: Path
) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(30)
    log.publish([*matches[:25], late_one(matches), *matches[25:]])
    code, done, _ = consume(log, db, "--batch", "10", "--idle-exit", "0")
    assert code == 0 and (done["rated"], done["dead"], done["published"]) == (30, 1, 60)
    assert players_at(db) == replayed(matches)
    ((_, dead),) = log.read(f"{log.subject}.dead")
    assert "'played_at'" in dead["error"] and "earlier than the last match" in dead["error"]
    assert json.loads(dead["data"])["id"] == "late"


def test_a_late_match_placed_by_a_consumer_that_died_before_keeping_its_events(
    log: Log, tmp_path: Path
) -> None:
    db, ruleset = str(tmp_path / "league.sqlite"), tmp_path / "rerate.toml"
    ruleset.write_text(RERATES)
    matches = games(8)
    with rankcraft.League.open(db, str(ruleset)) as league:
        league.store.set_meta(LATE_EDIT, "0")  # (as a consumer keeps it before any edit)
        league.record_many(matches)
        league.record(late_one(matches))  # (placed; its events never kept)
    code, done, err = consume(log, db, "--ruleset", str(ruleset), "--idle-exit", "0")
    assert code == 0 and done["published"] == 2, err
    events = log.read(f"{log.subject}.ratings")
    assert sorted((e["match_id"], e["player"]) for _, e in events) == [
        ("late", "p0"),
        ("late", "p1"),
    ]
    code, done, _ = consume(log, db, "--ruleset", str(ruleset), "--idle-exit", "0")  # (once)
    assert code == 0 and done["published"] == 0


def test_pack_puts_several_events_in_one_message(log: Log, tmp_path: Path) -> None:
    db = str(tmp_path / "league.sqlite")
    matches = games(12)
    log.publish(matches)
    code, done, _ = consume(log, db, "--pack", "7", "--idle-exit", "0")
    assert code == 0 and done["published"] == 4  # (24 events, 7 a message)
    lines = log.read(
        f"{log.subject}.ratings", parse=lambda d: [json.loads(x) for x in d.split(b"\n")]
    )
    assert [len(events) for _, events in lines] == [7, 7, 7, 3]
    assert lines[0][0] == f"{log.subject}:m0:p0+7"
    unpacked = [e for _, events in lines for e in events]
    assert [(e["match_id"], e["player"]) for e in unpacked[:4]] == [
        ("m0", "p0"),
        ("m0", "p1"),
        ("m1", "p1"),
        ("m1", "p6"),
    ]


class _Publisher:
    """A publisher whose rounds are acknowledged at once, or lost (``fail``)."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.fail = False

    async def send(self, events: list[tuple[str, str]]) -> Any:
        from rankcraft.jetstream import Round

        if self.fail:
            raise OSError("connection lost")
        self.sent += [eid for eid, _ in events]
        sent = Round("r", len(events))
        sent.acked = sent.count
        sent.done.set()
        return sent

    async def confirm(self, sent: Any, timeout: float) -> None:
        pass

    def forget(self) -> None:
        pass


def test_the_outbox_keeps_rows_until_their_own_round_is_acknowledged() -> None:
    from types import SimpleNamespace

    from rankcraft.outboxing import Outbox

    league, publisher = rankcraft.League("elo"), _Publisher()
    outbox = Outbox(league, publisher, SimpleNamespace(published=0))  # type: ignore[arg-type]

    def commit(events: list[tuple[str, str]]) -> int:
        with league.batch():
            upto = outbox.keep(events)
        outbox.kept()
        return upto

    async def flow() -> None:
        first = [("a", "1"), ("b", "2")]
        await outbox.send(first, commit(first))
        commit([("c", "3")])  # (the first round confirmed: its rows go with this commit)
        assert [eid for _, eid, _ in league.store.outbox(10)] == ["c"]
        publisher.fail = True  # (lost between the commit and its round)
        with pytest.raises(OSError):
            await outbox.send([("c", "3")], 1)
        publisher.fail = False
        await outbox.send([("d", "4")], commit([("d", "4")]))  # (c, d: from the store)
        assert league.store.outbox(10) == []

    asyncio.run(flow())
    assert publisher.sent == ["a", "b", "c", "d"]


@pytest.mark.parametrize("ruleset", ["elo", "skyweaver", "openskill"])
def test_the_events_written_from_the_entries_are_those_of_the_stored_reports(
    ruleset: str,
) -> None:
    from rankcraft.engine import collecting
    from rankcraft.ratingevents import EventWriter, events_of

    league = rankcraft.League(ruleset)
    writer = EventWriter(league.skill_class, league.rank_class, "leagues.x")
    matches = games(30)
    matches[7] = {**matches[7], "teams": [["p1", "p2"], ["p3", "p4"]]}  # (a team match)
    written = []
    for start in (0, 10, 20):  # (three batches: the states remembered across them)
        with league.batch(), collecting(league) as entries:
            league.record_many(matches[start : start + 10])
        written += writer.events(entries)
    assert written == events_of(league, "leagues.x", [m["id"] for m in matches])
