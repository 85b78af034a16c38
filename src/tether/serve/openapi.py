"""The OpenAPI 3.1 document of the server's HTTP API (served at ``/openapi.json``)."""

from __future__ import annotations

from typing import Any

from .events import COMMITTED_KINDS, LIVE_KINDS

_ERROR = {"description": "the problem, named", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    "description": (
        "the client's key for this request: sent again (by any server, after a restart) it starts nothing and returns the "
        "first request's run (header Idempotent-Replayed: true); with another body it is a 422. A new run without run_id "
        "takes its id from the key"
    ),
}
_RUN_ID = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"}}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def openapi_document(agents: list[str]) -> dict[str, Any]:
    """The document, listing ``agents`` as the values of ``{name}``."""
    accepted = {"description": "started in a server task", **_json({"$ref": "#/components/schemas/Started"})}
    return {
        "openapi": "3.1.0",
        "info": {"title": "tether serve", "version": "1", "description": "Durable agent runs over HTTP, with resumable event streams."},
        "paths": {
            "/": {
                "get": {
                    "summary": "The chat page (HTML; served without the token: it holds no data)",
                    "security": [],
                    "responses": {"200": {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}}},
                }
            },
            "/healthz": {
                "get": {
                    "summary": "The process is up (for probes: no token, no Host check)",
                    "security": [],
                    "responses": {"200": {"description": "{status: ok}", **_json({"type": "object"})}},
                }
            },
            "/readyz": {
                "get": {
                    "summary": "The process reaches its store (for probes: no token, no Host check)",
                    "security": [],
                    "responses": {
                        "200": {"description": "{status: ready}", **_json({"type": "object"})},
                        "503": {**_ERROR, "description": "the store is unreachable; the Retry-After header says when to try again"},
                    },
                }
            },
            "/metrics": {
                "get": {
                    "summary": "Runs by status, steps, step latency, takeovers, handovers (Prometheus text format)",
                    "responses": {
                        "200": {"description": "text/plain; version=0.0.4", "content": {"text/plain": {"schema": {"type": "string"}}}}
                    },
                }
            },
            "/agents": {
                "get": {
                    "summary": "The names of the agents served",
                    "responses": {"200": {"description": "{agents: [name]}", **_json({"type": "object"})}},
                }
            },
            "/agents/{name}/runs": {
                "post": {
                    "summary": "Start a run (or a new turn of a finished run_id)",
                    "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string", "enum": agents}}, _KEY],
                    "requestBody": {
                        "required": True,
                        **_json(
                            {
                                "type": "object",
                                "required": ["prompt"],
                                "additionalProperties": False,
                                "properties": {"prompt": {"type": ["string", "array"]}, "run_id": {"type": "string"}},
                            }
                        ),
                    },
                    "responses": {"202": accepted, "400": _ERROR, "404": _ERROR, "409": _ERROR, "413": _ERROR, "422": _ERROR},
                }
            },
            "/runs": {
                "get": {
                    "summary": "List top-level runs, oldest first",
                    "parameters": [
                        {"name": "status", "in": "query", "schema": {"type": "string"}, "description": "a status or a comma list"},
                        {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}},
                        {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}},
                    ],
                    "responses": {"200": {"description": "a page of runs", **_json({"type": "object"})}, "400": _ERROR},
                }
            },
            "/runs/{run_id}": {
                "get": {
                    "summary": "A run: status, last answer, pending interrupts",
                    "parameters": [_RUN_ID],
                    "responses": {"200": {"description": "the run", **_json({"$ref": "#/components/schemas/Run"})}, "404": _ERROR},
                },
                "delete": {
                    "summary": "Delete a run and its nested runs",
                    "parameters": [_RUN_ID],
                    "responses": {"200": {"description": "deleted ids", **_json({"type": "object"})}, "404": _ERROR, "409": _ERROR},
                },
            },
            "/runs/{run_id}/events": {
                "get": {
                    "summary": "The run's events as Server-Sent Events; resume with Last-Event-ID or ?after=",
                    "parameters": [
                        _RUN_ID,
                        {"name": "after", "in": "query", "schema": {"type": "string"}, "description": "an event id (STEP.INDEX)"},
                        {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}},
                    ],
                    "responses": {
                        "200": {
                            "description": (
                                f"committed events (with an id): {', '.join(COMMITTED_KINDS)}; live events (no id): "
                                f"{', '.join(LIVE_KINDS)}; finally 'end'"
                            ),
                            "content": {"text/event-stream": {"schema": {"type": "string"}}},
                        },
                        "400": _ERROR,
                        "404": _ERROR,
                    },
                }
            },
            "/runs/{run_id}/view": {
                "get": {
                    "summary": "The run's inspector page (HTML: timeline, conversation, state at every step)",
                    "parameters": [_RUN_ID],
                    "responses": {
                        "200": {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}},
                        "400": _ERROR,
                        "404": _ERROR,
                    },
                }
            },
            "/runs/{run_id}/interrupts": {
                "post": {
                    "summary": "Answer every pending interrupt (in-doubt calls: 'rerun' or the result to record)",
                    "parameters": [_RUN_ID, _KEY],
                    "requestBody": {"required": True, **_json({"type": "object", "required": ["responses"]})},
                    "responses": {"202": accepted, "400": _ERROR, "404": _ERROR, "409": _ERROR, "422": _ERROR},
                }
            },
            "/runs/{run_id}/cancel": {
                "post": {
                    "summary": "Stop a running agent run at its next step (its turn ends, stop reason cancelled)",
                    "parameters": [_RUN_ID],
                    "responses": {"202": accepted, "404": _ERROR, "409": _ERROR},
                }
            },
            "/runs/{run_id}/retry": {
                "post": {
                    "summary": "Retry a failed (or stopped, stalled) run from its last stored step: no recorded call is made again",
                    "parameters": [_RUN_ID, _KEY],
                    "responses": {"202": accepted, "404": _ERROR, "409": _ERROR},
                }
            },
            "/runs/{run_id}/compensate": {
                "post": {
                    "summary": (
                        "Undo the run's performed effects with its tools' compensations, newest first, each at most once, "
                        "nested runs with it; each undo is a step of the run (its stream shows them)"
                    ),
                    "parameters": [_RUN_ID, _KEY],
                    "responses": {
                        "200": {"description": "the unwinding's report", **_json({"$ref": "#/components/schemas/Compensation"})},
                        "404": _ERROR,
                        "409": {
                            **_ERROR,
                            "description": "running, compensated already, or no agent run of this server",
                        },
                    },
                }
            },
            "/runs/{run_id}/fork": {
                "post": {
                    "summary": (
                        "Fork the run at a past step into a new run, at rest (nothing executes): go on with it by "
                        "POST /runs/{new}/retry (paused), /interrupts (interrupted) or a new turn"
                    ),
                    "parameters": [_RUN_ID],
                    "requestBody": {
                        "required": True,
                        **_json(
                            {
                                "type": "object",
                                "required": ["at"],
                                "properties": {"at": {"type": "integer", "minimum": 1}, "run_id": {"type": "string"}},
                            }
                        ),
                    },
                    "responses": {
                        "201": {"description": "the new run", **_json({"$ref": "#/components/schemas/Forked"})},
                        "400": _ERROR,
                        "404": _ERROR,
                        "409": {**_ERROR, "description": "the new run id exists, the run is running, or no agent run of this server"},
                    },
                }
            },
            **_agui_paths(agents),
            **_a2a_paths(agents),
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {
                        "error": {"type": "object", "properties": {"status": {"type": "integer"}, "message": {"type": "string"}}}
                    },
                },
                "Started": {"type": "object", "properties": {"run_id": {"type": "string"}, "events": {"type": "string"}}},
                "Forked": {
                    "type": "object",
                    "properties": {
                        "run_id": {"type": "string"},
                        "status": {"type": "string"},
                        "forked_from": {"type": "object", "properties": {"run_id": {"type": "string"}, "step": {"type": "integer"}}},
                        "events": {"type": "string"},
                    },
                },
                "Compensation": {
                    "type": "object",
                    "properties": {
                        "run_id": {"type": "string"},
                        "status": {"type": "string", "enum": ["compensating", "compensated", "compensation_failed"]},
                        "trigger": {"type": "string"},
                        "undos": {"type": "array", "items": {"type": "object"}},
                        "events": {"type": "string"},
                    },
                },
                "Run": {
                    "type": "object",
                    "properties": {
                        "run_id": {"type": "string"},
                        "agent": {"type": ["string", "null"]},
                        "status": {"type": "string"},
                        "answer": {"type": ["string", "null"]},
                        "interrupts": {"type": "array"},
                        "stop_reason": {
                            "type": ["string", "null"],
                            "description": "how the last turn stopped: end_turn, interrupt, the error of a failed turn, handed over...",
                        },
                        "error": {
                            "type": ["object", "null"],
                            "description": "a failed run's error (its exception's type and message, cut at 200 characters); null otherwise",
                            "properties": {"type": {"type": "string"}, "message": {"type": "string"}},
                        },
                        "turns": {"type": "integer"},
                        "steps": {"type": "integer"},
                    },
                },
            },
        },
        "security": [{"bearer": []}],
    }


def _agui_paths(agents: list[str]) -> dict[str, Any]:
    """The AG-UI endpoint's paths (:mod:`tether.serve.agui_routes`)."""
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "enum": agents}}
    stream = {
        "description": (
            "AG-UI events (ag-ui-protocol), one JSON object per SSE data line, from RUN_STARTED (then MESSAGES_SNAPSHOT "
            "and STATE_SNAPSHOT of the thread so far) to RUN_FINISHED (outcome success, with pendingToolCallIds of "
            "front-end tools, or interrupt) or RUN_ERROR; the last event derived from a committed event carries its "
            "durable id (STEP.INDEX), RUN_STARTED the position the run starts after"
        ),
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
    run_agent_input = {
        "type": "object",
        "description": (
            "AG-UI RunAgentInput: threadId is the durable run's id; without resume the last user message is the "
            "prompt; resume answers every pending interrupt (status resolved: payload; cancelled: {cancelled: true}), "
            "tool messages the pending front-end tool calls; tools are offered to the model (front-end tools), state "
            "is merged into the agent state; unknown fields are ignored (warned in the log)"
        ),
        "required": ["threadId", "runId", "messages"],
        "properties": {
            "threadId": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
            "runId": {
                "type": "string",
                "description": "the input's idempotency key on its thread (sent again: the first run's stream; other input: 422)",
            },
            "messages": {"type": "array", "items": {"type": "object"}},
            "tools": {"type": "array"},
            "context": {"type": "array"},
            "forwardedProps": {},
            "state": {},
            "resume": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["interruptId", "status"],
                    "properties": {
                        "interruptId": {"type": "string"},
                        "status": {"enum": ["resolved", "cancelled"]},
                        "payload": {},
                    },
                },
            },
        },
    }
    return {
        "/agents/{name}/agui": {
            "post": {
                "summary": "Run the agent with the AG-UI protocol: a prompt, or the answers to its interrupts (resume)",
                "parameters": [name],
                "requestBody": {"required": True, **_json(run_agent_input)},
                "responses": {"200": stream, "400": _ERROR, "404": _ERROR, "409": _ERROR, "413": _ERROR, "422": _ERROR},
            }
        },
        "/agents/{name}/agui/{thread_id}": {
            "get": {
                "summary": (
                    "Reconnect to an AG-UI run: the events after Last-Event-ID (or ?after=), to the end of that run; "
                    "without an id, the thread's latest AG-UI run"
                ),
                "parameters": [
                    name,
                    {**_RUN_ID, "name": "thread_id"},
                    {"name": "after", "in": "query", "schema": {"type": "string"}, "description": "an SSE id (STEP.INDEX or STEP)"},
                    {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}},
                    {"name": "runId", "in": "query", "schema": {"type": "string"}, "description": "the AG-UI run id to report"},
                ],
                "responses": {"200": stream, "400": _ERROR, "404": _ERROR, "409": _ERROR},
            }
        },
    }


def _a2a_paths(agents: list[str]) -> dict[str, Any]:
    """The A2A endpoint's paths (:mod:`tether.serve.a2a_routes`): the card and the JSON-RPC binding."""
    name = {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "enum": agents}}
    rpc = {
        "type": "object",
        "description": "A2A 1.0 JSON-RPC 2.0 request: SendMessage, SendStreamingMessage, GetTask, CancelTask or SubscribeToTask",
        "required": ["jsonrpc", "method"],
        "properties": {
            "jsonrpc": {"const": "2.0"},
            "id": {"type": ["string", "integer", "null"]},
            "method": {"type": "string"},
            "params": {},
        },
    }
    answered = {
        "description": "a JSON-RPC response (errors too: A2A error codes), or for the streaming methods an SSE stream of them",
        "content": {"application/json": {"schema": {"type": "object"}}, "text/event-stream": {"schema": {"type": "string"}}},
    }
    return {
        "/agents/{name}/a2a/.well-known/agent-card.json": {
            "get": {
                "summary": "The agent's A2A card: its JSON-RPC interface at /agents/{name}/a2a",
                "parameters": [name],
                "responses": {"200": {"description": "the A2A AgentCard", **_json({"type": "object"})}, "404": _ERROR},
            }
        },
        "/agents/{name}/a2a": {
            "post": {
                "summary": "A2A 1.0 over JSON-RPC: a task is a durable run (task id = context id = run id)",
                "parameters": [name, {"name": "A2A-Version", "in": "header", "schema": {"type": "string", "const": "1.0"}}],
                "requestBody": {"required": True, **_json(rpc)},
                "responses": {"200": answered, "400": _ERROR, "404": _ERROR, "413": _ERROR, "415": _ERROR},
            }
        },
    }


__all__ = ["openapi_document"]
