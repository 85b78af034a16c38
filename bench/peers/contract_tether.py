"""Tether's side of ``bench/resume_contract.py``: the factory the kit (``tether.testing.resume_contract``) checks.

The same agent as every peer's (``contract_common``): a scripted model calls ``charge(order)``
(call id ``CALL_ID``) and then answers; ``charge`` asks ``approve`` with ``ctx.interrupt`` and then
fires its effect, one line per call in ``$TETHER_CRASHTEST_SCRATCH/effects.log``. ``charge`` is
declared not idempotent; the agent's ``reconcile`` settles an in-doubt call by looking the order
up in that log (recorded when it is there, run again when it is not): the hook Tether gives a
tool whose effect it cannot see.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contract_common as cc

from tether import Agent, tool
from tether.durable.indoubt import RERUN, InDoubtCall
from tether.models import ScriptedModel
from tether.tools.context import ToolContext
from tether.types import ToolResult


def _effects() -> Path:
    return Path(os.environ.get("TETHER_CRASHTEST_SCRATCH", ".")) / "effects.log"


def _fired(order: str) -> bool:
    path = _effects()
    return path.exists() and order in path.read_text().split()


@tool(idempotent=False)
def charge(order: str, ctx: ToolContext) -> str:
    """Charge an order once a person approves."""
    answer = ctx.interrupt(cc.QUESTION, reason={"order": order})
    cc.Probe({"effects": str(_effects())}).effect(order)
    return f"charged {order}: {answer}"


def reconcile(call: InDoubtCall) -> ToolResult | str:
    """An in-doubt charge: recorded when the effect log has its order, else run again."""
    order = str((call.tool_use.get("input") or {}).get("order"))
    if _fired(order):
        return {"toolUseId": call.tool_use["toolUseId"], "status": "success", "content": [{"text": f"charged {order}: {cc.ANSWER}"}]}
    return RERUN


def agent() -> Agent:
    script = [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": cc.CALL_ID, "name": "charge", "input": {"order": cc.ORDER}}}]},
        cc.FINAL,
    ]
    return Agent(model=ScriptedModel(script, stateful=True), tools=[charge], reconcile=reconcile)
