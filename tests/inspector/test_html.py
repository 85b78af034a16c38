"""The page's payload and HTML, without a browser: linear data, safe embedding, sizes as `tether size` counts."""

from __future__ import annotations

import json
import re

from tether.cli.runs import snapshot_of
from tether.durable import SQLiteStore
from tether.inspect import RunView, build_payload, render_html
from tether.inspect.html import embed_json

from .runs import ERROR, PROMPT


def data_of(page: str) -> dict:  # type: ignore[type-arg]
    match = re.search(r'<script type="application/json" id="tether-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))  # type: ignore[no-any-return]


def test_embedded_json_cannot_end_the_script_element() -> None:
    value = {"text": "</script><script>alert(1)</script><!-- & \u2028"}
    text = embed_json(value)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == value


def test_page_embeds_the_run_and_nothing_else_escapes(store: SQLiteStore) -> None:
    page = render_html(store, "r1")
    assert page.count("</script>") == 2  # the data element's and the script's own; none from stored text
    assert "<script>alert" not in page
    data = data_of(page)
    assert data["root"] == "r1" and set(data["runs"]) == {"r1", "r1.child", "r1.fork"}
    run = data["runs"]["r1"]
    assert run["messages"][0]["message"]["content"][0]["text"] == PROMPT
    assert ERROR in json.dumps(run["messages"], ensure_ascii=False)
    assert run["children"] == ["r1.child"] and run["forks"] == [{"run_id": "r1.fork", "step": 3}]
    assert data["runs"]["r1.child"]["summary"]["parent_run_id"] == "r1"


def test_page_references_nothing_outside_itself(store: SQLiteStore) -> None:
    page = render_html(store, "r1")
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page, re.I)
    assert not re.search(r"@import|url\(", page)
    assert "fetch(" not in page and "XMLHttpRequest" not in page


def test_steps_carry_timeline_fork_command_and_only_changed_state(store: SQLiteStore) -> None:
    steps = build_payload(store, "r1", store_flags=["--store", "/x/runs.db"])["runs"]["r1"]["steps"]
    history = store.history("r1")
    assert [s["step"] for s in steps] == [s.step for s in history]
    assert steps[0]["changed"]["state"] == {"customer": "ann"}
    assert steps[2]["tools"][1]["name"] == "refund" and steps[2]["tools"][1]["error"] is True
    interrupted = next(s for s in steps if s["status"] == "interrupted")
    assert interrupted["changed"]["interrupt_state"]["activated"] is True
    resumed = steps[steps.index(interrupted) + 1]
    assert resumed["boundary"] == "resumed after interrupted"
    assert resumed["changed"]["state"] == {"customer": "ann", "approved": "yes"}
    assert [s["boundary"] for s in steps].count(None) == len(steps) - 1
    for s, h in zip(steps, history, strict=True):
        assert s["fork_command"] == f"tether fork r1 --at {h.step} --store /x/runs.db"
        assert set(s["changed"]) <= {"state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state"}
    assert "state" not in steps[1]["changed"]  # unchanged fields are inherited, not repeated


def test_sizes_match_tether_size_at_the_last_step(store: SQLiteStore) -> None:
    run = build_payload(store, "r1")["runs"]["r1"]
    report = snapshot_of(store, "r1").size_report()
    messages = 2 + sum(m["bytes"] for m in run["messages"]) + len(run["messages"]) - 1
    assert messages == report["fields"]["messages"]
    current: dict[str, int] = {}
    for step in run["steps"]:
        current.update(step["sizes"])
    for name in ("state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state"):
        assert current[name] == report["fields"][name], name


def test_fork_payload_starts_with_its_forked_step(store: SQLiteStore) -> None:
    fork = build_payload(store, "r1.fork")["runs"]["r1.fork"]
    assert fork["steps"][0]["position"] == "forked" and fork["steps"][0]["boundary"] == "forked"
    assert fork["steps"][0]["forked_from"] == {"run_id": "r1", "step": 3}


def test_run_view_shows_inline_in_a_sandboxed_frame(store: SQLiteStore, tmp_path) -> None:  # type: ignore[no-untyped-def]
    view = RunView(store, "r1")
    html = view._repr_html_()
    assert html.startswith('<iframe sandbox="allow-scripts"') and "srcdoc=" in html
    assert "<script>alert" not in html and "</script>" not in html.split("srcdoc=", 1)[1].split('"', 2)[1]
    path = view.save(tmp_path / "r1.html")
    assert data_of(path.read_text(encoding="utf-8"))["root"] == "r1"


def test_messages_a_conversation_manager_dropped_are_still_shown_at_their_steps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tether import Agent
    from tether.conversation import SlidingWindowConversationManager
    from tether.models import ScriptedModel

    store = SQLiteStore(tmp_path / "w.db")
    agent = Agent(
        model=ScriptedModel([f"answer {i}" for i in range(6)], stateful=True),
        store=store,
        conversation_manager=SlidingWindowConversationManager(window_size=4),
    )
    for i in range(6):
        agent(f"question {i}", run_id="w")
    run = build_payload(store, "w")["runs"]["w"]
    store.close()
    seqs = [m["seq"] for m in run["messages"]]
    assert seqs == list(range(12))  # every message once, the dropped ones included
    texts = [m["message"]["content"][0]["text"] for m in run["messages"]]
    assert texts[0] == "question 0" and texts[-1] == "answer 5"
    last = run["steps"][-1]
    assert last["start_seq"] > 0  # the window moved: the current head no longer holds question 0
    first_turn_end = next(s for s in run["steps"] if s["position"] == "turn_end")
    assert (first_turn_end["start_seq"], first_turn_end["next_seq"]) == (0, 2)


def test_a_graph_run_payload_has_its_graph_and_no_conversation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from .runs import build_graph

    store = SQLiteStore(tmp_path / "g.db")
    build_graph(store)
    payload = build_payload(store, "g")
    run = payload["runs"]["g"]
    assert run["messages"] == []
    graph = run["graph"]
    assert graph["kind"] == "graph" and graph["status"] == "completed"
    assert [n["id"] for n in graph["nodes"]] == ["check", "write", "notify"]
    assert [(e["source"], e["target"], e["kind"]) for e in graph["edges"]] == [
        ("check", "write", "edge"),
        ("check", "notify", "conditional"),
    ]
    # in the order they started; write and notify ran in parallel and may complete in either order
    assert [(e["node"], e["run_id"]) for e in graph["log"]] == [("check", "g.check:1"), ("write", "g.write:1"), ("notify", None)]
    assert graph["log"][0]["done"] == 1 and sorted(e["done"] for e in graph["log"]) == [1, 2, 3]
    assert sorted(run["children"]) == ["g.check:1", "g.write:1"] and "g.check:1" in payload["runs"]
    assert run["summary"]["cycles"] == 3 and run["summary"]["usage"]["total_tokens"] == 45
    assert payload["runs"]["g.check:1"]["graph"] is None  # a node's own run is an agent run


async def test_a_step_after_a_stopped_turn_is_a_resume(tmp_path: object) -> None:
    """A turn stopped by Ctrl-C or cancellation is stored as ``stopped``; the step that continues
    it is marked as a resume, as after an interrupt."""
    import asyncio
    from pathlib import Path

    from tether import Agent, BeforeModelCall, ScriptedModel

    calls: list[int] = []
    waiting = asyncio.Event()

    async def hold_the_second_call(event: BeforeModelCall) -> None:
        calls.append(1)
        if len(calls) == 2:  # the second model call of the first process: stopped here
            waiting.set()
            await asyncio.Event().wait()

    store = SQLiteStore(Path(str(tmp_path)) / "runs.db")
    agent = Agent(model=ScriptedModel(["first", "second"], stateful=True), store=store)
    agent.hooks.add_callback(BeforeModelCall, hold_the_second_call)
    await agent.invoke_async("one", run_id="s1")
    task = asyncio.ensure_future(agent.invoke_async("two", run_id="s1"))
    await waiting.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert store.head("s1")["status"] == "stopped"  # type: ignore[index]
    await agent.resume_async("s1")
    steps = build_payload(store, "s1")["runs"]["s1"]["steps"]
    stopped = next(i for i, s in enumerate(steps) if s["status"] == "stopped")
    assert steps[stopped + 1]["boundary"] == "resumed after stopped"
