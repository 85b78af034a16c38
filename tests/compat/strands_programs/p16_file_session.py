"""FileSessionManager: a conversation persisted to disk, continued by a new agent in a new process.

Phase 1 talks, then re-runs this file in a fresh interpreter (phase 2) that builds a new agent on
the same session: it sees the earlier messages and state, and the session directory grows.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, tool
from strands.session.file_session_manager import FileSessionManager


@tool(context=True)
def tally(points: int, tool_context) -> int:
    """Add points to the score.

    Args:
        points: Points to add.
    """
    score = (tool_context.agent.state.get("score") or 0) + points
    tool_context.agent.state.set("score", score)
    return score


def layout(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def untimed(path: Path) -> dict:
    data = json.loads(path.read_text())
    return {k: v for k, v in data.items() if k not in ("created_at", "updated_at")}


phase = sys.argv[1] if len(sys.argv) > 1 else "phase1"
storage = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("STRANDS_CORPUS_TMP") or tempfile.mkdtemp()
storage_dir = str(Path(storage) / "sessions")

if phase == "phase1":
    model = FakeModel([call("tu-1", "tally", {"points": 3}), text("Score is 3.")])
    agent = Agent(
        model=model,
        tools=[tally],
        agent_id="scorer",
        session_manager=FileSessionManager(session_id="game-1", storage_dir=storage_dir),
        callback_handler=None,
    )
    show_result("phase1.result", agent("Add 3 points"))
    dump("phase1.layout", layout(Path(storage_dir) / "session_game-1"))
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, "phase2", storage], check=True)
else:
    model = FakeModel([call("tu-2", "tally", {"points": 4}), text("Score is 7.")])
    agent = Agent(
        model=model,
        tools=[tally],
        agent_id="scorer",
        session_manager=FileSessionManager(session_id="game-1", storage_dir=storage_dir),
        callback_handler=None,
    )
    dump("phase2.restored_state", agent.state.get())
    show_messages("phase2.restored", agent)
    show_result("phase2.result", agent("Add 4 more"))
    dump("phase2.model_saw", model.requests[0])
    dump("phase2.state", agent.state.get())
    root = Path(storage_dir)
    dump("phase2.layout", layout(root / "session_game-1"))
    dump("phase2.session_json", untimed(root / "session_game-1" / "session.json"))
    agent_json = untimed(root / "session_game-1" / "agents" / "agent_scorer" / "agent.json")
    dump("phase2.agent_json", agent_json)
    first = untimed(root / "session_game-1" / "agents" / "agent_scorer" / "messages" / "message_0.json")
    dump("phase2.message_0", first)
