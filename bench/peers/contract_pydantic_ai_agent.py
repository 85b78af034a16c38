"""The agent of both Pydantic AI probes of ``bench/resume_contract.py`` (``contract_pydantic_ai``:
DBOS, ``contract_pydantic_ai_temporal``: Temporal), and how a run's messages become records.

``Agent(FunctionModel(respond), tools=[Tool(charge, requires_approval=True)],
output_type=[str, DeferredToolRequests])``: the scripted model of ``contract_common`` calls
``charge``, which needs a person's approval (the interrupt: the run ends with
``DeferredToolRequests``), then answers. A probe binds :data:`PROBE` per action (``cc.serve``).
"""

from __future__ import annotations

from typing import Any

import contract_common as cc
from pydantic_ai import Agent, DeferredToolRequests, Tool
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

PROBE = cc.Probe({})  # each action binds its own (cc.serve)


async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    PROBE.model_call(sum(isinstance(m, ModelResponse) for m in messages))
    usage = RequestUsage(input_tokens=1, output_tokens=1)
    if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
        return ModelResponse(parts=[TextPart(cc.FINAL)], usage=usage)
    return ModelResponse(parts=[ToolCallPart("charge", {"order": cc.ORDER}, tool_call_id=cc.CALL_ID)], usage=usage)


def charge(order: str) -> str:
    """Charge an order once a person approves."""
    PROBE.effect(order)
    PROBE.tool_done(cc.CALL_ID)
    return f"charged {order}: {cc.ANSWER}"


def agent() -> Agent[None, Any]:
    tools = [Tool(charge, requires_approval=True)]
    return Agent(FunctionModel(respond), tools=tools, output_type=[str, DeferredToolRequests], name="contract")


def normalize(messages: list[Any]) -> list[dict[str, Any]]:
    """``contract_common`` records of a run's messages, each with the work unit it stores."""
    out = []
    for m in messages:
        if isinstance(m, ModelResponse):
            calls = [{"id": p.tool_call_id, "name": p.tool_name, "args": p.args_as_dict()} for p in m.parts if isinstance(p, ToolCallPart)]
            out.append(cc.record("assistant", text="".join(p.content for p in m.parts if isinstance(p, TextPart)), calls=calls))
        elif isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, UserPromptPart):
                    out.append(cc.record("user", text=str(p.content)))
                elif isinstance(p, ToolReturnPart):
                    out.append(cc.record("tool", call_id=p.tool_call_id, text=str(p.content)))
    for rec, unit in zip([r for r in out if r["role"] != "user"], cc.units(out), strict=True):
        rec["unit"] = unit
    return out
