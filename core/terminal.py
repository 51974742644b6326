"""What the command line shows on a terminal: progress bars with rate and ETA, and
tables, both drawn by rich. Piped or redirected output gets none of it: no bar, and
tables as plain aligned text that scripts can read."""

from __future__ import annotations

import gzip
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any, TextIO

EVENTS_SHOWN = 20
"""A catch-up of season events is drawn when at least this many are due."""


class Bar:
    """A progress bar of ``what`` on ``stream`` when it is a terminal (else nothing):
    call it with the count done so far; ``total`` None shows the count and rate only.
    Use it as a context manager, or call :meth:`done` at the end."""

    def __init__(
        self, stream: TextIO, what: str, total: int | None = None, enabled: bool | None = None
    ) -> None:
        self.enabled = _is_terminal(stream) if enabled is None else enabled
        self._progress = None
        self._task = None
        self._events: Any = None
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.table import Column

        def figures() -> Column:  # (never cut: "400/…", "0:0…" on an 80-column terminal)
            return Column(no_wrap=True, overflow="ignore")

        # the figures keep their width; the description (cut with "…") and the bar share
        # what is left of the line, so the whole fits the terminal's width
        columns = [
            TextColumn(
                "[progress.description]{task.description}",
                table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=8),
            ),
            BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=5)),
            MofNCompleteColumn(table_column=figures()),
            TaskProgressColumn(table_column=figures()),
            TextColumn("{task.fields[rate]}", table_column=figures()),
            TimeElapsedColumn(table_column=figures()),
            TextColumn("ETA", table_column=figures()),
            TimeRemainingColumn(table_column=figures()),
        ]
        self._progress = Progress(
            *columns,
            console=Console(file=stream),
            expand=True,
            transient=True,
            refresh_per_second=8,
            speed_estimate_period=3600.0,  # (slow steps, a tuning trial: the ETA still moves)
        )
        self._progress.start()
        self._task = self._progress.add_task(what, total=total, rate="")

    def __call__(self, count: int) -> None:
        if self._progress is None or self._task is None:
            return
        task = self._progress.tasks[0]
        elapsed = task.elapsed or 0.0
        rate = ""
        if elapsed > 0 and count:
            per_second = count / elapsed
            rate = f"{per_second:,.0f}/s" if per_second >= 1 else f"{elapsed / count:,.1f} s each"
        self._progress.update(self._task, completed=count, rate=rate)

    def events(self, done: int, total: int) -> None:
        """Draw, under the bar, a catch-up of ``total`` season events (``done`` so far):
        :attr:`rankcraft.League.catch_up_progress`. Shown from :data:`EVENTS_SHOWN`
        events due; the line goes when they are done."""
        progress = self._progress
        if progress is None or total < EVENTS_SHOWN:
            return
        task = self._events
        first = task is None
        if task is None:
            self._events = task = progress.add_task("season events", total=total, rate="")
        progress.update(task, completed=done, total=total)
        if first or done >= total:
            progress.refresh()  # (drawn at least once, however fast the catch-up)
        if done >= total:
            progress.remove_task(task)
            self._events = None

    def done(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def __enter__(self) -> Bar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.done()


class Steps:
    """Progress off a terminal: a line on ``stream`` each time another ``every`` share of
    ``total`` is done (``what: 30% (14,856 of 49,520) 4 s``), for logs of long runs.
    Called like :class:`Bar`; without a total it writes nothing."""

    def __init__(self, stream: TextIO, what: str, total: int | None, every: float = 0.1) -> None:
        self.stream, self.what, self.total, self.every = stream, what, total, every
        self._shown = 0
        self._started = time.monotonic()

    def __call__(self, count: int) -> None:
        if not self.total:
            return
        step = min(int(count / self.total / self.every + 1e-9), int(1 / self.every + 1e-9))
        if step > self._shown:
            self._shown = step
            seconds = time.monotonic() - self._started
            self.stream.write(
                f"{self.what}: {step * self.every:.0%} ({count:,} of {self.total:,}) "
                f"{seconds:,.0f} s\n"
            )
            self.stream.flush()

    def done(self) -> None:
        return None

    def __enter__(self) -> Steps:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def progress_for(stream: TextIO, what: str, total: int | None) -> Bar | Steps:
    """A :class:`Bar` on a terminal, else :class:`Steps` (a line per 10%)."""
    return Bar(stream, what, total) if _is_terminal(stream) else Steps(stream, what, total)


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def count_lines(path: str) -> int | None:
    """The non-blank lines of a match file (the bar's total), or None for standard input
    or a file that cannot be read."""
    if path == "-":
        return None
    opener = gzip.open if path.endswith(".gz") else open
    header = 1 if path.lower().endswith((".csv", ".csv.gz")) else 0  # (a CSV's header row)
    try:
        with opener(path, "rb") as f:
            return sum(1 for line in f if line.strip()) - header
    except (OSError, EOFError):
        return None


def print_table(rows: Sequence[Sequence[str]], headers: Sequence[str], out: TextIO) -> None:
    """A table: drawn by rich on a terminal, else plain aligned text (numbers right).
    Cells are never cut: a table wider than the terminal is drawn at its full width."""
    numeric = [all(_is_number(r[i]) for r in rows) for i in range(len(headers))]
    if _is_terminal(out):
        from rich.console import Console
        from rich.table import Table

        table = Table(show_edge=False, header_style="bold")
        for header, num in zip(headers, numeric, strict=True):
            table.add_column(header, justify="right" if num else "left", no_wrap=True)
        for row in rows:
            table.add_row(*row)
        console = Console(file=out)
        # never a cut figure ("0.65…"): a table wider than the terminal is drawn whole
        # (the terminal wraps its lines) rather than squeezed into it
        needed = console.measure(table, options=console.options.update_width(10_000)).maximum
        if needed > console.width:
            console = Console(file=out, width=needed)
        console.print(table)
        return
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def fmt(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ).rstrip()

    out.write(fmt(headers) + "\n")
    for row in rows:
        out.write(fmt(row) + "\n")


def _is_number(text: str) -> bool:
    """A figure (``1,234``, ``-0.5``) or ``-``, a figure's placeholder."""
    if text == "-":
        return True
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 match``, ``2 matches``, ``1,000 players``.

    >>> plural(1, "match"), plural(2, "match"), plural(1000, "player")
    ('1 match', '2 matches', '1,000 players')
    """
    if count == 1:
        return f"1 {word}"
    if many is None:
        many = word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{count:,} {many}"
