"""A run manifest: what a run's pending work was started against, as small JSON.

A durable run outlives the code that started it. Its manifest records, once per change (at
run start and when the agent's definition changes between turns), what a resume must check
against the code it finds: each tool's name, a digest of its JSON schema, its parameter names
(the required ones apart) and its *effect contract*; a digest of the system prompt; the model
id; the conversation manager; the structured-output model; the Tether version.

Effect contracts, strongest first (:data:`EFFECTS`):

- ``transactional``: the tool writes its effects through ``context.transaction()`` (the
  PostgreSQL outbox, ``@tool(transactional=True)``), so they commit with its result: a call in
  doubt left no effect and simply runs again (exactly once);
- ``idempotent``: running the tool again with the same idempotency key is harmless, so a call
  in doubt after a crash is simply run again (``@tool`` default; ``idempotent=True``);
- ``reconcilable``: not idempotent, but the agent has a ``reconcile`` hook that settles a call
  in doubt;
- ``at_most_once``: not idempotent and nothing reconciles it: a call in doubt is asked about
  (a ``tether.in_doubt`` interrupt), never re-run blindly.

A tool that declares a compensation (``@tool(compensate=...)``, see
:mod:`tether.tools.compensation`) has it named in its entry (``compensate``: ``module:qualname``),
so the digest covers it; an entry without one has no such key (older manifests read the same).

The manifest is data only: comparing two of them never imports or calls anything they name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._version import __version__
from ..errors import ShapeError

MANIFEST_VERSION = 1
"""The shape of the manifests this Tether writes."""
EFFECTS: tuple[str, ...] = (
    # MERGE NOTE (issue 32 C, branch h-effects): "transactional" is the PostgreSQL outbox's contract
    # (``Tool.transactional``, read by Agent.manifest through getattr so this works before and after
    # that branch lands). Its rank here (strongest: exactly once) is this branch's proposal.
    "transactional",
    "idempotent",
    "reconcilable",
    "at_most_once",
)
"""Effect contracts, strongest first: a change to a later one *weakens* a tool's contract."""


def digest_of(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value`` (sorted keys, no spaces).

    Args:
        value: Any JSON value.
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def effect_of(idempotent: bool, reconcilable: bool, transactional: bool = False) -> str:
    """The effect contract of a tool (see the module docstring).

    Args:
        idempotent: The tool's ``idempotent`` flag.
        reconcilable: Whether the agent has a ``reconcile`` hook for in-doubt calls.
        transactional: The tool's ``transactional`` flag (its effects go through the outbox).
    """
    if transactional:
        return "transactional"
    if idempotent:
        return "idempotent"
    return "reconcilable" if reconcilable else "at_most_once"


def weakened(old: str, new: str) -> bool:
    """True when contract ``new`` promises less than ``old`` (an unknown contract promises least)."""
    rank = {name: index for index, name in enumerate(EFFECTS)}
    return rank.get(new, len(EFFECTS)) > rank.get(old, len(EFFECTS))


def tool_entry(spec: Mapping[str, Any], effect: str, compensate: str | None = None) -> dict[str, Any]:
    """A tool's manifest entry from its spec: its schema digest, parameters and contract
    (its effect and, if it has one, the name of its compensation)."""
    schema = (spec.get("inputSchema") or {}).get("json") or {}
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required") if isinstance(schema, dict) else None
    entry = {
        "schema": digest_of(schema),
        "parameters": sorted(str(name) for name in (properties or {})),
        "required": sorted(str(name) for name in (required or [])),
        "effect": effect,
    }
    if compensate is not None:
        entry["compensate"] = compensate
    return entry


def build_manifest(
    *,
    tools: Iterable[tuple[Mapping[str, Any], str]],
    system_prompt: Any,
    model: str | None,
    conversation_manager: str | None,
    output_model: Mapping[str, Any] | None = None,
    compensations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The manifest of an agent's definition (JSON), its ``digest`` covering everything else.

    Args:
        tools: ``(spec, effect contract)`` of each tool.
        system_prompt: The system prompt's content blocks (None: none); only its digest is kept.
        model: The model id (None: no model).
        conversation_manager: The conversation manager's name.
        output_model: The structured-output tool's spec of the call, if any.
        compensations: Tool name -> the name of its compensation, for the tools that have one.
    """
    named = compensations or {}
    manifest: dict[str, Any] = {
        "version": MANIFEST_VERSION,
        "tether": __version__,
        "model": model,
        "system_prompt": None if system_prompt is None else digest_of(system_prompt),
        "conversation_manager": conversation_manager,
        "output_model": None if output_model is None else {"name": output_model.get("name"), **tool_entry(output_model, "idempotent")},
        "tools": {str(spec["name"]): tool_entry(spec, effect, named.get(str(spec["name"]))) for spec, effect in tools},
    }
    manifest["digest"] = digest_of(manifest)
    return manifest


def check_manifest(value: Any, where: str) -> dict[str, Any]:
    """``value`` if it is a manifest this Tether can compare, else :class:`ShapeError` naming
    the field (a stored manifest is data: it is checked, never trusted).

    Args:
        value: The manifest as stored.
        where: What it is, for the error's path (``"manifest"``).
    """
    if type(value) is not dict:
        raise ShapeError([where], f"must be an object, got {type(value).__name__}")
    version = value.get("version")
    if type(version) is not int or not 1 <= version <= MANIFEST_VERSION:
        raise ShapeError([where, "version"], f"must be an integer from 1 to {MANIFEST_VERSION}, got {version!r:.60}")
    for key in ("digest", "tether", "model", "system_prompt", "conversation_manager"):
        if value.get(key) is not None and type(value[key]) is not str:
            raise ShapeError([where, key], f"must be a string or null, got {type(value[key]).__name__}")
    if value.get("output_model") is not None and type(value["output_model"]) is not dict:
        raise ShapeError([where, "output_model"], "must be an object or null")
    tools = value.get("tools")
    if type(tools) is not dict:
        raise ShapeError([where, "tools"], "must be an object mapping tool names to entries")
    for name, entry in tools.items():
        check_entry(entry, [where, "tools", name])
    return value


def check_entry(entry: Any, path: list[Any]) -> None:
    """Check one tool entry of a manifest (ShapeError naming ``path`` otherwise)."""
    if type(entry) is not dict:
        raise ShapeError(path, f"must be an object, got {type(entry).__name__}")
    if type(entry.get("schema")) is not str:
        raise ShapeError([*path, "schema"], "must be a schema digest (a string)")
    if entry.get("compensate") is not None and type(entry["compensate"]) is not str:
        raise ShapeError([*path, "compensate"], "must be a compensation's name (a string) or absent")
    if type(entry.get("effect")) is not str:
        raise ShapeError([*path, "effect"], f"must be one of {', '.join(EFFECTS)}")
    for key in ("parameters", "required"):
        items = entry.get(key)
        if type(items) is not list or not all(type(item) is str for item in items):
            raise ShapeError([*path, key], "must be a list of parameter names")


__all__ = [
    "EFFECTS",
    "MANIFEST_VERSION",
    "build_manifest",
    "check_entry",
    "check_manifest",
    "digest_of",
    "effect_of",
    "tool_entry",
    "weakened",
]
