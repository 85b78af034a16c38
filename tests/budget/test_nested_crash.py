"""A three-level run (a graph, its node agent, that agent's agent tool) under a graph budget,
killed with SIGKILL and resumed: it stops at its token or cost budget, never beyond it, its
reported spend is the sum of the usage figures the models reported, and raising the budget
lets it finish.

The kill points are deterministic (see :mod:`tests.budget.nested_worker`): the ones chosen kill the
helper's tool before its side effect, the lead after a message, and the helper's tool after its
side effect (in doubt: re-run on resume); every one comes after
the store wrote what the model call produced, so no reported usage is lost with a killed process
and the sums are exact. The scripted models honour a request's ``max_tokens`` as providers do,
so the output and cost limits cannot be overrun; the input limit holds because the input
estimate (see :mod:`tether.budget.estimate`) is not below these models' reported input.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.budget.nested_worker import PRICES
from tether import Budget
from tether.budget import spend_of
from tether.durable import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
LARGE = Budget(max_input_tokens=100_000, max_output_tokens=100_000, max_cost_usd=10.0)
BUDGETS = {
    "tokens": Budget(max_input_tokens=500, max_cost_usd=1.0),
    "cost": Budget(max_input_tokens=100_000, max_cost_usd=0.008),
}


def run_worker(tmp: Path, kill_at: int, budget: Budget) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "tests.budget.nested_worker", str(tmp / "runs.db"), str(tmp / "log"), str(tmp / "counter")]
    args += [str(kill_at), json.dumps(budget.to_dict())]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def finish(tmp: Path, kill_at: int, budget: Budget) -> tuple[dict[str, Any], int]:
    """Run (and re-run after each kill) until the worker exits 0; returns what it printed and the kills."""
    kills = 0
    for _ in range(4):
        done = run_worker(tmp, kill_at, budget)
        if done.returncode == 0:
            return json.loads(done.stdout), kills
        assert done.returncode == -9, done.stderr
        kills += 1
    raise AssertionError("the run did not finish")


def reported(tmp: Path) -> dict[str, float]:
    """The sums of the usage figures the models reported, and their price."""
    totals = {"input_tokens": 0.0, "output_tokens": 0.0, "cost_usd": 0.0, "model_calls": 0.0}
    for line in (tmp / "log").read_text().splitlines():
        if line.startswith("usage "):
            _, model, inp, out = line.split()
            totals["input_tokens"] += int(inp)
            totals["output_tokens"] += int(out)
            totals["cost_usd"] += PRICES[model].cost(int(inp), int(out))
            totals["model_calls"] += 1
    return totals


def graph_spend(tmp: Path) -> dict[str, float]:
    head = SQLiteStore(tmp / "runs.db").head("g")
    assert head is not None
    spend = spend_of(head["metrics"]).to_dict()
    return {key: spend[key] for key in ("input_tokens", "output_tokens", "cost_usd", "model_calls")}


def check_within(spend: dict[str, float], budget: Budget) -> None:
    assert budget.max_input_tokens is not None and spend["input_tokens"] <= budget.max_input_tokens
    assert budget.max_cost_usd is not None and spend["cost_usd"] <= budget.max_cost_usd + 1e-12


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> int:
    """How many kill points an uninterrupted run of the tokens case passes."""
    tmp = tmp_path_factory.mktemp("baseline")
    out, kills = finish(tmp, 0, BUDGETS["tokens"])
    assert (out["status"], out["lead"], kills) == ("interrupted", "budget_exhausted", 0)
    return int((tmp / "counter").read_text())


@pytest.mark.parametrize("which", sorted(BUDGETS))
@pytest.mark.parametrize("kill_at", [0, 5, 10, 14])
def test_killed_and_resumed_it_stops_at_its_budget_then_finishes_when_raised(points: int, which: str, kill_at: int, tmp_path: Path) -> None:
    assert kill_at < points  # every chosen kill point is reached
    budget = BUDGETS[which]
    out, kills = finish(tmp_path, kill_at, budget)
    assert kills == (1 if kill_at else 0)
    assert (out["status"], out["lead"]) == ("interrupted", "budget_exhausted")  # the node waits for more budget
    spend = graph_spend(tmp_path)
    assert spend == pytest.approx(reported(tmp_path))  # the sum of what the models reported
    check_within(spend, budget)
    assert spend["model_calls"] >= 3  # it did spend: at least one full round of lead and helper
    again, _ = finish(tmp_path, 0, budget)  # resumed with the same budget: refused again, nothing spent
    assert again["lead"] == "budget_exhausted" and graph_spend(tmp_path) == spend
    done, _ = finish(tmp_path, 0, LARGE)
    assert (done["status"], done["lead"], done["text"]) == ("completed", "end_turn", "final answer")
    total = graph_spend(tmp_path)
    assert total == pytest.approx(reported(tmp_path))
    check_within(total, LARGE)
    assert total["model_calls"] > spend["model_calls"]
