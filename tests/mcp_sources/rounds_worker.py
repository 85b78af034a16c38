"""A durable run calling an MCP tool that asks for input (``servers/asker.py``) or runs as a task
(``servers/tasker.py``), in a child process (so a test can SIGKILL it).

Usage: ``python -m tests.mcp_sources.rounds_worker DB RUN_ID SERVER LOG TOOL ARGS_JSON start|resume [ANSWERS_JSON]``
(SERVER: a stdio server's script, or the URL of an HTTP server).
``start`` runs the prompt; ``resume`` resumes the run, with ``ANSWERS_JSON`` (a list of
``{interruptId, response}``) when given. Prints ``stopped <stop_reason> <json of the pending
interrupts>`` and then, unless the environment sets ``ROUNDS_EXIT``, waits to be killed.
``ASKER_KEY`` in the environment is passed to the server as ``--key``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from tether import Agent, ScriptedModel
from tether.durable import SQLiteStore
from tether.mcp import MCPServerHTTP, MCPServerStdio
from tether.models import tool_call


def main(argv: list[str]) -> int:
    db, run_id, server, log, tool, args, action = argv[:7]
    answers = json.loads(argv[7]) if argv[7:] else None
    extra = ["--key", os.environ["ASKER_KEY"]] if os.environ.get("ASKER_KEY") else []
    source: MCPServerStdio | MCPServerHTTP
    if server.startswith("http://"):
        source = MCPServerHTTP(server, protocol="auto", startup_timeout=30, call_timeout=60)
    else:
        source = MCPServerStdio(sys.executable, [server, "--log", log, *extra], protocol="auto", startup_timeout=30, call_timeout=60)
    script = [tool_call(tool, json.loads(args), tool_use_id="t1"), "finished"]
    agent = Agent(model=ScriptedModel(script, stateful=True), tools=[source], store=SQLiteStore(db))
    print("ready", flush=True)
    try:
        if action == "start":
            result = agent("go", run_id=run_id)
        else:
            result = agent.resume(run_id, [{"interruptResponse": answer} for answer in answers] if answers else None)
    except Exception as exc:  # reported to the test
        print(f"error {type(exc).__name__} {json.dumps(str(exc))}", flush=True)
        agent.close()
        return 0
    pending = [{"id": item.id, "name": item.name, "reason": item.reason} for item in result.interrupts]
    print(f"stopped {result.stop_reason} {json.dumps(pending)}", flush=True)
    if result.stop_reason == "end_turn":
        print(f"text {json.dumps(str(result))}", flush=True)
    if os.environ.get("ROUNDS_EXIT"):
        agent.close()
        return 0
    while True:  # the test kills the process here
        time.sleep(3600)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
