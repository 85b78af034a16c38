"""A Graph: research -> (conditional) fact_check -> write, built with GraphBuilder; its result and node results."""

from fake_model import FakeModel, text
from show import dump
from strands import Agent
from strands.multiagent import GraphBuilder, GraphResult, Status


def agent(name: str, answer: str, usage: tuple[int, int]) -> Agent:
    return Agent(name=name, model=FakeModel([text(answer, usage=usage)]), system_prompt=f"You are the {name}.", callback_handler=None)


def needs_check(state) -> bool:
    research = state.results.get("research")
    return research is not None and "CLAIM" in str(research.result)


researcher = agent("research", "CLAIM: the moon is 384400 km away.", (11, 7))
checker = agent("fact_check", "Verified.", (13, 2))
skipped = agent("skipped", "never runs", (1, 1))
writer = agent("write", "The moon is about 384,400 km from Earth.", (17, 9))

builder = GraphBuilder()
builder.add_node(researcher, "research")
builder.add_node(checker, "fact_check")
builder.add_node(skipped, "skipped")
builder.add_node(writer, "write")
builder.add_edge("research", "fact_check", condition=needs_check)
builder.add_edge("research", "skipped", condition=lambda state: False)
builder.add_edge("fact_check", "write")
builder.set_entry_point("research")
builder.set_max_node_executions(10)
graph = builder.build()

result = graph("How far is the moon?")
dump("type", type(result).__name__)
dump("is_graph_result", isinstance(result, GraphResult))
dump("status", result.status.value)
dump("status_is_completed", result.status == Status.COMPLETED)
dump("execution_order", [node.node_id for node in result.execution_order])
dump("counts", {"total": result.total_nodes, "completed": result.completed_nodes, "failed": result.failed_nodes})
dump("entry_points", [node.node_id for node in result.entry_points])
dump("accumulated_usage", {k: result.accumulated_usage[k] for k in ("inputTokens", "outputTokens", "totalTokens")})
for node_id, node_result in sorted(result.results.items()):
    dump(f"node.{node_id}.status", node_result.status.value)
    dump(f"node.{node_id}.text", str(node_result.result))
    dump(f"node.{node_id}.usage", {k: node_result.accumulated_usage[k] for k in ("inputTokens", "outputTokens", "totalTokens")})
dump("write.saw", writer.model.requests[0]["last_user_text"])
dump("fact_check.saw", checker.model.requests[0]["last_user_text"])
