"""The chat page (``GET /``) and a run's inspector page (``GET /runs/{id}/view``).

In process: the routes, their Content-Security-Policy (inline scripts allowed by hash only, and
the hashes match the scripts served), the token rule (the page is public, nothing else).

In Debian's Chromium (Playwright; tests/inspector/browser.py) against a real ``tether serve``
process: the page streams a run, an interrupt is answered by clicking, the server is SIGKILLed
inside a tool and started again on the same port and store, and the page finishes the run
without a reload, each committed event rendered once. Screenshots go to ``$TETHER_TEST_ARTIFACTS``
(else the test's tmp_path); their paths are printed.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

import httpx
from starlette.testclient import TestClient

from tests.inspector.browser import chromium
from tether.durable import SQLiteStore
from tether.inspect.html import script_hash
from tether.serve import create_app
from tether.serve.page import chat_csp, view_csp

from . import registry_module
from .conftest import ServerProcess, read_sse
from .test_restart import wait_for

BASE = "http://127.0.0.1:8000"
TOKEN = "s3cret-token"


def shot(page: Any, folder: Path, name: str) -> None:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")


def inline_scripts(html: str) -> list[str]:
    """The text of every executable inline script of ``html`` (JSON data blocks are not run)."""
    return [body for attrs, body in re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S) if "application/json" not in attrs]


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def directives(csp: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (part.split() for part in csp.split(";") if part.strip())}


# -- in process ----------------------------------------------------------------------------------


def test_the_page_is_self_contained_and_its_policy_runs_only_its_hashed_script(store: SQLiteStore) -> None:
    with TestClient(create_app(registry_module.AGENTS, store), base_url=BASE) as client:
        response = client.get("/")
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
        page = response.text
        policy = directives(response.headers["content-security-policy"])
        assert response.headers["content-security-policy"] == chat_csp()
        assert response.headers["x-content-type-options"] == "nosniff"
        assert client.get("/agents").json() == {"agents": sorted(registry_module.AGENTS)}
    (script,) = inline_scripts(page)
    assert policy["default-src"] == ["'none'"] and policy["connect-src"] == ["'self'"] and policy["frame-ancestors"] == ["'none'"]
    assert policy["script-src"] == [sha256_source(script), script_hash()]  # its own script, and the inspector's (its frame)
    assert "'unsafe-inline'" not in policy["script-src"] and "'unsafe-eval'" not in policy["script-src"]
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing loaded from elsewhere
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "document.write" not in script


def test_a_runs_inspector_page_is_served_with_its_script_allowed_by_hash(store: SQLiteStore) -> None:
    with TestClient(create_app(registry_module.AGENTS, store), base_url=BASE) as client:
        started = client.post("/agents/chat/runs", json={"prompt": "</script><b>hi</b>"})
        run_id = started.json()["run_id"]
        response = client.get(f"/runs/{run_id}/view")
        assert response.status_code == 200, response.text
        assert response.headers["content-security-policy"] == view_csp()
        assert response.headers["cache-control"] == "no-store"
        (script,) = inline_scripts(response.text)
        assert directives(view_csp())["script-src"] == [sha256_source(script)]
        assert directives(view_csp())["connect-src"] == ["'none'"]
        assert run_id in response.text and "</script><b>hi</b>" not in response.text  # the prompt is escaped in the data
        assert client.get("/runs/nope/view").json()["error"] == {"status": 404, "message": "no run 'nope'"}
        assert client.get("/runs/a%20b/view").status_code == 400


def test_with_a_token_only_the_page_itself_is_served_without_it(store: SQLiteStore) -> None:
    with TestClient(create_app(registry_module.AGENTS, store, token=TOKEN), base_url=BASE) as client:
        assert client.get("/").status_code == 200
        assert client.head("/").status_code == 200
        assert client.post("/").status_code == 401  # public for reading only
        for path in ["/agents", "/runs/x/view", "/index.html", "/openapi.json"]:
            assert client.get(path).status_code == 401, path
        assert client.get("/agents", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    with TestClient(create_app(registry_module.AGENTS, store, token=TOKEN), base_url="http://attacker.example") as client:
        assert client.get("/").status_code == 421  # the Host check still applies


# -- in Chromium, against a real server process -------------------------------------------------


NETWORK = re.compile(r"Failed to load resource: net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|INCOMPLETE_CHUNKED_ENCODING|EMPTY_RESPONSE)")
"""What Chromium logs itself while the server is down (the page handles these by reconnecting)."""


def watch(page: Any, expected: re.Pattern[str] = NETWORK) -> list[str]:
    """Collect the page's script errors and console errors (a CSP violation is one), but those
    ``expected`` (Chromium logs a failed request itself, even one the page handles)."""
    problems: list[str] = []

    def console(message: Any) -> None:
        if message.type == "error" and not expected.match(message.text):
            problems.append(f"console: {message.text}")

    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on("console", console)
    return problems


def send_prompt(page: Any, url: str, agent: str, prompt: str) -> None:
    """Open the chat page of the server at ``url``, pick ``agent`` and send ``prompt``."""
    page.goto(url + "/")
    page.select_option("#agent", agent)
    page.fill("#prompt", prompt)
    page.click("#send")


def committed_ids(url: str, run_id: str, **headers: str) -> list[str]:
    with httpx.stream("GET", f"{url}/runs/{run_id}/events", headers=headers, timeout=20) as response:
        return [event["id"] for event in read_sse(response) if "id" in event]


def test_the_page_answers_an_interrupt_and_finishes_the_run_across_a_server_restart(server: ServerProcess, artifacts: Path) -> None:
    server.start()
    with chromium() as context:
        page = context.new_page()
        page.set_default_timeout(20_000)
        problems = watch(page)
        page.goto(server.url + "/")
        page.evaluate("window.__sameDocument = true")
        page.select_option("#agent", "deployer")
        page.fill("#prompt", "ship <i>it</i>")
        page.click("#send")

        approve = page.locator('.interrupt button[data-answer="yes"]')
        approve.wait_for()
        page.locator('#conn[data-state="closed"]').wait_for()  # the run rests: its stream ended
        assert page.locator("#run-status").text_content() == "interrupted"
        assert page.locator(".interrupt .reason").text_content() == '{\n  "what": "release v2"\n}'
        shot(page, artifacts, "1-interrupt")
        approve.click()

        page.locator('.tool[data-tool-use-id="t-slow"] .input').wait_for()  # the next reply's tool call, committed
        wait_for(server.gate / "entered-slow")
        run_id = page.locator("#run-id").text_content()
        assert run_id
        before = page.eval_on_selector_all("#log-list li", "items => items.map(item => item.dataset.id)")
        assert page.locator('#conn[data-state="live"]').count() == 1
        shot(page, artifacts, "2-inside-the-tool")

        server.kill()  # inside the tool
        page.locator('#conn[data-state="reconnecting"]').wait_for()
        shot(page, artifacts, "3-reconnecting")
        (server.gate / "release").write_text("")
        server.start()  # the same port and store: it resumes the run, the page reconnects with its last id

        answer = page.locator(".msg.assistant:not(.live) .text")
        page.locator('#conn[data-state="closed"]').wait_for()
        assert page.locator("#run-status").text_content() == "finished"
        shot(page, artifacts, "4-finished")
        assert page.evaluate("window.__sameDocument") is True  # no reload

        shown = page.eval_on_selector_all("#log-list li", "items => items.map(item => item.dataset.id)")
        assert shown[: len(before)] == before
        assert shown == committed_ids(server.url, run_id)  # every committed event once, in order: no gap, no duplicate
        assert answer.all_text_contents()[-1] == registry_module.RELEASED  # markup shown as text
        assert page.locator("#conversation img, #conversation b").count() == 0 and page.title() == "tether serve"
        seqs = page.eval_on_selector_all(".msg[data-seq]", "items => items.map(item => Number(item.dataset.seq))")
        assert seqs == sorted(set(seqs))  # each committed message once
        assert page.locator(".msg.user .text").all_text_contents() == ["ship <i>it</i>"]
        assert answer.all_text_contents() == ["calling approve", "calling slow", registry_module.RELEASED]
        assert page.locator(".msg.live").count() == 0
        assert page.locator('.tool[data-tool-use-id="t-approve"] .result').text_content() == "approved: yes"
        assert page.locator('.tool[data-tool-use-id="t-slow"] .result').all_text_contents() == ["slow done"]
        assert page.locator(".tool").count() == 2
        assert "slow started before its server stopped" in (page.locator(".note.in-doubt").text_content() or "")
        assert page.locator(".interrupt").get_attribute("data-answered") == "true"
        assert page.locator(".interrupt button:enabled").count() == 0
        assert (server.gate / "calls.log").read_text().split("\n").count(f"slow {run_id}/t-slow") == 2  # the in-doubt re-run
        assert problems == []


def test_with_a_token_the_page_asks_for_it_sends_it_and_opens_the_inspector(server: ServerProcess, artifacts: Path) -> None:
    server.start("--token", TOKEN)
    assert httpx.get(server.url + "/", timeout=5).status_code == 200
    assert httpx.get(server.url + "/agents", timeout=5).status_code == 401
    with chromium() as context:
        page = context.new_page()
        page.set_default_timeout(20_000)
        problems = watch(page, re.compile(r"Failed to load resource: the server responded with a status of 401"))  # /agents, once
        page.goto(server.url + "/")
        page.locator("#token-form").wait_for()
        page.fill("#token", TOKEN)
        page.click("#token-form button")
        page.select_option("#agent", "chat")
        page.fill("#prompt", "hi")
        page.click("#send")
        page.locator(".msg.assistant .text", has_text="hello there").wait_for()
        page.locator('#conn[data-state="closed"]').wait_for()
        page.fill("#prompt", "more")  # a new turn of the same run
        page.click("#send")
        page.locator(".msg.assistant .text", has_text="again").wait_for()
        page.locator('#conn[data-state="closed"]').wait_for()
        run_id = page.locator("#run-id").text_content()
        assert page.locator(".msg .text").all_text_contents() == ["hi", "hello there", "more", "again"]
        assert page.locator("#view-link").is_hidden()  # a new tab could not send the token

        page.click("#inspect")
        frame = page.frame_locator("#inspector-frame")
        frame.locator("#run-title").wait_for()
        assert run_id and run_id in (frame.locator("#run-title").text_content() or "")
        frame.locator("#conversation", has_text="again").wait_for()
        shot(page, artifacts, "inspector")
        assert page.evaluate("sessionStorage.getItem('tether-serve-token')") == TOKEN
        assert problems == []


def test_an_in_doubt_call_is_answered_with_the_form_after_a_restart(server: ServerProcess, artifacts: Path) -> None:
    server.start()
    with chromium() as context:
        page = context.new_page()
        page.set_default_timeout(20_000)
        problems = watch(page)
        send_prompt(page, server.url, "payer", "charge 5")
        page.locator('.tool[data-tool-use-id="t-charge"] .input').wait_for()
        wait_for(server.gate / "entered-charge")
        server.kill()  # inside the non-idempotent tool: the next server does not run it again blindly
        (server.gate / "release").write_text("")
        server.start()

        card = page.locator('.interrupt[data-interrupt-id] >> text="In doubt: charge"').locator("..")
        card.locator("button", has_text="Run it again").wait_for()
        assert '"idempotency_key":' in (card.locator(".reason").text_content() or "")
        shot(page, artifacts, "in-doubt")
        card.locator("input").fill("already charged")
        card.locator("button", has_text="Record result").click()
        page.locator(".msg.assistant .text", has_text="charged").last.wait_for()
        page.locator('#conn[data-state="closed"]').wait_for()
        assert page.locator("#run-status").text_content() == "finished"
        assert page.locator('.tool[data-tool-use-id="t-charge"] .result').all_text_contents() == ["already charged"]
        assert page.locator(".msg.assistant .text").all_text_contents() == ["calling charge", "charged"]
        run_id = page.locator("#run-id").text_content()
        assert run_id and (server.gate / "calls.log").read_text().split("\n").count(f"charge {run_id}/t-charge") == 1  # never re-run
        assert page.eval_on_selector_all("#log-list li", "items => items.map(item => item.dataset.id)") == committed_ids(server.url, run_id)
        assert problems == []
