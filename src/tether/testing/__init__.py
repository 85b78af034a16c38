"""`tether.testing`: prove your own agent survives crashes, and make model calls reproducible.

* :func:`crashtest` crashes the agent at every save point (SIGKILL at the store boundary) in
  child processes, resumes it, and compares each outcome with an uninterrupted run;
* :class:`Cassette` records a model's requests and streamed responses to JSON and replays them;
* ``agent.replay(run_id, at=STEP, model=..., edit=...)`` (:func:`replay_run`) forks a run at a
  step, runs it on with another model or an edited message, and reports the first
  :class:`Divergence` from the original;
* :func:`resume_contract` checks the six properties of "Resume Means Resume" (prefix
  continuation, effect exactly-once, fork determinism, checkpoint validity, consume-once,
  recovery determinism) on your agent, each with the fault the paper uses;
* the ``crashtest`` and ``resume_contract`` pytest fixtures (:mod:`tether.testing.pytest_plugin`) runs crashtest in a test.
"""

from __future__ import annotations

from ..result import Divergence
from .cassette import Cassette
from .contract import resume_contract
from .contract_report import PROPERTIES, ContractReport, PropertyResult
from .crash import crashtest
from .replay import replay_run
from .report import CrashFailure, CrashReport

__all__ = [
    "PROPERTIES",
    "Cassette",
    "ContractReport",
    "CrashFailure",
    "CrashReport",
    "Divergence",
    "PropertyResult",
    "crashtest",
    "replay_run",
    "resume_contract",
]
