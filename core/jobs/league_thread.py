"""The league's thread: where the HTTP service runs every handler that touches the league,
one at a time, on an event loop of its own, while the service's loop keeps answering.

Whatever the work raises stays the work's: an exception that is not an ``Exception``
(``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, a plugin's own
``BaseException``) would end the thread's loop, and every later request would wait
for it forever; the thread catches it and raises :class:`Escaped` in its place."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Escaped(Exception):
    """Raised where the league's work raised an exception that is not an ``Exception``
    (``exception``, whose traceback says where), caught on the league's thread so that
    the thread and its loop live on."""

    def __init__(self, exception: BaseException) -> None:
        super().__init__(f"{type(exception).__name__}: {exception}"[:300])
        self.exception = exception


async def _contained(work: Coroutine[Any, Any, T]) -> T:
    """``work``, with what would end the league's loop raised as :class:`Escaped`. A
    ``CancelledError`` stays one when the work was cancelled (its caller gave up)."""
    try:
        return await work
    except Exception:
        raise
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        raise Escaped(exc) from None
    except BaseException as exc:
        raise Escaped(exc) from None


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
            if self._thread is not None and not self._thread.is_alive():
                raise RuntimeError("the league's thread has stopped: restart the service")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine ``work`` on the league's loop and wait for it here.

        :raises Escaped: in place of a ``BaseException`` that is not an ``Exception``.
        """
        future = asyncio.run_coroutine_threadsafe(_contained(work), self._started())
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

    def close(self, timeout: float = 30.0) -> bool:
        """Stop the thread (after the work it runs, waiting ``timeout`` seconds for it)
        and close its loop: whether the thread has ended (False: it is still in a piece
        of work, and goes on with it while the process lives: it is a daemon)."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return True
        if not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if thread.is_alive():
            return False
        loop.close()
        return True

    def close_with(self, owner: object) -> None:
        """Close this thread when ``owner`` is garbage-collected (an application that
        was never shut down, as in tests)."""
        weakref.finalize(owner, self.close)
