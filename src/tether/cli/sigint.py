"""Ctrl-C for the ``tether`` command: stop at once, leave the run resumable, never a traceback.

:func:`run_cancellable` runs an invocation on an event loop of its own with a SIGINT handler
that *cancels* the invocation's task instead of raising ``KeyboardInterrupt`` wherever the main
thread happens to be. Cancellation reaches the durable driver at its current ``await``, which
records the run as ``stopped`` at its last step boundary, and the call returns None. Later
Ctrl-Cs while it stops are ignored, so none can interrupt the store write or print a traceback.

A model call that runs in a thread (llama.cpp generating) cannot be cancelled; the loop does
not wait for it (``asyncio.run`` would, for seconds): the default executor is shut down
without waiting, and the ``tether`` process exits at once (see :func:`hard_exit`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")


def run_cancellable(coro: Coroutine[Any, Any, T]) -> T | None:
    """Run ``coro`` to completion; None when Ctrl-C (SIGINT) cancelled it.

    Outside the main thread (where signal handlers cannot be set) it is a plain event-loop run.
    """
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="tether-cli")
    loop.set_default_executor(executor)  # asyncio.to_thread runs here; shut down without waiting
    task = loop.create_task(coro)
    stopping = False

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        # Python runs a handler between bytecodes, so another Ctrl-C can run it again in the
        # middle of this one: it takes no lock (a threading.Event deadlocked on its condition).
        nonlocal stopping
        if stopping:
            return
        stopping = True
        loop.call_soon_threadsafe(task.cancel)

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    try:
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            if not stopping:
                raise
            return None
        finally:
            _finish(loop, executor)
    finally:
        if in_main:
            signal.signal(signal.SIGINT, signal.SIG_IGN if stopping else previous)  # no second chance to raise


def _finish(loop: asyncio.AbstractEventLoop, executor: ThreadPoolExecutor) -> None:
    """Cancel what is left on ``loop`` and close it without waiting for executor threads."""
    try:
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        loop.close()


def hard_exit(code: int) -> None:
    """Flush and end the process now, without joining threads (an abandoned model call may run for seconds)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


__all__ = ["hard_exit", "run_cancellable"]
