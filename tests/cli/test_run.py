"""``tether run`` and ``tether resume``: streamed output, the stored hint, Ctrl-C, interrupts."""

from __future__ import annotations

import json
import signal
import socket
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tether.cli.config import CONFIG_KEY, DEMO_SYSTEM_PROMPT

from ..durable.helpers import Crash, Plan, make_agent
from .conftest import Outcome, calc_call, json_fields, one_line_error, store_of, tether_process


def test_run_streams_tools_and_answer_and_stores_the_run(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    spec = script(calc_call(), "It is 413.")
    outcome = cli("run", "What is 12 * 34 + 5?", "--model", spec, "--run-id", "r1", "--system", "Be brief.")
    assert outcome.code == 0, outcome.err
    lines = outcome.out.splitlines()
    assert lines[0].startswith("run r1") and "scripted" in lines[0]
    assert '-> calculator {"expression": "12 * 34 + 5"}' in lines
    assert "<- 413" in lines and "It is 413." in lines
    assert lines[-1] == "end_turn, 30 tokens, run r1"
    stored = store_of(home).load("r1")
    assert stored is not None and stored.head["status"] == "finished"
    assert stored.head["system_prompt"] == [{"text": "Be brief."}]
    config = stored.head["state"][CONFIG_KEY]
    assert config["model"] == spec and config["demo_tools"] is True and config["root"] == str(Path.cwd())


def test_a_new_run_id_is_generated_and_printed(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    outcome = cli("run", "hi", "--model", script("hello"))
    (summary,) = store_of(home).list_runs()
    assert summary.run_id.startswith("run-") and outcome.out.splitlines()[-1].endswith(f"run {summary.run_id}")
    head = store_of(home).head(summary.run_id)
    assert head is not None and head["system_prompt"] == [{"text": DEMO_SYSTEM_PROMPT}]  # the demo tools' hint


def test_run_again_adds_a_turn_with_the_same_flags(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    spec = script("first", "second")
    assert cli("run", "one", "--model", spec, "--run-id", "t").code == 0
    # no --model: the run's stored spec is shown, not used
    one_line_error(cli("run", "two", "--run-id", "t"), f"run 't' was created with --model {spec} --root", "pass the same to run")
    outcome = cli("run", "two", "--run-id", "t", "--model", spec)
    assert outcome.code == 0 and "second" in outcome.out
    (summary,) = store_of(home).list_runs()
    assert (summary.turns, summary.status) == (2, "finished")
    one_line_error(cli("run", "three", "--run-id", "t", "--model", spec, "--system", "New."), "keeps its system prompt")


def test_a_new_turn_keeps_the_runs_own_system_prompt(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    spec = script("first", "second")
    assert cli("run", "one", "--model", spec, "--run-id", "t", "--system", "Be brief.").code == 0
    assert cli("run", "two", "--run-id", "t", "--model", spec).code == 0  # no --system: the run's own prompt
    store = store_of(home)
    head = store.head("t")
    assert head is not None and head["system_prompt"] == [{"text": "Be brief."}]
    assert [step.position for step in store.history("t")].count("verdict") == 0  # the same agent definition: nothing to judge


def test_model_from_the_environment(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_MODEL", script("from env"))
    outcome = cli("run", "hi", "--run-id", "e")
    assert outcome.code == 0 and "from env" in outcome.out


def test_no_demo_tools(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    outcome = cli("run", "hi", "--model", script(calc_call(), "done"), "--no-demo-tools", "--run-id", "n")
    assert outcome.code == 0 and "Unknown tool 'calculator'" in outcome.out
    head = store_of(home).head("n")
    assert head is not None and head["system_prompt"] is None


def test_user_tools_and_interrupt_answers_survive_resume(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = '''
        from tether import tool
        from tether.tools.context import ToolContext

        @tool
        def approve(item: str, ctx: ToolContext) -> str:
            """Ask a human to approve."""
            return f"{item}: {ctx.interrupt('approve', {'item': item})}"
    '''
    (tmp_path / "cli_user_tools.py").write_text(textwrap.dedent(module))
    monkeypatch.syspath_prepend(str(tmp_path))
    call = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "q", "name": "approve", "input": {"item": "tea"}}}]}
    spec = script(call, "bought")
    outcome = cli("run", "buy tea", "--model", spec, "--tools", "cli_user_tools:approve", "--run-id", "i")
    assert outcome.code == 0 and "interrupt" in outcome.out and '"item": "tea"' in outcome.out
    flags = f"--model {spec} --tools cli_user_tools:approve --root {Path.cwd()}"
    assert f"answer with: tether resume i --answer ID=VALUE {flags}" in outcome.out.splitlines()
    (pending,) = store_of(home).load("i").head["interrupt_state"]["interrupts"]  # type: ignore[union-attr]
    assert " interrupted " in cli("runs").out
    one_line_error(cli("resume", "i", "--answer", "no-equals-sign"), "INTERRUPT_ID=VALUE")
    one_line_error(
        cli("resume", "i", "--answer", f"{pending}=yes", "--model", spec), "--tools cli_user_tools:approve", "(yours: no --tools)"
    )
    resumed = cli("resume", "i", "--answer", f"{pending}=yes", "--model", spec, "--tools", "cli_user_tools:approve")
    assert resumed.code == 0, resumed.err
    assert "<- tea: yes" in resumed.out and "bought" in resumed.out


def test_resume_of_a_finished_run_prints_its_answer_and_calls_nothing(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    spec = script("only once")
    assert cli("run", "hi", "--model", spec, "--run-id", "f").code == 0
    again = cli("resume", "f", "--model", spec)  # the script has no second reply: a model call would fail
    assert again.code == 0, again.err
    lines = again.out.splitlines()
    assert lines[1:3] == ["only once", "end_turn, 0 tokens, run f"]
    next_turn = f"tether run 'Your next message' --run-id f --model {spec} --root {Path.cwd()}"
    assert lines[3:] == [f"run f had already finished; add a turn with: {next_turn}"]
    quiet = cli("resume", "f", "--model", spec, "--quiet")
    assert (quiet.out, quiet.err) == ("only once\n", f"run f had already finished; add a turn with: {next_turn}\n")


def test_a_missing_api_key_or_sdk_is_refused_before_any_run_or_store_exists(
    home: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    one_line_error(cli("run", "hi", "--model", "openai:gpt-4o", "--run-id", "k"), "tether run: no OpenAI API key", "OPENAI_API_KEY")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    monkeypatch.setitem(sys.modules, "anthropic", None)  # `import anthropic` fails as if the extra were not installed
    one_line_error(cli("run", "hi", "--model", "anthropic:claude-x"), "the 'anthropic' package", "pip install 'tether[anthropic]'")
    assert not home.exists()  # no store, so no failed run in it


def test_a_missing_api_key_does_not_touch_a_run_it_resumes(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("run", "hi", "--model", script(calc_call()), "--run-id", "r").code == 1  # failed after the tool
    with pytest.raises(Crash):
        make_agent(store_of(home), Plan(model=1))("go", run_id="s")  # the process "dies": a stalled run
    before = {run_id: store_of(home).head(run_id) for run_id in ("r", "s")}
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    one_line_error(cli("resume", "r", "--model", "openai:gpt-4o", "--ignore-stored-config"), "no OpenAI API key")
    one_line_error(cli("resume", "--stalled", "--model", "openai:gpt-4o"), "no OpenAI API key")
    assert {run_id: store_of(home).head(run_id) for run_id in ("r", "s")} == before


def test_an_unreachable_endpoint_is_named_and_leaves_no_run(home: Path, cli: Callable[..., Outcome]) -> None:
    with socket.socket() as probe:  # a port that nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outcome = cli("run", "hi", "--model", f"openai-compatible:http://127.0.0.1:{port}/v1:m", "--run-id", "u")
    one_line_error(outcome, f"cannot reach http://127.0.0.1:{port}/v1/", "(run u was not kept: it had recorded nothing but the prompt)")
    assert store_of(home).list_runs() == []


@pytest.mark.parametrize("command", ["run", "resume"])
def test_the_json_help_lists_the_fields_printed(
    home: Path,
    cli: Callable[..., Outcome],
    script: Callable[..., str],
    command: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    documented = json_fields(command, capsys, monkeypatch)
    spec = script(calc_call(), "It is 413.")
    made = cli("run", "What is 12 * 34 + 5?", "--model", spec, "--run-id", "j", "--json")
    printed = json.loads(made.out if command == "run" else cli("resume", "j", "--model", spec, "--json").out)
    assert list(printed) == documented
    assert printed["status"] == "finished" and printed["answer"] == "It is 413."


def test_ctrl_c_leaves_a_resumable_run(tmp_path: Path, home: Path, script: Callable[..., str]) -> None:
    gate = tmp_path / "gate"
    spec = script(calc_call(), {"wait_for": str(gate), "then": "It is 413."})
    process = tether_process("run", "What is 12 * 34 + 5?", "--model", spec, "--run-id", "c", home=home)
    assert process.stdout is not None
    for line in process.stdout:  # the second model call waits for the gate: interrupt it there
        if line.startswith("<- 413"):
            break
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, (out, err)
    assert f"tether resume c --model {spec} --root {Path.cwd()}" in err and "Traceback" not in err
    store = store_of(home)
    (summary,) = store.list_runs()
    assert (summary.status, summary.cycles) == ("stopped", 1)  # not "interrupted": that waits for answers
    assert store.history("c")[-1].stop_reason == "cancelled (Ctrl-C or task cancellation)"
    gate.touch()
    resumed = tether_process("resume", "c", "--model", spec, home=home, module=False)  # the console script this time
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert "It is 413." in out and "calculator" not in out  # the finished tool call is not redone
    (summary,) = store.list_runs()
    assert (summary.status, summary.cycles, summary.turns) == ("finished", 2, 1)


def test_max_tokens_caps_a_reply_and_the_summary_names_the_flag(
    home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    spec = script("A reply longer than three tokens.")  # the scripted model reports 5 output tokens per reply
    outcome = cli("run", "hi", "--model", spec, "--run-id", "m1", "--max-tokens", "3")
    assert outcome.code == 0, outcome.err
    assert "max_tokens, 13 tokens, run m1" in outcome.out
    assert "raise it with --max-tokens N" in outcome.out and "--max-tokens 3" in outcome.out
    stored = store_of(home).load("m1")
    assert stored is not None
    assert set(stored.head["state"][CONFIG_KEY]) == {"model", "tools", "demo_tools", "root", "system"}  # the cap is no part of the hint
    assert cli("run", "hi", "--model", spec, "--max-tokens", "0").code == 2


def test_a_run_cut_off_at_the_cap_names_the_flag_and_goes_on_when_resumed_with_it(
    home: Path, cli: Callable[..., Outcome], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The llama.cpp case: a reply cut off mid-way fails the turn (ReplyCutOffError); the error
    names ``--max-tokens`` and the resume command, and resuming with a higher cap finishes it."""
    from tether.cli import models, run
    from tether.errors import ReplyCutOffError
    from tether.models import ScriptedModel
    from tether.types import ModelRequest, StreamEvent

    class CutOff(ScriptedModel):
        """Its second reply needs more than 256 tokens."""

        max_tokens = 256

        async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
            if request["model_state"].get("scripted_index") == 1 and self.max_tokens < 1000:
                raise ReplyCutOffError(f"output was cut off at max_tokens={self.max_tokens}", max_tokens=self.max_tokens)
            async for event in super().stream(request):
                yield event

    def parse(spec: str, max_tokens: int | None = None) -> CutOff:
        model = CutOff([calc_call(), "It is 413."], stateful=True)
        if max_tokens is not None:
            models.cap_replies(model, max_tokens, spec)
        return model

    monkeypatch.setattr(run, "parse_model", parse)
    failed = cli("run", "What is 12 * 34 + 5?", "--run-id", "c1")
    assert failed.code == 1
    (line,) = failed.err.splitlines()
    assert "output was cut off at max_tokens=256" in line
    assert "raise it with --max-tokens N:" in line and "resume c1" in line and "--max-tokens 512" in line
    resumed = cli("resume", "c1", "--max-tokens", "1024")
    assert resumed.code == 0, resumed.err
    assert "It is 413." in resumed.out
