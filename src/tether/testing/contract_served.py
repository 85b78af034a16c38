"""The resume contract on served runs: ``resume_contract(..., runtime="serve")``.

The agent is served by real ``tether serve`` processes (two at once, on one store: the SQLite
file or the PostgreSQL database given), started with :mod:`tether.testing._served_registry`, and
driven only over HTTP, with the faults a served run meets:

- **prefix continuation** and **effect exactly-once**: a server is SIGKILLed inside each tool
  call of the run (it stops right after the call's start is logged); the other server takes the
  run over and finishes it. The run must end as the uninterrupted served run did, the steps stored
  before the kill must be kept, and each call must start once, twice only for the call the kill
  cut off (re-run in doubt with the same key);
- **consume-once**, for the two requests that start work: ``k`` processes send one ``POST
  /agents/agent/runs`` with one ``Idempotency-Key`` at the same instant, spread over both servers
  (one turn, one start of each tool, every racer told the same run, one not a replay); and, when
  the run asks a question, ``k`` processes answer its interrupt at the same instant without a key
  (one accepted, the others refused with 409, each effect once).

- **checkpoint validity** and **recovery determinism** over HTTP
  (:mod:`tether.testing.contract_served_store`): values no store can keep sent as requests are
  4xx JSON refusals that change nothing stored; copies of a store crashed inside a tool call,
  each taken over by a fresh server, end the same (SQLite).

- **fork determinism**: chosen steps of the served reference run are forked twice with ``POST
  /runs/{id}/fork``, one fork on each server; each goes on (retried, its questions answered) to its
  end, and the two ends must match (messages, state, status, the fork ids masked).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._diff import describe, first_difference
from ..durable.indoubt import IN_DOUBT
from ..errors import TetherError
from ._http import request
from ._procs import _begun, _Plan, _spread, _starts
from ._served_server import _Server
from .contract_report import CONSUME, EFFECT, FORK, HOLDS, NOT_APPLICABLE, PREFIX, RECOVERY, VALIDITY, VIOLATED, ContractReport
from .contract_runs import _comparable, _load
from .contract_served_store import Recoveries, validity

AGENT = "agent"


class ServedChecks:
    """The served phases of one contract check, sharing its plan and report."""

    def __init__(self, plan: _Plan, report: ContractReport, add: Callable[..., None]) -> None:
        self.plan, self.report, self.add = plan, report, add
        self.directory = plan.workdir / "served"
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(parents=True)
        self.store = plan.store if plan.postgres else str(self.directory / "store.db")
        self.log = self.directory / "starts.log"
        self.asked: list[str] = []
        self.reference: dict[str, Any] = {}
        self.calls = 0

    def run_id(self, slug: str) -> str:
        return f"contract-{self.plan.token}-{slug}"

    @contextmanager
    def servers(self) -> Iterator[tuple[_Server, _Server]]:
        first, second = _Server(self.plan, self.store, self.log, "a"), _Server(self.plan, self.store, self.log, "b")
        try:
            first.start()
            second.start()
            yield first, second
        finally:
            first.kill()
            second.kill()

    def check(self, wanted: list[str], k: int, points: int | str, recoveries: int, forks: int | str = "all") -> None:
        if forks != "all" and (isinstance(forks, bool) or not isinstance(forks, int) or forks < 1):
            raise TetherError(f"resume_contract forks={forks!r} must be 'all' or a positive int")
        with self.servers() as (first, second):
            self.reference = self.served_reference(first)
            if FORK in wanted:
                self.forks(first, second, forks)
            if VALIDITY in wanted:
                validity(self, first)
            if PREFIX in wanted or EFFECT in wanted or RECOVERY in wanted:
                self.crashes(first, second, points, recoveries if RECOVERY in wanted else 0)
            if CONSUME in wanted:
                self.request_once(first, second, k)
                self.answer_once(first, second, k)

    # -- driving a served run -----------------------------------------------------------

    def drive(self, servers: list[_Server], run_id: str, until: Callable[[], bool] | None = None) -> dict[str, Any]:
        """Poll the run (on whichever server answers) and answer its interrupts until it ends (or ``until``)."""
        deadline = time.monotonic() + self.plan.timeout
        last: Any = None
        while time.monotonic() < deadline:
            if until is not None and until():
                return {}
            for server in servers:
                if server.process is None or server.process.poll() is not None:
                    continue
                status, run, _ = request(f"{server.url}/runs/{run_id}", timeout=10)
                last = run
                if status != 200:
                    break
                if run["status"] in ("finished", "failed", "stopped"):
                    return dict(run)
                if run["status"] == "paused":  # at a checkpoint (checkpointing=...): go on
                    request(f"{server.url}/runs/{run_id}/retry", {}, timeout=30)
                if run["status"] == "interrupted":
                    responses = self.responses(run["interrupts"])
                    if responses is None:
                        return dict(run)
                    request(f"{server.url}/runs/{run_id}/interrupts", {"responses": responses}, timeout=30)
                break
            time.sleep(0.05)
        raise TetherError(f"resume contract (served): run {run_id!r} did not end in {self.plan.timeout:.0f} s; last seen: {last}")

    def responses(self, interrupts: list[Mapping[str, Any]]) -> dict[str, Any] | None:
        own = self.plan.answers or {}
        out: dict[str, Any] = {}
        for item in interrupts:
            if item["name"] == IN_DOUBT:
                out[item["id"]] = "rerun"
            elif item["name"] in own:
                out[item["id"]] = own[item["name"]]
                self.asked.append(str(item["name"]))
            else:
                return None
        return out

    def start(self, server: _Server, slug: str) -> str:
        run_id = self.run_id(slug)
        status, body, _ = request(f"{server.url}/agents/{AGENT}/runs", {"prompt": self.plan.prompt, "run_id": run_id})
        if status != 202:
            raise TetherError(f"resume contract (served): POST /agents/{AGENT}/runs answered {status}: {body}")
        return run_id

    def starts(self, run_id: str) -> Counter[str]:
        """Tool starts of ``run_id`` in the shared starts log, by tool-use id."""
        return Counter(s.id for s in _starts(self.log) if s.key.startswith(run_id + "/"))

    def begun(self, run_id: str) -> list[str]:
        """Every start of a tool body in ``run_id``, in order (a body that stopped to ask counts too:
        it is where the server's hold counter stops)."""
        return _begun(self.log, run_id)

    def export(self, run_id: str, run: Mapping[str, Any]) -> dict[str, Any]:
        data = _load(self.store, run_id)
        (data.get("state") or {}).pop("tether.serve", None)  # the server's own bookkeeping: request keys, entry name
        data["stop_reason"] = run.get("stop_reason")
        path = self.directory / f"{run_id}.json"
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str))
        data["file"] = str(path)
        return data

    def differs(self, export: Mapping[str, Any], run_id: str) -> str | None:
        diff = first_difference(_comparable(self.reference, self.reference["run_id"]), _comparable(export, run_id))
        return None if diff is None else describe(diff)

    # -- the phases -----------------------------------------------------------------------

    def served_reference(self, server: _Server) -> dict[str, Any]:
        run_id = self.start(server, "reference")
        run = self.drive([server], run_id)
        if run.get("status") != "finished":
            raise TetherError(f"resume contract (served): the reference run did not finish: {run}")
        self.calls = len(self.begun(run_id))
        return {**self.export(run_id, run), "run_id": run_id, "asked": list(self.asked)}

    def forks(self, first: _Server, second: _Server, forks: int | str) -> None:
        """Fork each chosen step of the reference run twice over HTTP (fork ``a`` on one server,
        ``b`` on the other), drive both forks to their ends, compare the ends."""
        run_id = self.reference["run_id"]
        steps = list(range(1, len(self.reference["steps"]) + 1))
        if forks != "all":
            steps = _spread(steps, int(forks))
        for step in steps:
            exports = []
            for name, server in (("a", first), ("b", second)):
                fork_id = f"{run_id}.fork-{step}-{name}"
                status, body, _ = request(f"{server.url}/runs/{run_id}/fork", {"at": step, "run_id": fork_id}, timeout=30)
                if status != 201:
                    self.add(FORK, VIOLATED, len(steps), f"step {step}: POST /runs/{run_id}/fork answered {status}: {body}")
                    return
                exports.append(self.export(fork_id, self.drive([server], fork_id)))
            ends = [_comparable(export, f"{run_id}.fork-{step}-{name}") for export, name in zip(exports, "ab", strict=True)]
            diff = first_difference(ends[0], ends[1])
            if diff is not None:
                detail = f"step {step}: its two forks (served) differ at {describe(diff)}"
                self.add(FORK, VIOLATED, len(steps), detail, [export["file"] for export in exports])
                return
        summary = f"{len(steps)} steps of the served run forked twice over POST /runs/{{id}}/fork"
        self.add(FORK, HOLDS, len(steps) * 2, f"{summary}, one fork on each server: every pair ended the same")

    def crashes(self, first: _Server, second: _Server, points: int | str, recoveries: int = 0) -> None:
        """Kill a server inside each tool call (the ``n``-th it starts), before its body runs and
        after it (the effect done, its result not recorded); the other server finishes the run.
        At ``recoveries`` of those points the store is first copied twice, and each copy recovered
        by a fresh server (:class:`~tether.testing.contract_served_store.Recoveries`)."""
        chosen = [(n, when) for n in range(1, self.calls + 1) for when in ("before", "after")]
        if points != "all":
            chosen = _spread(chosen, int(points))
        copied = set(_spread(chosen, recoveries)) if not self.plan.postgres else set()
        recover = Recoveries(self)
        killed = 0
        for n, when in chosen:
            slug = f"crash-{n}-{when}"
            run_id = self.run_id(slug)
            held = Path(f"{self.log}.held")
            held.unlink(missing_ok=True)
            victim = _Server(self.plan, self.store, self.log, slug)
            victim.start(hold=f"{n}:{when}")
            try:
                self.start(victim, slug)
                self.drive([victim], run_id, until=held.exists)
                if (n, when) in copied and held.exists():
                    recover.copy(f"server killed inside tool call {n} ({when} its body)", run_id)
            finally:
                victim.kill()
            if not held.exists():
                continue  # call n stopped to ask a person: it has no "after" (its answered re-start is another call)
            killed += 1
            begun = self.begun(run_id)
            cut = begun[n - 1] if len(begun) >= n else None  # the call the kill cut off
            prefix = _load(self.store, run_id)["steps"]
            run = self.drive([first, second], run_id)
            export = self.export(run_id, run)
            counts = self.starts(run_id)
            label = f"server killed inside tool call {n} of {self.calls} ({when} its body)"
            files = [str(self.log), export["file"]]
            kept = export["steps"][: len(prefix)]
            if kept != prefix:
                where = next((i for i, (x, y) in enumerate(zip(prefix, kept, strict=False)) if x != y), len(kept))
                self.add(PREFIX, VIOLATED, killed, f"{label}: step {where + 1}, stored before the kill, changed", files)
            elif (diff := self.differs(export, run_id)) is not None:
                if cut is not None and counts[cut] == 2:  # the cut-off call ran again (in doubt) and the run came out otherwise
                    detail = f"{label}: tool call {cut}, re-run in doubt with the same key, changed the run at {diff}: not idempotent"
                    self.add(EFFECT, VIOLATED, killed, detail + " (declare idempotent=False with a reconcile callback)", files)
                else:
                    self.add(PREFIX, VIOLATED, killed, f"{label}: the run ended unlike the uninterrupted served run at {diff}", files)
            over = {ident: c for ident, c in counts.items() if c > (2 if ident == cut else 1)}
            if over:
                ident, count = next(iter(over.items()))
                self.add(EFFECT, VIOLATED, killed, f"{label}: tool call {ident} started {count} times", files)
        if recoveries:
            recover.check()
        if not killed:
            for name in (PREFIX, EFFECT):
                self.add(name, NOT_APPLICABLE, 0, "the run calls no tool: no call for a server to die in")
            return
        summary = f"{killed} server kills inside a tool call (before and after its body)"
        self.add(PREFIX, HOLDS, killed, f"{summary}, each run finished by the other server as the uninterrupted one")
        self.add(EFFECT, HOLDS, killed, f"{summary}: each call started once, the cut-off one at most twice with its key")

    def race(self, servers: tuple[_Server, _Server], k: int, slug: str, path: str, body: Any, headers: Any) -> list[dict[str, Any]]:
        """``k`` processes send one request at the same instant, alternating between the servers."""
        gate = self.directory / f"gate-{slug}"
        procs = []
        for i in range(k):
            config = {"url": servers[i % 2].url + path, "json": body, "headers": headers, "gate": str(gate)}
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "tether.testing._racer", json.dumps(config)],
                    env=self.plan.env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        try:
            for proc in procs:
                assert proc.stdout is not None
                if proc.stdout.readline().strip() != "ready":
                    raise TetherError(f"resume contract (served): a racer did not start: {proc.communicate()[1][-1000:]}")
            gate.touch()
            outcomes = []
            for proc in procs:
                out, err = proc.communicate(timeout=self.plan.timeout)
                lines = [line for line in out.splitlines() if line.startswith("{")]
                outcomes.append(json.loads(lines[-1]) if lines else {"status": None, "error": err[-500:]})
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        return outcomes

    def request_once(self, first: _Server, second: _Server, k: int) -> None:
        key = f"contract-{self.plan.token}-request"
        body = {"prompt": self.plan.prompt}
        outcomes = self.race((first, second), k, "request", f"/agents/{AGENT}/runs", body, {"Idempotency-Key": key})
        runs = {str((o.get("body") or {}).get("run_id")) for o in outcomes}
        fresh = [o for o in outcomes if o.get("status") == 202 and not o.get("replayed")]
        if any(o.get("status") != 202 for o in outcomes) or len(runs) != 1 or len(fresh) != 1:
            statuses = Counter(o.get("status") for o in outcomes)
            detail = (
                f"{k} copies of one keyed request: statuses {dict(statuses)}, {len(fresh)} not replays (must be 1), runs {sorted(runs)}"
            )
            odd = next((o for o in outcomes if o.get("status") != 202), None)
            self.add(CONSUME, VIOLATED, k, detail + (f"; one answer: {odd.get('body')}" if odd else ""))
            return
        (run_id,) = runs
        self.settle(first, second, run_id, k, f"{k} copies of one keyed request on two servers: one run, one turn")

    def answer_once(self, first: _Server, second: _Server, k: int) -> None:
        if not self.reference["asked"]:
            self.add(CONSUME, HOLDS, 0, "the run asks nothing: only the request race applies")
            return
        run_id = self.start(first, "answer")
        run = self.wait_interrupted(first, run_id)
        responses = self.responses([i for i in run["interrupts"] if i["name"] != IN_DOUBT])
        outcomes = self.race((first, second), k, "answer", f"/runs/{run_id}/interrupts", {"responses": responses}, None)
        taken = [o for o in outcomes if o.get("status") == 202]
        refused = [o for o in outcomes if o.get("status") == 409]
        if len(taken) != 1 or len(refused) != k - 1:
            statuses = Counter(o.get("status") for o in outcomes)
            odd = next((o for o in outcomes if o.get("status") not in (202, 409)), None)
            detail = f"{k} processes answered one interrupt over HTTP: statuses {dict(statuses)} (must be one 202, the rest 409)"
            self.add(CONSUME, VIOLATED, k, detail + (f"; one answer: {odd.get('body')}" if odd else ""))
            return
        self.settle(first, second, run_id, k, f"{k} processes answering one interrupt on two servers: 1 accepted, {k - 1} refused")

    def wait_interrupted(self, server: _Server, run_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.plan.timeout
        while time.monotonic() < deadline:
            status, run, _ = request(f"{server.url}/runs/{run_id}", timeout=10)
            if status == 200 and run["status"] == "interrupted":
                return dict(run)
            if status == 200 and run["status"] == "paused":
                request(f"{server.url}/runs/{run_id}/retry", {}, timeout=30)
            if status == 200 and run["status"] in ("finished", "failed", "stopped"):
                break
            time.sleep(0.05)
        raise TetherError(f"resume contract (served): run {run_id!r} did not stop for its interrupt")

    def settle(self, first: _Server, second: _Server, run_id: str, k: int, summary: str) -> None:
        """Finish the raced run; each tool once, the same end as the reference."""
        run = self.drive([first, second], run_id)
        export = self.export(run_id, run)
        twice = {ident: n for ident, n in self.starts(run_id).items() if n > 1}
        if twice:
            ident, n = next(iter(twice.items()))
            self.add(CONSUME, VIOLATED, k, f"{summary}, yet tool call {ident} started {n} times", [str(self.log), export["file"]])
        elif run.get("turns") != 1:
            self.add(CONSUME, VIOLATED, k, f"{summary}, yet the run holds {run.get('turns')} turns", [export["file"]])
        elif (diff := self.differs(export, run_id)) is not None:
            self.add(CONSUME, VIOLATED, k, f"{summary}, yet the run ended unlike the reference at {diff}", [export["file"]])
        else:
            self.add(CONSUME, HOLDS, k, f"{summary}, each effect once")


__all__ = ["ServedChecks"]
