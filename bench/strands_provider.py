"""The Strands provider's durable cost: a real strands-agents agent, one tool per cycle, on SQLite.

Run: ``python bench/strands_provider.py`` (``--cycles N``, ``--sizes 10,100,1000``, ``--repeats N``,
``--results bench/results.md`` to write its section there).

A conversation of N messages (loaded into the agent, and stored once before the clock starts)
gets ``--cycles`` more tool cycles (a model call asking for one tool, the tool, its result). Four
setups run the same program in one process, interleaved round by round (a fresh agent and session
each time), and the median of the rounds is taken:

- ``none``: no session manager (the floor);
- ``tether``: :class:`~tether.strands.session_manager.TetherSessionManager` on a SQLite file;
- ``file``: Strands' own ``FileSessionManager`` (a JSON file per message, the agent file rewritten);
- ``snapshot``: Strands' own ``SnapshotSessionManager`` saving ``snapshot_latest`` after every
  message (``save_latest_on="message"``: the strategy under which a crash mid-turn loses nothing;
  its default, ``"invocation"``, saves nothing until the turn ends).

Printed per size: ms per cycle of each setup, each manager's extra ms per cycle over ``none``, the
provider's own ms per cycle (the time the program's thread spends in the session manager's hooks
and in the tool executor's wrapper, not counting the wrapped executor: the overhead without the
noise of Strands' own per-cycle cost, which grows with the conversation), the bytes each setup
passed to ``write()`` per new message (``wchar`` of ``/proc/self/io``, every rewrite counts; the
SQLite WAL's pages for Tether) and the provider's row bytes per new message (``RunStore.bytes_written``:
the text of the rows it stores). The issue's targets at 1,000 messages: provider overhead <= 0.5 ms
per cycle, flat in the conversation's length; <= 6 KiB written per message.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.models import Model
from strands.session.file_session_manager import FileSessionManager
from strands.session.snapshot_session_manager import SnapshotSessionManager
from strands.storage.local_file_storage import LocalFileStorage

from tether.strands.executor import TetherToolExecutor
from tether.strands.session_manager import TetherSessionManager

SETUPS = ("none", "tether", "file", "snapshot")
TARGET_MS = 0.5
TARGET_FLAT = 1.5
"""Flat: the provider's own ms per cycle at the largest size over the smallest at most this."""
TARGET_BYTES = 6 * 1024
SECTION = "bench/strands_provider.py"


@tool
def echo(text: str) -> str:
    """Echo a text.

    Args:
        text: What to echo.
    """
    return text


class LoopModel(Model):
    """Asks for one ``echo`` call per model call until ``cycles`` calls were made, then answers."""

    def __init__(self, cycles: int) -> None:
        self.cycles = cycles
        self.calls = 0
        self.config: dict[str, Any] = {"model_id": "loop"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> Any:
        return self.config

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> AsyncGenerator[Any, None]:
        self.calls += 1
        yield {"messageStart": {"role": "assistant"}}
        if self.calls <= self.cycles:
            ident = f"tu-{len(messages)}"
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": ident, "name": "echo"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"text": f"step {self.calls} " + "x" * 200})}}}}
            yield {"contentBlockStop": {}}
            stop = "tool_use"
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
            stop = "end_turn"
        yield {"messageStop": {"stopReason": stop}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 0}}}

    async def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError
        yield


def history(size: int) -> list[dict[str, Any]]:
    """``size`` messages of earlier tool cycles (about 400 bytes each)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "start " + "y" * 300}]}]
    while len(messages) < size:
        ident = f"old-{len(messages)}"
        messages.append({"role": "assistant", "content": [{"toolUse": {"toolUseId": ident, "name": "echo", "input": {"text": "z" * 300}}}]})
        messages.append(
            {"role": "user", "content": [{"toolResult": {"toolUseId": ident, "status": "success", "content": [{"text": "z" * 300}]}}]}
        )
    messages.append({"role": "assistant", "content": [{"text": "ok"}]})
    return messages[:size] if messages[size - 1]["role"] == "assistant" else messages[: size - 1] + [messages[-1]]


class Meter:
    """The time the program's thread spends in the provider's own code: the session manager's
    hooks and the executor wrapper, less the time inside the executor it wraps (installed on the
    classes for the bench's process; a few perf_counter calls per hook)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.inside = 0  # nesting: a hook called from another metered hook is counted once

    def install(self) -> None:
        for name in (
            "append_message",
            "sync_agent",
            "redact_latest_message",
            "_before_invocation",
            "_after_invocation",
            "_before_tool_call",
        ):
            setattr(TetherSessionManager, name, self._timed(getattr(TetherSessionManager, name)))
        TetherToolExecutor._execute = self._timed_stream(TetherToolExecutor._execute, inner=True)  # type: ignore[method-assign]
        TetherSessionManager._replay = self._timed_stream(TetherSessionManager._replay, inner=False)  # type: ignore[method-assign]

    def _timed(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.inside:
                return method(*args, **kwargs)
            self.inside += 1
            start = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.thread_time() - start
                self.inside -= 1

        return timed

    def _timed_stream(self, method: Callable[..., Any], *, inner: bool) -> Callable[..., Any]:
        """An async-generator method timed step by step, less the time in the stream it wraps
        (the wrapped executor's ``_execute``, or the middleware's ``next_fn``)."""
        meter = self

        def excluded(stream: Any) -> Any:
            async def steps() -> AsyncGenerator[Any, None]:
                iterator = stream.__aiter__()
                while True:
                    start, mark = time.thread_time(), meter.seconds
                    try:
                        event = await iterator.__anext__()
                    except StopAsyncIteration:
                        return
                    finally:  # a metered hook called in there (BeforeToolCallEvent) stays counted
                        meter.seconds -= time.thread_time() - start - (meter.seconds - mark)
                    yield event

            return steps()

        @functools.wraps(method)
        def wrapper(this: Any, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
            if inner:
                wrapped = this.inner
                original = wrapped._execute
                wrapped._execute = lambda *a, **k: excluded(original(*a, **k))
            else:
                next_fn = args[1]
                args = (args[0], lambda context: excluded(next_fn(context)), *args[2:])
            stream = method(this, *args, **kwargs)

            async def timed() -> AsyncGenerator[Any, None]:
                try:
                    while True:
                        start = time.thread_time()
                        try:
                            event = await stream.__anext__()
                        except StopAsyncIteration:
                            meter.seconds += time.thread_time() - start
                            return
                        meter.seconds += time.thread_time() - start
                        yield event
                finally:
                    if inner:
                        del wrapped._execute

            return timed()

        return wrapper


METER = Meter()


def wchar() -> int:
    """Bytes this process passed to write() so far (0 where /proc is missing)."""
    try:
        text = Path("/proc/self/io").read_text()
    except OSError:
        return 0
    found = re.search(r"^wchar: (\d+)$", text, re.M)
    return int(found.group(1)) if found else 0


def one(setup: str, size: int, cycles: int, where: Path, n: int) -> dict[str, float]:
    """One run: seconds per cycle, write() bytes per new message, and for ``tether`` the
    provider's own seconds per cycle and its row bytes per new message."""
    manager: Any = None
    if setup == "tether":
        manager = TetherSessionManager(f"bench-{n}", store=where / "runs.db")
    elif setup == "file":
        manager = FileSessionManager(session_id=f"bench-{n}", storage_dir=str(where / "sessions"))
    elif setup == "snapshot":
        manager = SnapshotSessionManager(f"bench-{n}", storage=LocalFileStorage(str(where / "snapshots")), save_latest_on="message")
    messages = history(size)
    agent = Agent(
        model=LoopModel(cycles),
        tools=[echo],
        messages=messages,  # type: ignore[arg-type]
        callback_handler=None,
        session_manager=manager,
        conversation_manager=NullConversationManager(),  # the conversation keeps its N messages
    )
    if setup == "snapshot":  # stored before the clock starts, as the other managers' initialize does
        asyncio.run(manager.save_snapshot(agent, is_latest=True))
    count = len(agent.messages)
    rows = manager.store.bytes_written if setup == "tether" else 0
    own = METER.seconds
    written = wchar()
    start, cpu = time.perf_counter(), time.process_time()
    agent("go")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    new = len(agent.messages) - count
    figures = {"ms": elapsed / cycles * 1000, "cpu": cpu / cycles * 1000, "bytes": (wchar() - written) / new}
    if setup == "tether":
        figures["own"] = (METER.seconds - own) / cycles * 1000
        figures["rows"] = (manager.store.bytes_written - rows) / new
        manager.close()
    return figures


def measure(sizes: list[int], cycles: int, repeats: int) -> dict[int, dict[str, dict[str, list[float]]]]:
    """Every figure of every round: ``[size][setup][figure]``."""
    METER.install()
    figures: dict[int, dict[str, dict[str, list[float]]]] = {}
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            per = figures.setdefault(size, {setup: {} for setup in SETUPS})
            for round_ in range(repeats):
                order = SETUPS if round_ % 2 == 0 else SETUPS[::-1]  # interleaved, both orders
                for setup in order:
                    n += 1
                    for key, value in one(setup, size, cycles, Path(tmp), n).items():
                        per[setup].setdefault(key, []).append(value)
    return figures


def med(values: list[float]) -> float:
    return statistics.median(values)


def table(figures: dict[int, dict[str, dict[str, list[float]]]]) -> list[str]:
    """The side-by-side table (markdown)."""
    lines = [
        "| messages | setup | wall ms/cycle median (min-max) | CPU ms/cycle | extra CPU ms/cycle over none | "
        "provider's own CPU ms/cycle | write() B/msg | row B/msg |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size, per in figures.items():
        floor = med(per["none"]["cpu"])
        for setup in SETUPS:
            got = per[setup]
            extra = "" if setup == "none" else f"{med(got['cpu']) - floor:.3f}"
            own = f"{med(got['own']):.3f}" if "own" in got else ""
            rows = f"{med(got['rows']):,.0f}" if "rows" in got else ""
            lines.append(
                f"| {size:,} | {setup} | {med(got['ms']):.3f} ({min(got['ms']):.3f}-{max(got['ms']):.3f}) | {med(got['cpu']):.3f} | "
                f"{extra} | {own} | {med(got['bytes']):,.0f} | {rows} |"
            )
    return lines


def targets(figures: dict[int, dict[str, dict[str, list[float]]]]) -> list[str]:
    """The issue's targets, each met or not."""
    sizes = sorted(figures)
    large, small = figures[sizes[-1]], figures[sizes[0]]
    own, extra = med(large["tether"]["own"]), med(large["tether"]["cpu"]) - med(large["none"]["cpu"])
    flat = own / med(small["tether"]["own"])
    rows = max(med(per["tether"]["rows"]) for per in figures.values())

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    return [
        f"- provider overhead <= {TARGET_MS} ms per tool cycle at {sizes[-1]:,} messages: own {own:.3f} ms, "
        f"end to end {extra:.3f} CPU ms over none -> {verdict(own <= TARGET_MS)} "
        "(own CPU time; the end-to-end difference carries Strands' own noise)",
        f"- flat in the conversation's length (own ms at {sizes[-1]:,} / at {sizes[0]:,} <= {TARGET_FLAT}): {flat:.2f} -> "
        f"{verdict(flat <= TARGET_FLAT)}",
        f"- <= {TARGET_BYTES:,} bytes written per message (the provider's rows, largest over the sizes): {rows:,.0f} -> "
        f"{verdict(rows <= TARGET_BYTES)}",
    ]


def revision() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, cwd=Path(__file__).parent
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def section(figures: dict[int, dict[str, dict[str, list[float]]]], args: argparse.Namespace, load: tuple[float, float]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            f"<!-- {SECTION} -->",
            "## strands provider",
            "",
            f"Run {when}: `python bench/strands_provider.py --cycles {args.cycles} --sizes {args.sizes} --repeats {args.repeats}`, "
            f"Tether revision {revision()}, strands-agents {version('strands-agents')}, Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs shared with other work (load average {load[0]:.2f} before, {load[1]:.2f} after). "
            f"A real Strands agent, {args.cycles} tool cycles (one `echo` call each, a scripted model) on a conversation of N "
            "messages, four setups interleaved in one process, median of the rounds (min-max in brackets). The provider's own "
            "ms/cycle is the time spent in its hooks and executor wrapper; write() B/msg is every byte passed to write() per new "
            "message (SQLite WAL pages for Tether); row B/msg is the text of the rows Tether stores.",
            "",
            *table(figures),
            "",
            "Targets (issue 43):",
            "",
            *targets(figures),
            f"<!-- /{SECTION} -->",
        ]
    )


def replace_section(path: Path, text: str) -> None:
    """Put ``text`` in place of this bench's section of ``path`` (appended if it has none)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for this import only
    try:
        from _sections import write_section
    finally:
        del sys.path[0]
    write_section(path, SECTION, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--results", type=Path, help="write this bench's section of a results file (bench/results.md)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"strands provider (strands-agents {version('strands-agents')}): {args.cycles} tool cycles on a conversation of N messages, "
        f"median of {args.repeats} interleaved rounds"
    )
    before = os.getloadavg()[0]
    figures = measure(sizes, args.cycles, args.repeats)
    load = (before, os.getloadavg()[0])
    print(f"load average {load[0]:.2f} before, {load[1]:.2f} after")
    print("\n".join(table(figures)))
    print("\n".join(targets(figures)))
    if args.results is not None:
        replace_section(args.results, section(figures, args, load))


if __name__ == "__main__":
    main()
