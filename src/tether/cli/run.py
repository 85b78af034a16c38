"""``tether run`` and ``tether resume``: drive a durable agent and stream it to the terminal.

Both build the agent from the user's flags and ``$TETHER_MODEL`` only. When they continue an
existing run (``resume``, or ``run --run-id`` of a run that exists) the flags are checked
against the hint the run keeps of how it was created and refused when they differ, unless
``--ignore-stored-config`` (see :mod:`tether.cli.config`); without ``--root``, a run keeps the
root it was created with when that directory is inside the current one (:func:`keep_root`).
Ctrl-C cancels the invocation: the store keeps the run at its last step boundary (marked
``stopped``), and ``tether resume RUN`` with the same flags goes on from there. ``tether resume
--stalled`` resumes every run whose owner died, one after another, with the same flags.

The model's configuration is checked before a run is created or touched (:func:`ready_model`:
the provider's SDK installed, its API key set, its URL well-formed), so a missing key leaves no
run behind. A new run whose very first model call fails (an unreachable endpoint, which no
check can know in advance) has recorded nothing but its prompt: it is deleted again, and the
error says so (:func:`_discard_if_empty`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import secrets
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..answers import answer_block
from ..durable.history import summary_of
from ..durable.store import RunStore
from ..errors import ConfigurationError, ReplyCutOffError, RunNotFoundError, TetherError
from ..loop.core import tool_uses_of
from ..models.base import Model, preflight
from ..result import AgentResult
from ..types import ToolResult
from .config import DEMO_SYSTEM_PROMPT, RunConfig, agent_tools, build_agent, check_hint, keep_root, shown, user_config
from .exits import DEBUG_VAR, EXIT_ERROR, EXIT_INTERRUPTED
from .models import parse_model
from .program import program
from .runs import console, open_store, printable
from .sigint import run_cancellable
from .stores import StoreSpec
from .strands_runs import continue_strands, strands_session

if TYPE_CHECKING:
    from rich.console import Console
    from rich.status import Status

    from ..agent import Agent


def cmd_run(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether run PROMPT``: a new run, or a new turn of ``--run-id`` when that run exists."""
    prompt = read_prompt(args.prompt)  # before the store is created: an empty stdin leaves nothing behind
    config = user_config(args.model, args.tools, args.no_demo_tools, args.root, max_tokens=args.max_tokens)
    model = ready_model(config)  # before the store is created: a missing key or SDK leaves nothing behind
    store = open_store(path, create=True)
    run_id = args.run_id or new_run_id()
    head = store.head(run_id)
    if head is not None and args.system is not None:
        raise ConfigurationError(
            f"run {run_id!r} exists and keeps its system prompt (it is part of the conversation); --system applies to a new run"
        )
    if head is None:
        config.system = args.system if args.system is not None else (DEMO_SYSTEM_PROMPT if config.demo_tools else None)
    else:
        _check_stored(args, config, head, run_id, "run")
    agent = build_agent(config, store, model=model, run_id=run_id)
    try:
        return _exit_code(_invoke(agent, prompt, run_id, config, _output(args), path.flags()))
    except Exception as exc:
        if head is None:
            _discard_if_empty(store, run_id, exc)
        _note_cut_off(exc, store, run_id, config, path.flags())
        raise


def ready_model(config: RunConfig) -> Model:
    """The model ``config`` names (with its ``--max-tokens`` cap), its configuration checked
    (:func:`tether.models.base.preflight`): a missing SDK, API key or malformed URL is refused
    before any run is created or changed."""
    model = parse_model(config.model, config.max_tokens)
    preflight(model)
    return model


def _discard_if_empty(store: RunStore, run_id: str, exc: Exception) -> None:
    """Delete the new run ``run_id`` when its first turn failed before any model reply.

    Such a run holds the prompt and a ``failed`` status, nothing else: typically the first
    model call could not reach its endpoint (no configuration check can know that in advance).
    Keeping it would only list a failed run the user never got anything from. A note on
    ``exc`` says the run was not kept (the one-line error shows it). Best effort: if the run
    cannot be read or deleted (another process took it), it stays.
    """
    try:
        stored = store.load(run_id)
        if stored is None or summary_of(run_id, stored.head).status != "failed":
            return
        if any(message["role"] != "user" for message in stored.messages):
            return  # the model answered at least once: the run holds work, keep it
        store.delete_run(run_id)
    except TetherError:
        return
    exc.add_note(f"(run {run_id} was not kept: it had recorded nothing but the prompt)")


def cmd_resume(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether resume RUN``: finish the run's turn with the user's flags (checked against its hint)."""
    if args.stalled:
        return resume_stalled(args, path)
    store = open_store(path)
    head = store.head(args.run_id)
    if head is None:
        raise RunNotFoundError(f"no run {args.run_id!r} in {path}; see `tether runs`")
    _not_strands(args.run_id, head)
    answers = [_answer(item) for item in args.answer]
    config = user_config(args.model, args.tools, args.no_demo_tools, args.root, max_tokens=args.max_tokens)
    _check_stored(args, config, head, args.run_id, "resume")
    finished = not answers and summary_of(args.run_id, head).status == "finished"
    agent = build_agent(config, store, model=None if finished else ready_model(config), run_id=args.run_id)
    check_tools(store, args.run_id, agent)
    try:
        return _exit_code(_invoke(agent, answers or None, args.run_id, config, _output(args), path.flags(), finished=finished))
    except ReplyCutOffError as exc:
        _note_cut_off(exc, store, args.run_id, config, path.flags())
        raise


def _note_cut_off(exc: Exception, store: RunStore, run_id: str, config: RunConfig, store_flags: Sequence[str]) -> None:
    """For a reply cut off at the model's cap (:class:`~tether.errors.ReplyCutOffError`), a note
    naming ``--max-tokens`` and the command that goes on with a higher cap: ``tether resume RUN``
    when the run was kept, else ``tether run`` again."""
    if not isinstance(exc, ReplyCutOffError):
        return
    cap = exc.max_tokens or config.max_tokens
    higher = dataclasses.replace(config, max_tokens=max(2 * cap, 512) if cap else 1024)
    flags = shown([*store_flags, *higher.flags()])
    if store.head(run_id) is not None:
        command = f"{shown([*program(), 'resume', run_id])} {flags}"
    else:
        command = f"{shown([*program(), 'run', 'PROMPT'])} {flags}"
    at = f" of {cap} tokens" if cap else ""
    exc.add_note(f"(the reply hit the model's cap{at}; raise it with --max-tokens N: {command})")


def resume_stalled(args: argparse.Namespace, path: StoreSpec) -> int:
    """``tether resume --stalled``: resume every run ``list_runs()`` reports as stalled, in turn.

    The agent flags are the user's, the same for every run, and checked against each run's hint
    like a single resume: a run created with other flags is skipped with the reason (unless
    ``--ignore-stored-config``). The model and tools are built once, before any run is touched,
    so a bad flag fails the command at once. One line per run says what became of it; a run
    that fails does not stop the others, and the command exits 1 when any was skipped or
    failed. Ctrl-C stops the batch (the current run stays resumable) with exit 130.
    """
    store = open_store(path)
    stalled = [run.run_id for run in store.list_runs() if run.status == "stalled"]
    out = console()
    if not stalled:
        out.print("no stalled runs", markup=False)
        return 0
    config = user_config(args.model, args.tools, args.no_demo_tools, args.root, max_tokens=args.max_tokens)
    model, tools = ready_model(config), agent_tools(config)
    outcomes: dict[str, str] = {}
    for number, run_id in enumerate(stalled, 1):
        out.print(f"stalled run {number}/{len(stalled)}: {run_id}", style="bold", markup=False)
        try:
            _not_strands(run_id, store.head(run_id))
            agent = build_agent(config, store, model=model, tools=tools, run_id=run_id)
            outcome = _resume_one(args, store, run_id, config, agent, path.flags())
        except ConfigurationError as exc:  # its hint differs from the user's flags (or is malformed)
            outcome = f"skipped: {exc}"
        except Exception as exc:  # one broken run does not stop the others
            if os.environ.get(DEBUG_VAR):
                raise
            outcome = f"failed: {type(exc).__name__}: {exc}"
        if outcome is None:
            return EXIT_INTERRUPTED  # Ctrl-C: _invoke said how to continue this run
        outcomes[run_id] = outcome
        out.print(f"{run_id}: {printable(outcome)}", markup=False, soft_wrap=True)
    resumed = sum(outcome.startswith("resumed") for outcome in outcomes.values())
    left = len(stalled) - resumed
    out.print(f"{_runs(len(stalled), 'stalled run')}: {resumed} resumed, {left} skipped or failed", markup=False)
    if not left:
        return 0
    console(stderr=True).print(
        f"error: tether resume --stalled: {left} of {_runs(len(stalled), 'stalled run')} not resumed (see above)",
        markup=False,
        soft_wrap=True,
    )
    return EXIT_ERROR


def _not_strands(run_id: str, head: dict[str, Any] | None) -> None:
    """Refuse a Strands agent's run: no ``tether`` command runs Strands (its program continues it)."""
    session = strands_session(head)
    if session is not None:
        raise ConfigurationError(
            f"run {run_id!r} is a Strands agent's run: tether does not run Strands; continue it with {continue_strands(session)}"
        )


def _resume_one(
    args: argparse.Namespace, store: RunStore, run_id: str, config: RunConfig, agent: Agent, store_flags: list[str]
) -> str | None:
    """Resume one stalled run; its outcome (``resumed, now STATUS (STOP_REASON)``) or None after Ctrl-C."""
    head = store.head(run_id)
    if head is None:
        return "skipped: it no longer exists"
    if store.owner_alive(run_id):
        return "skipped: another process owns it now"
    _check_stored(args, config, head, run_id, "resume")
    check_tools(store, run_id, agent)
    result = _invoke(agent, None, run_id, config, _output(args), store_flags)
    if result is None:
        return None
    now = store.head(run_id)
    status = "?" if now is None else summary_of(run_id, now).status
    return f"resumed, now {status} ({result.stop_reason})"


def _runs(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _check_stored(args: argparse.Namespace, config: RunConfig, head: dict[str, Any], run_id: str, command: str) -> None:
    """Refuse ``config`` for an existing run created with other flags (unless --ignore-stored-config).

    Runs before the user's tool modules are imported and before anything is written (the model
    is the user's spec, already checked): the hint is only compared, never used, except that
    without ``--root`` a run keeps its root when that is inside the current directory, a
    narrower root than the default one (:func:`~tether.cli.config.keep_root`).
    """
    if not args.ignore_stored_config:
        hint = RunConfig.from_state(head.get("state"), run_id)
        keep_root(config, hint, args.root)
        check_hint(config, hint, run_id, command, args.model, root_from_cwd=args.root is None)


def new_run_id() -> str:
    """A fresh, sortable run id: ``run-YYYYmmdd-HHMMSS-<6 hex>``."""
    return f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def _answer(item: str) -> dict[str, Any]:
    ident, sep, raw = item.partition("=")
    if not sep or not ident:
        raise ConfigurationError(f"--answer {item!r}: expected INTERRUPT_ID=VALUE")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw  # plain text
    return answer_block(ident, value)


def read_prompt(prompt: str) -> str:
    """The prompt argument, or standard input when it is ``-`` (a trailing newline dropped)."""
    if prompt != "-":
        return prompt
    if sys.stdin.isatty():
        print("reading the prompt from standard input; end it with Ctrl-D", file=sys.stderr)
    text = sys.stdin.read().removesuffix("\n")
    if not text.strip():
        raise ConfigurationError("tether run -: standard input held no prompt (pipe one in, e.g. echo 'What is 2 + 2?' | tether run -)")
    return text


def check_tools(store: RunStore, run_id: str, agent: Agent) -> None:
    """Refuse to continue ``run_id`` when tools its messages call are not among ``agent``'s.

    A run created from Python with its own tools, continued with only the demo tools, would
    send the model "Unknown tool" results and end failed. Nothing is written: the check runs
    before the run is touched, and the error names the missing tools and the flag to pass.
    """
    if agent.tool_registry.sources:
        return  # a tool source's names are known only once started: the loop reports unknown tools
    stored = store.load(run_id)
    called = dict.fromkeys(use["name"] for message in (stored.messages if stored else []) for use in tool_uses_of(message))
    missing = [name for name in called if name not in set(agent.tool_names)]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        raise ConfigurationError(
            f"run {run_id!r} calls tools this command does not have ({names}); pass the module that defines them with "
            f"--tools MODULE:ATTR (e.g. --tools myapp.tools:TOOLS); the run was not changed"
        )


def _output(args: argparse.Namespace) -> str:
    """How to print an invocation: ``stream`` (default), ``quiet`` (the answer only) or ``json``."""
    return "json" if getattr(args, "json", False) else "quiet" if getattr(args, "quiet", False) else "stream"


def _exit_code(result: AgentResult | None) -> int:
    """The exit status of a command that ran one invocation (:func:`_invoke`): 0, or 130 after
    Ctrl-C (the run is saved)."""
    return EXIT_INTERRUPTED if result is None else 0


def _invoke(
    agent: Agent,
    prompt: Any,
    run_id: str,
    config: RunConfig,
    output: str = "stream",
    store_flags: Sequence[str] = (),
    *,
    finished: bool = False,
) -> AgentResult | None:
    """Run one invocation (streamed to the terminal unless ``output`` is ``quiet`` or ``json``).

    ``store_flags`` (``--store STORE`` when the user gave one) go into the commands it prints.
    ``finished``: the run had already finished (``tether resume`` of a finished run): its
    answer is printed, with the command that adds a turn.

    Returns the result, or None when Ctrl-C stopped it: the run stays resumable and one line on
    stderr names the command that continues it. Errors, such as
    :class:`~tether.errors.LeaseLostError` when the run was unlocked under this invocation,
    propagate: ``main`` reports them in one line.
    """
    from rich.markup import escape

    out = console()
    streaming = output == "stream"
    if streaming:
        out.print(f"[dim]run[/] [bold]{run_id}[/]  [dim]model[/] {escape(_model_id(agent))}")
    view = _View(out, show=streaming)
    flags = shown([*store_flags, *config.flags()])
    try:
        result = run_cancellable(view.follow(agent, prompt, run_id))
    finally:
        view.stop()
    if result is None:
        command = shown([*program(), "resume", run_id])
        console(stderr=True).print(f"stopped: run {run_id} is saved; continue it with `{command} {flags}`", markup=False, soft_wrap=True)
        return None
    if output == "json":
        sys.stdout.write(json.dumps(result_json(result, run_id, _status_of(agent, run_id)), ensure_ascii=False) + "\n")
    elif output == "quiet":
        if result.text:
            sys.stdout.write(result.text + "\n")
        view.hints(result, run_id, flags, console(stderr=True), finished=finished)
    else:
        if not view.printed_text and result.text:  # nothing streamed (an answer already recorded): print it whole
            out.print(result.text, markup=False, soft_wrap=True)
        view.summary(result, run_id, flags, finished=finished)
    return result


def _status_of(agent: Agent, run_id: str) -> str | None:
    """The run's status in the store after an invocation (None when it cannot be read)."""
    try:
        head = agent.store.head(run_id) if agent.store is not None else None
        return None if head is None else summary_of(run_id, head).status
    except TetherError:
        return None


def result_json(result: AgentResult, run_id: str, status: str | None = None) -> dict[str, Any]:
    """The ``--json`` object (:data:`~tether.cli.app.RESULT_FIELDS`): run id, its status in the
    store, the answer, stop reason, usage, and the pending interrupts."""
    return {
        "run_id": run_id,
        "status": status,
        "answer": result.text,
        "stop_reason": result.stop_reason,
        "usage": dict(result.metrics.invocation.usage),
        "interrupts": [{"id": item.id, "name": item.name, "reason": item.reason} for item in result.interrupts],
    }


def _model_id(agent: Agent) -> str:
    return str(getattr(agent.model, "model_id", type(agent.model).__name__))


class _View:
    """Renders an invocation's stream events: text as it comes, tool calls, a spinner meanwhile."""

    def __init__(self, out: Console, show: bool = True) -> None:
        self.out = out
        self.show = show
        self.status: Status | None = None
        self.in_text = False
        self.printed_text = False

    async def follow(self, agent: Agent, prompt: Any, run_id: str) -> AgentResult:
        from rich.markup import escape

        result: AgentResult | None = None
        self.spin("thinking (the first call also loads the model)...")
        async for event in agent.stream_async(prompt, run_id=run_id):
            if event["type"] == "result":
                result = event["result"]
            elif not self.show:
                continue
            elif event["type"] == "text_delta":
                self.stop()
                self.out.print(event["text"], end="", markup=False)
                self.in_text = self.printed_text = True
            elif event["type"] == "tool_start":
                self.end_text()
                use = event["toolUse"]
                self.out.print(f"[cyan]-> {use['name']}[/]", escape(json.dumps(use.get("input"), ensure_ascii=False)))
                self.spin(f"running {use['name']}...")
            elif event["type"] == "tool_result":
                self.stop()
                self.out.print(*_result_line(event["toolResult"]))
                self.spin("thinking...")
        self.stop()
        self.end_text()
        assert result is not None
        return result

    def spin(self, text: str) -> None:
        if not self.show:
            return
        if self.status is None:
            self.status = self.out.status(text)
            self.status.start()
        else:
            self.status.update(text)

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def end_text(self) -> None:
        if self.in_text:
            self.out.print()
            self.in_text = False

    def summary(self, result: AgentResult, run_id: str, flags: str, *, finished: bool = False) -> None:
        """The closing line; for an interrupt or a checkpoint, the exact command that continues the run."""

        usage = result.metrics.invocation.usage
        self.out.print(f"[dim]{result.stop_reason}, {usage['total_tokens']} tokens, run[/] [bold]{run_id}[/]")
        self.hints(result, run_id, flags, self.out, finished=finished)

    @staticmethod
    def hints(result: AgentResult, run_id: str, flags: str, out: Console, *, finished: bool = False) -> None:
        """For an interrupt or a checkpoint, what is pending and the exact command that continues
        the run; for a reply cut off at the model's cap, the flag that raises it; for a run that
        had already finished, the command that adds a turn."""
        from rich.markup import escape

        tether = shown(program())
        if result.stop_reason == "interrupt":
            for interrupt in result.interrupts:
                reason = escape(json.dumps(interrupt.reason))
                out.print(f"[magenta]interrupt {escape(interrupt.id)}[/] {escape(interrupt.name)}: {reason}")
            out.print(f"answer with: {tether} resume {run_id} --answer ID=VALUE {flags}", markup=False, soft_wrap=True)
        elif result.stop_reason == "checkpoint":
            out.print(f"paused at a checkpoint; continue with: {tether} resume {run_id} {flags}", markup=False, soft_wrap=True)
        elif result.stop_reason == "max_tokens":
            next_turn = shown([*program(), "run", "Go on", "--run-id", run_id])
            raised = flags if "--max-tokens" in flags else f"{flags} --max-tokens N"
            out.print(
                f"the reply hit the model's cap on one reply; raise it with --max-tokens N and add a turn: {next_turn} {raised}",
                markup=False,
                soft_wrap=True,
            )
        elif finished:
            next_turn = shown([*program(), "run", "Your next message", "--run-id", run_id])
            out.print(f"run {run_id} had already finished; add a turn with: {next_turn} {flags}", markup=False, soft_wrap=True)


def _result_line(result: ToolResult) -> tuple[str, str]:
    from rich.markup import escape

    parts = [block.get("text") if "text" in block else json.dumps(block.get("json", "<content>")) for block in result["content"]]
    text = " ".join(str(part) for part in parts)
    text = text if len(text) <= 300 else text[:300] + "..."
    color = "red" if result["status"] == "error" else "green"
    return f"[{color}]<-[/]", escape(text)


__all__ = ["cmd_resume", "cmd_run", "new_run_id", "resume_stalled"]
