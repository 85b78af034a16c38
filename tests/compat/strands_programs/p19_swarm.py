"""A Swarm: agents hand off with handoff_to_agent until one answers; node history, result and usage."""

from fake_model import FakeModel, call, text
from show import dump
from strands import Agent
from strands.multiagent import Swarm, SwarmResult

triage = Agent(
    name="triage",
    description="Routes requests.",
    model=FakeModel(
        [
            call(
                "tu-1", "handoff_to_agent", {"agent_name": "billing", "message": "Refund question", "context": {"order": 7}}, usage=(20, 4)
            ),
            text("Handed off to billing.", usage=(25, 3)),
        ]
    ),
    callback_handler=None,
)
billing = Agent(
    name="billing",
    description="Handles refunds.",
    model=FakeModel([text("Your refund of 20 EUR is on its way.", usage=(30, 8))]),
    callback_handler=None,
)
swarm = Swarm([triage, billing], entry_point=triage, max_handoffs=5)
result = swarm("I want my money back")
dump("type", type(result).__name__)
dump("is_swarm_result", isinstance(result, SwarmResult))
dump("status", result.status.value)
dump("node_history", [node.node_id for node in result.node_history])
dump("accumulated_usage", {k: result.accumulated_usage[k] for k in ("inputTokens", "outputTokens", "totalTokens")})
for node_id, node_result in sorted(result.results.items()):
    dump(f"node.{node_id}.status", node_result.status.value)
    dump(f"node.{node_id}.text", str(node_result.result))
dump("triage.tools_offered", triage.model.requests[0]["tools"])
dump("billing.tools_offered", billing.model.requests[0]["tools"])
dump("billing.saw", billing.model.requests[0]["last_user_text"])
dump("triage.messages_after", len(triage.messages))
