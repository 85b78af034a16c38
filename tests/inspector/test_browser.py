"""The page in a real headless Chromium (Debian's, driven by Playwright's Python API).

Screenshots go to ``$TETHER_TEST_ARTIFACTS/inspect/`` (default: ``tether-test-artifacts/inspect/``
in the temporary directory, so a test run leaves nothing in the working tree); the path is printed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.inspect import render_html

from .browser import chromium
from .runs import ANSWER, ERROR, PROMPT

ARTIFACTS = Path(os.environ.get("TETHER_TEST_ARTIFACTS") or Path(tempfile.gettempdir()) / "tether-test-artifacts") / "inspect"


class Page:
    """A page opened from a file, with every request and console error recorded."""

    def __init__(self, context: Any, path: Path) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = context.new_page()
        self.page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.route("**/*", self._route)
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector(".row")

    def _route(self, route: Any) -> None:
        self.requests.append(route.request.url)
        if route.request.url.split("#")[0] == self.url:
            route.continue_()
        else:
            route.abort()

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=False)
        print(f"screenshot: {path}")
        return path

    def text(self, selector: str) -> str:
        return str(self.page.inner_text(selector))


@pytest.fixture
def page_file(store: SQLiteStore, tmp_path: Path) -> Path:
    path = tmp_path / "r1.html"
    path.write_text(render_html(store, "r1"), encoding="utf-8")
    return path


@pytest.fixture(params=["light", "dark"])
def opened(request: pytest.FixtureRequest, page_file: Path) -> Iterator[Page]:
    with chromium(request.param) as context:
        page = Page(context, page_file)
        yield page
        page.shot(f"r1-{request.param}-{request.node.originalname}")
        others = [url for url in page.requests if url.split("#")[0] != page.url]
        assert page.requests and others == [], "the page must make no request besides loading itself"
        assert page.errors == [], page.errors


def test_renders_prompt_tools_error_and_answer(opened: Page, store: SQLiteStore) -> None:
    conversation = opened.text("#conversation")
    assert PROMPT in conversation
    assert ERROR in conversation
    assert ANSWER in conversation
    timeline = opened.text("#timeline")
    for name in ("lookup", "refund", "approve"):
        assert name in timeline and name in conversation
    assert "error" in timeline and "interrupted" in timeline and "resumed after interrupted" in timeline
    assert len(opened.page.query_selector_all(".row")) == len(store.history("r1"))


def test_clicking_a_step_shows_its_state_and_diff(opened: Page) -> None:
    opened.page.click("button[data-tab='step']")
    interrupted = opened.page.query_selector(".row:has(.badge.doubt)")
    assert interrupted is not None
    resumed_step = int(interrupted.get_attribute("data-step") or 0) + 1
    opened.page.click(f".row[data-step='{resumed_step}']")
    diff = opened.text("#state-diff")
    assert '+ state.approved: "yes"' in diff
    assert "- interrupt_state.activated: true" in diff
    assert '"approved": "yes"' in opened.text(".state-state")
    assert f"tether fork r1 --at {resumed_step}" in opened.text("#tab-step")
    opened.page.click(".row[data-step='1']")
    assert '"approved"' not in opened.text(".state-state")  # the state as it was then
    assert "customer" in opened.text("#state-diff")
    opened.page.click("button[data-tab='conversation']")
    assert PROMPT in opened.text("#conversation") and ANSWER not in opened.text("#conversation")  # messages so far


def test_keyboard_moves_between_steps(opened: Page, store: SQLiteStore) -> None:
    last = len(store.history("r1"))
    selected = lambda: opened.page.get_attribute(".row.selected", "data-step")  # noqa: E731
    assert selected() == str(last)
    opened.page.keyboard.press("Home")
    assert selected() == "1"
    opened.page.keyboard.press("ArrowDown")
    opened.page.keyboard.press("j")
    assert selected() == "3"
    opened.page.keyboard.press("k")
    assert selected() == "2"
    opened.page.keyboard.press("End")
    assert selected() == str(last)


def test_search_size_usage_and_related_tabs(opened: Page) -> None:
    opened.page.fill("#search", "gateway")
    assert "1 of 6 messages match" in opened.text("#search-count")
    assert ERROR in opened.text("#conversation") and PROMPT not in opened.text("#conversation")
    opened.page.click("button[data-tab='size']")
    assert "messages" in opened.text("#size-fields") and "interrupt_state" in opened.text("#size-fields")
    opened.page.click("button[data-tab='usage']")
    assert "33 input tokens" in opened.text("#tab-usage")
    assert opened.page.query_selector("#tab-usage svg rect") is not None
    opened.page.click("button[data-tab='related']")
    assert "r1.child" in opened.text("#tab-related") and "r1.fork" in opened.text("#tab-related")
    opened.page.click("#tab-related a.runlink")
    assert opened.text("#run-title") == "r1.child"


def test_no_script_runs_from_stored_text(opened: Page) -> None:
    # the prompt and the error hold <script>alert(...)</script>: shown as text, never run or parsed as markup
    dialogs: list[str] = []
    opened.page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    opened.page.reload()
    opened.page.wait_for_selector(".row")
    assert dialogs == []
    assert opened.page.evaluate("document.querySelectorAll('script').length") == 2
    assert "<script>" in opened.text("#conversation")


# A 1x1 PNG (red pixel).
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc0000003010100c9fe92ef0000000049454e44ae426082"
)


FINAL = {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "I pinged them all"}}}, {"text": "all pinged"}]}


def test_images_show_and_a_thousand_tool_calls_keep_the_layout(tmp_path: Path) -> None:
    from tether import Agent, tool
    from tether.models import ScriptedModel
    from tether.models.scripted import tool_calls

    @tool
    def ping(n: int) -> str:
        """Answer a ping."""
        return f"pong {n} " + "x" * 300  # long enough to wrap

    store = SQLiteStore(tmp_path / "big.db")
    script = [tool_calls([("ping", {"n": 10 * c + i}) for i in range(10)]) for c in range(100)] + [FINAL]
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[ping], store=store)
    agent([{"text": "ping a thousand times, see the picture"}, {"image": {"format": "png", "source": {"bytes": PNG}}}], run_id="big")
    path = tmp_path / "big.html"
    path.write_text(render_html(store, "big"), encoding="utf-8")
    store.close()
    with chromium() as context:
        page = Page(context, path)
        page.page.keyboard.press("Home")
        image = page.page.wait_for_selector("img.shown")
        assert image is not None and image.evaluate("i => i.complete && i.naturalWidth") == 1
        assert page.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # nothing overflows sideways
        assert "ping \u00d710" in page.text(".row[data-step='3']") and "10 ok" in page.text(".row[data-step='3']")
        page.page.keyboard.press("End")
        assert page.page.evaluate("document.querySelectorAll('.row').length") < 60  # virtualised timeline
        assert page.page.evaluate("document.querySelectorAll('.msg').length") == 60  # paged conversation
        page.page.click("button.more")
        assert page.page.evaluate("document.querySelectorAll('.msg').length") == 120
        assert "all pinged" in page.text("#conversation")
        reasoning = page.page.query_selector("#conversation details:has(summary:text-is('reasoning'))")
        assert reasoning is not None and reasoning.get_attribute("open") is None  # collapsed
        assert not page.page.is_visible("text=I pinged them all")
        reasoning.query_selector("summary").click()  # type: ignore[union-attr]
        assert page.page.is_visible("text=I pinged them all")
        assert page.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.shot("big-1000-tool-calls")
        others = [url for url in page.requests if url.split("#")[0] != page.url]
        assert others == [] and page.errors == []


def test_a_crash_with_a_call_in_doubt_shows_the_boundary_and_the_rerun(tmp_path: Path) -> None:
    from tests.durable.helpers import Crash, Plan, make_agent

    store = SQLiteStore(tmp_path / "d.db")
    plan = Plan(tool_after_effect=0)
    with pytest.raises(Crash):
        make_agent(store, plan)("go", run_id="d")  # the process "dies" after the tool's effect, before its result is stored
    make_agent(store, plan).resume("d")
    path = tmp_path / "d.html"
    path.write_text(render_html(store, "d"), encoding="utf-8")
    resumed = next(s for s in store.history("d") if s.position == "resumed")
    store.close()
    with chromium() as context:
        page = Page(context, path)
        selector = f".row[data-step='{resumed.step}']"
        assert page.page.get_attribute(selector, "class") == "row boundary"
        assert page.page.get_attribute(selector, "title") == "process boundary: resumed (in-doubt tool calls)"
        assert "in doubt: work \u2192 rerun" in page.text(selector)
        assert "in doubt, re-run" in page.text("#timeline")  # the re-run call, in the step that stored its result
        page.shot("d-crash-in-doubt")
        assert page.errors == [] and [u for u in page.requests if u.split("#")[0] != page.url] == []


def test_a_served_page_of_a_live_run_reloads_itself_and_keeps_the_step(store: SQLiteStore, tmp_path: Path) -> None:
    from tether.inspect.html import render_payload
    from tether.inspect.payload import build_payload

    payload = build_payload(store, "r1", live=True)
    payload["runs"]["r1"]["summary"]["status"] = "running"  # as a page served while the run's owner works
    path = tmp_path / "live.html"
    path.write_text(render_payload(payload, title="live"), encoding="utf-8")
    with chromium() as context:
        page = Page(context, path)
        page.page.click(".row[data-step='3']")
        with page.page.expect_event("load", timeout=15_000):
            pass  # the page reloads itself (every two seconds while the run is running)
        page.page.wait_for_selector(".row.selected[data-step='3']")
        assert page.errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_graph_run_shows_its_nodes_edges_and_executions_linked_to_their_runs(tmp_path: Path, scheme: str) -> None:
    from .runs import GRAPH_TASK, build_graph

    store = SQLiteStore(tmp_path / "g.db")
    build_graph(store)
    path = tmp_path / "g.html"
    path.write_text(render_html(store, "g"), encoding="utf-8")
    store.close()
    with chromium(scheme) as context:
        page = Page(context, path)
        p = page.page
        # a graph run opens on its graph, not on a conversation
        assert p.is_visible("button[data-tab='graph']") and p.get_attribute("button[data-tab='graph']", "aria-selected") == "true"
        assert p.is_visible("#tab-graph") and not p.is_visible("#tab-conversation")
        assert GRAPH_TASK in page.text("#tab-graph")  # stored text shown as text
        assert p.evaluate("document.querySelectorAll('#tab-graph b').length") == 0
        # the nodes, drawn
        for node in ("check", "write", "notify"):
            box = p.locator(f".graph-svg g.node[data-node='{node}']")
            assert box.is_visible() and node in (box.text_content() or "")
        lengths = p.evaluate("[...document.querySelectorAll('.graph-svg path.edge')].map(e => e.getTotalLength())")
        assert len(lengths) == 2 and min(lengths) > 40  # drawn between the boxes (a straight one has no height to be "visible")
        assert p.locator(".graph-svg path.edge.conditional").count() == 1
        # the edges, listed
        assert page.text("#graph-edges").splitlines() == ["check → write", "check → notify (conditional)"]
        # each execution, linked to its run (the callable has none)
        rows = page.text("#graph-executions")
        assert "check" in rows and "write" in rows and "notify" in rows and "no run (callable node)" in rows
        assert p.is_visible("#graph-executions a.runlink:text-is('g.check:1')")
        assert p.is_visible("#graph-executions a.runlink:text-is('g.write:1')")
        page.shot(f"graph-{scheme}")
        # the link opens the node's own run, an agent run with its conversation
        p.click("#graph-executions a.runlink:text-is('g.check:1')")
        assert page.text("#run-title") == "g.check:1"
        assert not p.is_visible("button[data-tab='graph']") and p.is_visible("#tab-conversation")
        assert "checked" in page.text("#conversation")
        # back to the graph (its parent link), then a click on a node box opens that node's run
        p.click("#summary a.runlink:text-is('g')")
        assert page.text("#run-title") == "g" and p.is_visible("#tab-graph")
        p.click(".graph-svg g.node[data-node='write']")
        assert page.text("#run-title") == "g.write:1" and "written" in page.text("#conversation")
        # the graph run's conversation tab says what it is; no internal rows
        p.click("#summary a.runlink:text-is('g')")
        p.click("button[data-tab='conversation']")
        assert "has no conversation" in page.text("#conversation") and "graph_node" not in page.text("#conversation")
        others = [url for url in page.requests if url.split("#")[0] != page.url]
        assert others == [] and page.errors == [], page.errors


def test_a_compensated_run_shows_its_unwinding(tmp_path: Path) -> None:
    from tests.durable.compensation_worker import load_example

    example = load_example()
    store = SQLiteStore(tmp_path / "c.db")
    agent = example.build_agent(tmp_path, store, failing_refund=True)
    with pytest.raises(RuntimeError):
        agent("book", run_id=example.RUN_ID)
    agent.close()
    path = tmp_path / "c.html"
    path.write_text(render_html(store, example.RUN_ID), encoding="utf-8")
    steps = {s.position: s.step for s in store.history(example.RUN_ID)}
    undos = [s.step for s in store.history(example.RUN_ID) if s.position == "undo"]
    store.close()
    with chromium() as context:
        page = Page(context, path)
        unwind = f".row[data-step='{steps['unwind']}']"
        assert page.page.get_attribute(unwind, "title") == "process boundary: compensating (failed)"
        assert "undo charge_card failed: RuntimeError: the card network refused" in page.text(f".row[data-step='{undos[0]}']")
        assert "undo book_flight undone" in page.text(f".row[data-step='{undos[2]}']")
        assert "compensation_failed" in page.text(f".row[data-step='{steps['unwound']}']")
        page.shot("c-compensated")
        assert page.errors == []
