"""Run manifests and the compatibility verdict of every resume (deploy-safe resume).

A durable run records a manifest (:mod:`tether.manifest.record`) of the agent that runs it (its
tools' schemas and effect contracts, prompt, model, ...); a resume compares it with the agent's
code now and gives a :class:`Verdict` (:mod:`tether.manifest.verdict`): ``same``,
``compatible``, ``migratable`` (the agent's :class:`Migrations` cover the change) or
``incompatible`` (:class:`~tether.errors.IncompatibleResumeError`, nothing written). See the
guide "Upgrading agents with runs in flight".
"""

from .migrations import InputMigration, Migrations
from .record import EFFECTS, MANIFEST_VERSION, build_manifest, check_manifest, digest_of, effect_of
from .verdict import VERDICTS, Difference, ResumeCheck, Verdict, judge, pending_calls

__all__ = [
    "EFFECTS",
    "MANIFEST_VERSION",
    "VERDICTS",
    "Difference",
    "InputMigration",
    "Migrations",
    "ResumeCheck",
    "Verdict",
    "build_manifest",
    "check_manifest",
    "digest_of",
    "effect_of",
    "judge",
    "pending_calls",
]
