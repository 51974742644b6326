"""The league's thread: where the HTTP service runs every handler that touches the league,
one at a time, on an event loop of its own, while the service's loop keeps answering."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LeagueThread:
    """A thread with its own event loop on which the league's handlers run, one league
    call at a time, while the service's loop keeps answering. Started at first use;
    :meth:`close` (or the garbage collection of its owner, :meth:`close_with`) ends it."""

    def __init__(self, name: str = "rankcraft-league") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine ``work`` on the league's loop and wait for it here."""
        future = asyncio.run_coroutine_threadsafe(work, self._started())
        return await asyncio.wrap_future(future)

    async def call(self, function: Callable[[], T]) -> T:
        """``function()`` on the league's thread."""

        async def work() -> T:
            return function()

        return await self.run(work())

    def handler(
        self, endpoint: Callable[[Any], Awaitable[T]]
    ) -> Callable[[Any], Coroutine[Any, Any, T]]:
        """``endpoint`` (a Starlette handler) run on the league's thread. The request
        it gets reads its body from the service's loop (where the connection lives)."""
        from starlette.requests import Request

        async def on_league_thread(request: Request) -> T:
            service = asyncio.get_running_loop()
            receive = request.receive

            async def bridged() -> Any:
                return await asyncio.wrap_future(
                    asyncio.run_coroutine_threadsafe(receive(), service)  # type: ignore[arg-type]
                )

            async def work() -> T:
                return await endpoint(Request(request.scope, bridged))

            return await self.run(work())

        return on_league_thread

    def close(self) -> None:
        """Stop the thread (after the work it runs) and close its loop."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        if not thread.is_alive():
            loop.close()

    def close_with(self, owner: object) -> None:
        """Close this thread when ``owner`` is garbage-collected (an application that
        was never shut down, as in tests)."""
        weakref.finalize(owner, self.close)
