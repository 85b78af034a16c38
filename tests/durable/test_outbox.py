"""The PostgreSQL outbox: a tool call's writes through ``context.transaction()`` commit with the
store write that records its result, on a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tether import Agent, LeaseLostError, ToolContext, tool
from tether.durable import MemoryStore, SQLiteStore
from tether.durable.postgres import PostgresStore
from tether.errors import TransactionUnavailableError
from tether.models import ScriptedModel
from tether.models.scripted import tool_call
from tether.tools.executors import ConcurrentToolExecutor

from .helpers import Crash


@pytest.fixture
def pg(pg_conninfo: str) -> Iterator[PostgresStore]:
    """A PostgresStore on a fresh database that also holds the application's ``orders`` table."""
    with psycopg.connect(pg_conninfo, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders (run_id TEXT NOT NULL, item TEXT NOT NULL)")
    store = PostgresStore(pg_conninfo)
    yield store
    store.close()


def orders(store: PostgresStore) -> list[tuple[str, str]]:
    """The committed order rows, as another session sees them."""
    with psycopg.connect(store.conninfo, autocommit=True) as conn:
        return [(r, i) for r, i in conn.execute("SELECT run_id, item FROM orders ORDER BY item").fetchall()]


def results(agent: Agent) -> list[Any]:
    """The tool results of the agent's run, in order."""
    return [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b]  # type: ignore[typeddict-item]


def order_agent(store: Any, body: Any, script: list[Any] | None = None, **kwargs: Any) -> Agent:
    @tool(transactional=True, idempotent=False)
    async def place_order(item: str, context: ToolContext) -> str:
        """Place an order."""
        return str(await body(item, context))

    model = ScriptedModel(script or [tool_call("place_order", {"item": "apple"}, tool_use_id="o1"), "ordered"], stateful=True)
    return Agent(model=model, tools=[place_order], store=store, **kwargs)


async def insert(conn: Any, context: ToolContext, item: str) -> None:
    conn.execute("INSERT INTO orders (run_id, item) VALUES (%s, %s)", (context.run_id, item))


def test_the_write_commits_with_the_result_not_when_the_block_ends(pg: PostgresStore) -> None:
    seen_inside: list[list[tuple[str, str]]] = []

    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
        seen_inside.append(orders(pg))  # after the block, before the result is stored: not committed yet
        return f"ordered {item}"

    agent = order_agent(pg, body)
    assert str(agent("buy", run_id="r1")) == "ordered"
    assert seen_inside == [[]]
    assert orders(pg) == [("r1", "apple")]
    stored = pg.load("r1")
    assert stored is not None and stored.messages[2]["content"][0]["toolResult"]["status"] == "success"  # type: ignore[typeddict-item]


def test_an_error_result_rolls_the_write_back(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
        raise RuntimeError("the warehouse said no")

    agent = order_agent(pg, body)
    agent("buy", run_id="r1")
    assert results(agent)[0]["status"] == "error"
    assert orders(pg) == []


def test_an_exception_leaving_a_later_block_undoes_that_block_only(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
        try:
            async with context.transaction() as conn:
                await insert(conn, context, "pear")
                raise ValueError("pears are out")
        except ValueError:
            pass
        async with context.transaction() as conn:
            await insert(conn, context, "plum")
        return "ordered"

    order_agent(pg, body)("buy", run_id="r1")
    assert orders(pg) == [("r1", "apple"), ("r1", "plum")]


def test_an_exception_leaving_the_first_block_rolls_it_back_and_a_new_block_starts_afresh(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        try:
            async with context.transaction() as conn:
                await insert(conn, context, item)
                conn.execute("SELECT 1/0")
        except psycopg.errors.DivisionByZero:
            pass
        async with context.transaction() as conn:
            await insert(conn, context, "plum")
        return "ordered"

    order_agent(pg, body)("buy", run_id="r1")
    assert orders(pg) == [("r1", "plum")]


def test_the_tool_cannot_commit_early(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
            conn.commit()
        return "ordered"

    agent = order_agent(pg, body)
    agent("buy", run_id="r1")
    assert "commit" in results(agent)[0]["content"][0]["text"].lower()
    assert orders(pg) == []


def test_parallel_calls_take_turns(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
        return f"ordered {item}"

    uses = [tool_call("place_order", {"item": i}, tool_use_id=f"o-{i}")["content"][0] for i in ("apple", "fig", "kiwi")]
    script = [{"role": "assistant", "content": uses}, "ordered"]
    agent = order_agent(pg, body, script, tool_executor=ConcurrentToolExecutor())
    agent("buy three", run_id="r1")
    assert [r["status"] for r in results(agent)] == ["success"] * 3
    assert orders(pg) == [("r1", "apple"), ("r1", "fig"), ("r1", "kiwi")]


def test_a_synchronous_tool_uses_with(pg: PostgresStore) -> None:
    @tool(transactional=True)
    def place_order(item: str, context: ToolContext) -> str:
        """Place an order (synchronous: runs in a worker thread)."""
        with context.transaction() as conn:
            conn.execute("INSERT INTO orders (run_id, item) VALUES (%s, %s)", (context.run_id, item))
        return "ordered"

    model = ScriptedModel([tool_call("place_order", {"item": "apple"}, tool_use_id="o1"), "done"])
    Agent(model=model, tools=[place_order], store=pg)("buy", run_id="r1")
    assert orders(pg) == [("r1", "apple")]


def test_the_tools_sql_keeps_the_servers_planning(pg: PostgresStore) -> None:
    """The store plans its own statements once per pooled connection (generic plans); a tool's
    transaction runs the application's SQL with the server's default planning."""
    seen: list[str] = []

    @tool(transactional=True)
    def place_order(item: str, context: ToolContext) -> str:
        """Place an order, noting how the tool's connection plans."""
        with context.transaction() as conn:
            seen.append(str(conn.execute("SHOW plan_cache_mode").fetchone()[0]))  # type: ignore[index]
            conn.execute("INSERT INTO orders (run_id, item) VALUES (%s, %s)", (context.run_id, item))
        return "ordered"

    model = ScriptedModel([tool_call("place_order", {"item": "apple"}, tool_use_id="o1"), "done"])
    Agent(model=model, tools=[place_order], store=pg)("buy", run_id="r1")
    with pg._connection("r1") as conn:
        store_mode = conn.execute("SHOW plan_cache_mode").fetchone()[0]
    assert (seen, store_mode) == (["auto"], "force_generic_plan")


def test_with_on_the_event_loop_is_refused(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        with context.transaction():
            pass
        return "no"

    agent = order_agent(pg, body)
    agent("buy", run_id="r1")
    assert "async with context.transaction()" in results(agent)[0]["content"][0]["text"]


def test_an_interrupt_in_the_block_rolls_back_and_the_answered_call_writes_once(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
            answer = context.interrupt("approve", {"item": item})
        return f"ordered {item} ({answer})"

    agent = order_agent(pg, body)
    first = agent("buy", run_id="r1")
    assert first.stop_reason == "interrupt" and orders(pg) == []
    final = order_agent(pg, body).resume("r1", [{"interruptResponse": {"interruptId": first.interrupts[0].id, "response": "yes"}}])
    assert str(final) == "ordered"
    assert orders(pg) == [("r1", "apple")]


def test_a_writer_that_lost_its_lease_commits_no_effect(pg: PostgresStore) -> None:
    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
        pg.break_lease("r1")  # another owner takes the run over while the tool runs
        return "ordered"

    with pytest.raises(LeaseLostError):
        order_agent(pg, body)("buy", run_id="r1")
    assert orders(pg) == []


def test_an_in_doubt_transactional_call_runs_again_without_reconcile(pg: PostgresStore) -> None:
    crash = [True]

    async def body(item: str, context: ToolContext) -> str:
        async with context.transaction() as conn:
            await insert(conn, context, item)
        if crash and crash.pop():
            raise Crash("the process dies before the result is stored")
        return f"ordered {item}"

    with pytest.raises(Crash):
        order_agent(pg, body)("buy", run_id="r1")
    assert orders(pg) == []  # its write died with it
    resumed = order_agent(pg, body).resume("r1")  # idempotent=False, no reconcile: still no in-doubt interrupt
    assert str(resumed) == "ordered"
    assert orders(pg) == [("r1", "apple")]
    (step,) = [s for s in pg.history("r1") if s.position == "resumed"]
    assert step.in_doubt[0]["action"] == "rerun"


@pytest.mark.parametrize("kind", ["sqlite", "memory", "not durable"])
def test_other_stores_refuse_with_a_clear_error(kind: str, tmp_path: Path) -> None:
    async def body(item: str, context: ToolContext) -> str:
        try:
            async with context.transaction():
                pass
        except TransactionUnavailableError as exc:
            return str(exc)
        return "no error"

    store = SQLiteStore(tmp_path / "runs.db") if kind == "sqlite" else MemoryStore()
    agent = order_agent(store, body)
    if kind == "not durable":
        agent("buy")
        assert "no durable run on a PostgreSQL store" in results(agent)[0]["content"][0]["text"]
        return
    agent("buy", run_id="r1")
    text = results(agent)[0]["content"][0]["text"]
    assert "run 'r1'" in text and "PostgresStore" in text and ("runs.db" in text if kind == "sqlite" else True)
