"""A store that keeps everything in the process."""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Match, PlayerRecord, Report
from .base import Codec, MatchRow


class MemoryStore:
    """Players, matches and reports in dicts; ``rollback`` drops the pending batch."""

    def __init__(self) -> None:
        self._ruleset: tuple[str, str] | None = None
        self._players: dict[str, PlayerRecord] = {}
        self._rows: list[MatchRow] = []
        self._by_id: dict[str, MatchRow] = {}
        self._by_player: dict[str, list[MatchRow]] = {}
        self._pending_players: list[PlayerRecord] = []
        self._pending_matches: list[tuple[Match, Report]] = []
        self._meta: dict[str, str] = {}
        self._pending_meta: dict[str, str] = {}

    def attach(self, ruleset_name: str, ruleset_toml: str, codec: Codec) -> tuple[str, str] | None:
        if self._ruleset is None:
            self._ruleset = (ruleset_name, ruleset_toml)
            return None
        return self._ruleset

    def load_players(self) -> dict[str, PlayerRecord]:
        return dict(self._players)

    def match_ids(self) -> set[str]:
        return set(self._by_id)

    def begin(self) -> None:
        self._pending_players = []
        self._pending_matches = []
        self._pending_meta = {}

    def write(
        self, players: Iterable[PlayerRecord], matches: Iterable[tuple[Match, Report]]
    ) -> None:
        self._pending_players.extend(players)
        self._pending_matches.extend(matches)

    def commit(self) -> None:
        self._meta.update(self._pending_meta)
        for record in self._pending_players:
            self._players[record.id] = record
        for match, report in self._pending_matches:
            row = MatchRow(seq=len(self._rows) + 1, match=match, report=report)
            self._rows.append(row)
            self._by_id[match.id] = row
            for side in match.teams:
                for player in side:
                    self._by_player.setdefault(player, []).append(row)
        self.begin()

    def rollback(self) -> None:
        self.begin()

    def player_matches(self, player: str, limit: int | None) -> list[MatchRow]:
        rows = self._by_player.get(player, [])[::-1]
        return rows if limit is None else rows[:limit]

    def match(self, match_id: str) -> MatchRow | None:
        return self._by_id.get(match_id)

    def count_matches(self) -> int:
        return len(self._rows)

    def generation(self) -> int:
        return int(self._meta.get("generation", "0"))

    def bump_generation(self) -> int:
        new = int(self._pending_meta.get("generation", str(self.generation()))) + 1
        self._pending_meta["generation"] = str(new)
        return new

    def get_meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self._pending_meta[key] = value

    def close(self) -> None:
        pass
