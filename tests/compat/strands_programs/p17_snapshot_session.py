"""SnapshotSessionManager: the agent saved as one snapshot per invocation, continued by a new agent in a new process.

The manager uses its default storage (a LocalFileStorage under ./.strands/); the program works in
its own temporary directory. Phase 1 talks twice and re-runs this file as phase 2, which restores.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from fake_model import FakeModel, call, text
from show import dump, show_messages, show_result
from strands import Agent, tool
from strands.session import SnapshotSessionManager


@tool
def translate(word: str, language: str) -> str:
    """Translate a word.

    Args:
        word: The word.
        language: The target language.
    """
    return {"fr": {"cat": "chat", "dog": "chien"}}[language][word]


phase = sys.argv[1] if len(sys.argv) > 1 else "phase1"
workdir = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("STRANDS_CORPUS_TMP") or tempfile.mkdtemp()
os.chdir(workdir)

if phase == "phase1":
    model = FakeModel([call("tu-1", "translate", {"word": "cat", "language": "fr"}), text("chat"), text("You asked about a cat.")])
    agent = Agent(
        model=model,
        tools=[translate],
        agent_id="translator",
        state={"language": "fr"},
        session_manager=SnapshotSessionManager(session_id="lesson-1"),
        callback_handler=None,
    )
    show_result("phase1.first", agent("cat in French?"))
    agent.state.set("words", ["cat"])
    show_result("phase1.second", agent("What did I ask?"))
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, "phase2", workdir], check=True)
else:
    model = FakeModel([call("tu-2", "translate", {"word": "dog", "language": "fr"}), text("chien")])
    agent = Agent(
        model=model,
        tools=[translate],
        agent_id="translator",
        session_manager=SnapshotSessionManager(session_id="lesson-1"),
        callback_handler=None,
    )
    dump("phase2.restored_state", agent.state.get())
    show_messages("phase2.restored", agent)
    show_result("phase2.result", agent("dog in French?"))
    dump("phase2.model_saw", model.requests[0])
    dump("phase2.message_count", len(agent.messages))
    dump("phase2.layout", sorted(str(p) for p in Path(".strands").rglob("*") if p.is_file()))
