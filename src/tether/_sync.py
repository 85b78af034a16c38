"""Running a coroutine to completion from synchronous code, inside a running event loop or not.

Ctrl-C in a plain script (``agent("...")`` in the main thread) stops at once: the invocation is
cancelled as ``asyncio.run`` cancels it (a durable run is then ``stopped`` at its last step and
resumable), nothing waits for a tool still running in its thread (the loop's threads are daemon
threads, so neither the loop's shutdown nor the interpreter's exit joins them), and the
``KeyboardInterrupt`` raised (``except KeyboardInterrupt`` still catches it) prints as one line
when nothing catches it, not a traceback through the loop; the process then exits as Python's
Ctrl-C does (killed by SIGINT: status 130 in a shell).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

_T = TypeVar("_T")
_P = ParamSpec("_P")

INTERRUPTED = "interrupted (Ctrl-C): the agent's invocation was cancelled; a durable run stays resumable with agent.resume(run_id)"


class DaemonThreads(concurrent.futures.ThreadPoolExecutor):
    """An executor running each call in a daemon thread of its own (never in the pool's threads).

    The loop's default executor (``asyncio.to_thread``: sync tools) of a synchronous call: a call
    abandoned by Ctrl-C never holds up the loop's shutdown or the process's exit, as the pool's
    own threads would (Python joins them at exit). A ``ThreadPoolExecutor`` only because asyncio
    takes no other default executor.
    """

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> concurrent.futures.Future[_T]:
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to the awaiting coroutine, as a pool does
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name="tether-sync", daemon=True).start()
        return future


def run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` on a new event loop and return its result.

    From a thread with no running loop, on a loop of its own (Ctrl-C in the main thread cancels
    ``coro`` and raises ``KeyboardInterrupt``, see the module's docstring); from inside a running loop (a notebook, an async
    framework calling sync code), on a new loop in a worker thread, because the running loop
    cannot be re-entered.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _run(coro: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coro)`` with daemon threads for ``asyncio.to_thread`` and a short Ctrl-C."""
    with asyncio.Runner() as runner:  # in the main thread, its SIGINT handler cancels the task
        runner.get_loop().set_default_executor(DaemonThreads())
        try:
            return runner.run(coro)
        except KeyboardInterrupt as exc:
            if exc.args == (INTERRUPTED,):
                raise  # a nested call's, already short
            # Exactly a KeyboardInterrupt (no subclass): Python then exits by SIGINT, as on any Ctrl-C.
            interrupted = KeyboardInterrupt(INTERRUPTED)
    _print_short(interrupted)
    raise interrupted from None  # the cancelled loop's traceback says nothing to the user


def _print_short(interrupted: KeyboardInterrupt) -> None:
    """Have ``interrupted`` print as one line if nothing catches it (an application's own
    ``sys.excepthook`` is left alone)."""
    if sys.excepthook is not sys.__excepthook__:
        return
    default = sys.__excepthook__

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if value is interrupted:
            print(f"tether: {value}", file=sys.stderr, flush=True)
        else:
            default(kind, value, tb)

    sys.excepthook = hook


__all__ = ["INTERRUPTED", "DaemonThreads", "run_sync"]
