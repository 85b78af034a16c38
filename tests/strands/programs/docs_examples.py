"""Programs of Strands' own documentation, each with the provider's one line, in one process.

Usage: ``docs_examples.py STORE [--plain] [SECTION ...]``. Each section is a short program in the
shape the Strands docs give it (a graph, a swarm handing off with context, agents as tools,
structured output, hooks, community tools, interrupts, ``checkpointing=True``), with a scripted
model; ``manager(name)`` is the one line (a ``TetherSessionManager`` of its own session, or None with
``--plain``). The output is compared with and without the provider.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from typing import Any

from _program_kit import ScriptModel, manager_or_none, pause, show
from pydantic import BaseModel
from strands import Agent, tool
from strands.hooks import AfterToolCallEvent, BeforeInvocationEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strands.multiagent import GraphBuilder, Swarm
from strands_tools import calculator, current_time, editor, file_read, think

STORE = sys.argv[1]


def manager(name: str) -> Any:
    return manager_or_none(f"docs-{name}", STORE)


def dump(label: str, value: Any) -> None:
    print(label, json.dumps(value, sort_keys=True, default=str))


class Scripted(ScriptModel):
    """The docs' model, scripted; a nested agent (another system prompt: ``think``'s cycles) gets one
    line. A model with a ``label`` pauses at ``model:<label>`` (see ``_program_kit``)."""

    def __init__(self, script: list[dict[str, Any]], system_prompt: str | None = None, label: str | None = None) -> None:
        super().__init__(script)
        self.system_prompt = system_prompt
        self.label = label

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any) -> Any:
        if self.label is not None:
            pause(f"model:{self.label}")
        if self.system_prompt is not None and system_prompt != self.system_prompt:
            pause("model:think")
            messages, self_script, self.script = [], self.script, [{"text": "A deeper thought."}]
            try:
                async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
                    yield event
            finally:
                self.script = self_script
            return
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event


def agent(name: str, script: list[dict[str, Any]], **kwargs: Any) -> Agent:
    return Agent(name=name, model=Scripted(script, label=name), system_prompt=f"You are the {name}.", callback_handler=None, **kwargs)


def graph() -> None:
    """Multi-agent patterns / Graph: research -> (analysis | fact_check) -> report, conditional edges."""
    builder = GraphBuilder()
    builder.add_node(agent("researcher", [{"text": "CLAIM: Mars has two moons."}]), "research")
    builder.add_node(agent("analyst", [{"text": "Phobos and Deimos."}]), "analysis")
    builder.add_node(agent("fact_checker", [{"text": "Confirmed."}]), "fact_check")
    builder.add_node(agent("report_writer", [{"text": "Mars has two moons, Phobos and Deimos."}]), "report")
    builder.add_edge("research", "analysis")
    builder.add_edge("research", "fact_check", condition=lambda state: "CLAIM" in str(state.results["research"].result))
    builder.add_edge("analysis", "report")
    builder.add_edge("fact_check", "report")
    builder.set_entry_point("research")
    builder.set_max_node_executions(10)
    builder.set_session_manager(manager("graph"))
    result = builder.build()("How many moons has Mars?")
    order = [n.node_id for n in result.execution_order]  # analysis and fact_check run at once: either may end first
    dump("graph", {"status": result.status.value, "order": [order[0], sorted(order[1:3]), *order[3:]]})
    dump("graph.usage", result.accumulated_usage["totalTokens"])
    for node_id, node_result in sorted(result.results.items()):
        dump(f"graph.{node_id}", str(node_result.result).strip())


def swarm() -> None:
    """Multi-agent patterns / Swarm: researcher hands off to coder with context, coder to reviewer."""
    handoff = "handoff_to_agent"
    researcher = agent(
        "researcher",
        [
            {"tools": [("h-1", handoff, {"agent_name": "coder", "message": "Write it", "context": {"api": "GET /moons"}})]},
            {"text": "Handed to the coder."},
        ],
        description="Researches the API.",
    )
    coder = agent(
        "coder",
        [{"tools": [("h-2", handoff, {"agent_name": "reviewer", "message": "Review it"})]}, {"text": "Code written."}],
        description="Writes code.",
    )
    reviewer = agent("reviewer", [{"text": "LGTM."}], description="Reviews code.")
    team = Swarm([researcher, coder, reviewer], entry_point=researcher, max_handoffs=10, session_manager=manager("swarm"))
    result = team("Design a REST API for moons")
    dump("swarm", {"status": result.status.value, "history": [n.node_id for n in result.node_history]})
    dump("swarm.usage", result.accumulated_usage["totalTokens"])
    dump("swarm.coder_saw", coder.messages[0]["content"][0]["text"])
    dump("swarm.answer", str(result.results["reviewer"].result).strip())


def agents_as_tools() -> None:
    """Multi-agent patterns / Agents as tools: a @tool calling a specialist, and ``as_tool()``."""

    @tool
    def research_assistant(query: str) -> str:
        """Answer research questions.

        Args:
            query: The question.
        """
        if "TRIP_LOG" in os.environ:  # its side effect, for the crash test
            with open(os.environ["TRIP_LOG"], "a") as log:
                log.write(json.dumps({"key": query, "tool": "research_assistant"}) + "\n")
        specialist = Agent(model=Scripted([{"text": f"Facts about {query}."}]), system_prompt="You research.", callback_handler=None)
        return str(specialist(query)).strip()

    editor = agent("editor", [{"text": "Edited: Mars facts."}], description="Edits a text.")
    orchestrator = Agent(
        model=Scripted(
            [
                {"tools": [("t-1", "research_assistant", {"query": "Mars"})]},
                {"tools": [("t-2", "edit", {"input": "Facts about Mars."})]},
                {"text": "Here is the edited research."},
            ]
        ),
        tools=[research_assistant, editor.as_tool(name="edit", description="Edit a text.")],
        callback_handler=None,
        session_manager=manager("tools"),
    )
    show(orchestrator, orchestrator("Research Mars and edit it"), "agents_as_tools")


class Moon(BaseModel):
    """A moon."""

    name: str
    planet: str


def structured_output() -> None:
    """Structured output: ``structured_output_model=`` per call; ``result.structured_output``."""
    model = Scripted([{"tools": [("s-1", "Moon", {"name": "Phobos", "planet": "Mars"})]}])
    moons = Agent(model=model, callback_handler=None, session_manager=manager("structured"))
    result = moons("Name a moon of Mars", structured_output_model=Moon)
    dump("structured", result.structured_output.model_dump())
    show(moons, result, "structured_output")


class Audit(HookProvider):
    """Hooks: a provider logging invocations and tools, and an ``AfterToolCallEvent`` rewriting a result."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeInvocationEvent, lambda event: self.seen.append("invocation"))
        registry.add_callback(BeforeToolCallEvent, lambda event: self.seen.append(f"before:{event.tool_use['name']}"))
        registry.add_callback(AfterToolCallEvent, self.after_tool)

    def after_tool(self, event: AfterToolCallEvent) -> None:
        self.seen.append(f"after:{event.tool_use['name']}")
        event.result = {**event.result, "content": [{"text": str(event.result["content"][0]["text"]).upper()}]}


def hooks() -> None:
    audit = Audit()
    script = [{"tools": [("k-1", "calculator", {"expression": "2 * 21"})]}, {"text": "It is 42."}]
    worker = Agent(model=Scripted(script), tools=[calculator], hooks=[audit], callback_handler=None, session_manager=manager("hooks"))
    show(worker, worker("What is 2 * 21?"), "hooks")
    dump("hooks.seen", audit.seen)


def community_tools() -> None:
    """Community tools (``strands_tools``): calculator, current_time, think."""
    script = [
        {"tools": [("c-1", "calculator", {"expression": "sqrt(144) + 3"}), ("c-2", "current_time", {"timezone": "UTC"})]},
        {"tools": [("c-3", "think", {"thought": "Is 15 a lot of moons?", "cycle_count": 2, "system_prompt": "You are an astronomer."})]},
        {"text": "15, computed at the current time, after some thought."},
    ]
    model = Scripted(script, system_prompt="You are a helpful assistant.")
    helper = Agent(
        model=model,
        tools=[calculator, current_time, think],
        system_prompt="You are a helpful assistant.",
        callback_handler=None,
        session_manager=manager("community"),
    )
    result = helper("Compute, tell the time, think")
    for line in _shown(helper, result, "community_tools"):
        print(re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", "<now>", line))


def file_tools() -> None:
    """Community tools on files: ``editor`` creates a file (the docs' ``BYPASS_TOOL_CONSENT``), ``file_read`` reads it."""
    os.environ["BYPASS_TOOL_CONSENT"] = "true"
    with tempfile.TemporaryDirectory() as where:
        path = os.path.join(where, "notes.md")
        script = [
            {"tools": [("f-1", "editor", {"command": "create", "path": path, "file_text": "# Moons\nPhobos\nDeimos\n"})]},
            {"tools": [("f-2", "file_read", {"path": path, "mode": "lines", "start_line": 1, "end_line": 3})]},
            {"text": "Noted two moons."},
        ]
        writer = Agent(model=Scripted(script), tools=[editor, file_read], callback_handler=None, session_manager=manager("files"))
        result = writer("Note the moons of Mars")
        for line in _shown(writer, result, "file_tools"):
            print(line.replace(where, "<dir>"))


def _shown(who: Agent, result: Any, label: str) -> list[str]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        show(who, result, label)
    return out.getvalue().splitlines()


def interrupts() -> None:
    """Interrupts: a ``BeforeToolCallEvent`` hook asks for approval; the program answers."""

    @tool
    def delete_files(paths: list[str]) -> str:
        """Delete files.

        Args:
            paths: Which.
        """
        return f"deleted {len(paths)} files"

    def approve(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "delete_files":
            if event.interrupt("approval", reason={"paths": event.tool_use["input"]["paths"]}) != "y":
                event.cancel_tool = "not approved"

    script = [{"tools": [("i-1", "delete_files", {"paths": ["a.txt", "b.txt"]})]}, {"text": "Deleted both."}]
    cleaner = Agent(model=Scripted(script), tools=[delete_files], callback_handler=None, session_manager=manager("interrupts"))
    cleaner.hooks.add_callback(BeforeToolCallEvent, approve)
    result = cleaner("Delete a.txt and b.txt")
    dump("interrupts", [{"name": i.name, "reason": i.reason} for i in result.interrupts])
    result = cleaner([{"interruptResponse": {"interruptId": i.id, "response": "y"}} for i in result.interrupts])
    show(cleaner, result, "interrupts")


def checkpointing() -> None:
    """``checkpointing=True`` with a session manager: the program resumes every checkpoint."""
    script = [{"tools": [("p-1", "calculator", {"expression": "6 * 7"})]}, {"text": "42."}]
    stepper = Agent(
        model=Scripted(script), tools=[calculator], checkpointing=True, callback_handler=None, session_manager=manager("checkpoints")
    )
    result = stepper("What is 6 * 7?")
    positions = []
    while result.stop_reason == "checkpoint":
        assert result.checkpoint is not None
        positions.append(result.checkpoint.position)
        result = stepper({"checkpointResume": {"checkpoint": result.checkpoint.to_dict()}})
    dump("checkpoints", positions)
    show(stepper, result, "checkpointing")


EXAMPLES = [graph, swarm, agents_as_tools, structured_output, hooks, community_tools, file_tools, interrupts, checkpointing]
SECTIONS = {example.__name__: example for example in EXAMPLES}
for name in [a for a in sys.argv[2:] if a != "--plain"] or SECTIONS:
    print(f"== {name}")
    SECTIONS[name]()
