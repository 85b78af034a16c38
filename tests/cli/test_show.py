"""``tether show`` prints each message's text; tool inputs and results abbreviated unless ``--full``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tether.cli.transcript import ABBREVIATE, message_lines

from .conftest import Outcome, calc_call


def test_show_prints_every_message(home: Path, cli: Callable[..., Outcome], script: Callable[..., str]) -> None:
    spec = script(calc_call(), "It is 413.\nThat is twelve times thirty-four, plus five.")
    assert cli("run", "What is 12 * 34 + 5?", "--model", spec, "--run-id", "calc").code == 0
    out = cli("show", "calc").out.splitlines()
    start = out.index("messages (4):")
    assert out[start + 1 : start + 6] == [
        "[1] user: What is 12 * 34 + 5?",
        '[2] assistant: -> calculator {"expression": "12 * 34 + 5"}',
        "[3] user: <- success 413",
        "[4] assistant: It is 413.",
        "    That is twelve times thirty-four, plus five.",
    ]


def test_tool_inputs_and_results_are_abbreviated_unless_full(
    tmp_path: Path, home: Path, cli: Callable[..., Outcome], script: Callable[..., str]
) -> None:
    big = "x" * 5000
    (tmp_path / "big.txt").write_text(big, encoding="utf-8")
    read = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "r1", "name": "read_file", "input": {"path": "big.txt"}}}]}
    spec = script(read, "A file of x.")
    assert cli("run", "read big.txt", "--model", spec, "--run-id", "big", "--root", str(tmp_path)).code == 0
    short = cli("show", "big").out
    assert big not in short and "(5000 chars; --full shows all)" in short
    assert len(max(short.splitlines(), key=len)) < ABBREVIATE + 100
    full = cli("show", "big", "--full").out
    assert f"<- success {big}" in full


def test_message_lines_escape_control_characters_and_name_other_blocks() -> None:
    messages = [
        {"role": "user", "content": [{"text": "hi \x1b[31mred"}, {"image": {"format": "png", "source": {"bytes": "..."}}}]},
        {"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "thinking"}}}, {"text": "ok"}]},
        {"role": "user", "content": "not a list"},
    ]
    assert message_lines(messages) == [
        "[1] user: hi \\x1b[31mred",
        "    [image]",
        "[2] assistant: (reasoning) thinking",
        "    ok",
        "[3] user: (no content)",
    ]
