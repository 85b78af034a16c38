"""The Strands program corpus (issue 29): each program prints the same thing on Strands and on ``tether.strands``.

Every ``p*.py`` in ``strands_programs/`` is a small idiomatic Strands program driven by a scripted
model (``fake_model.FakeModel``, itself a ``strands.models.Model`` subclass) that prints its
observable results deterministically. Each runs in a fresh interpreter twice:

(a) as written, on the real strands-agents 1.62.0;
(b) with every ``strands`` import rewritten to ``tether.strands`` (in a copy of the whole corpus
    directory, so the fake model and helpers are swapped too), with the real package made
    unimportable so the run cannot fall back on it;

and the two outputs must be identical, both exiting 0, except for the lines named in
``DELIBERATE``: each is a difference docs/guides/from-strands.md lists with its reason, and such a
line must differ (a listed difference that disappears fails too, so the list stays true). ``test_program_runs_on_strands`` checks (a)
alone: it exits 0, prints something substantial, and prints the same thing twice (a program whose
output varied between runs could never be compared). To develop a program against Strands only:
``pytest tests/compat/test_strands_programs.py -k runs_on_strands``.

Everything a program writes goes under pytest's tmp_path: the corpus is copied there, programs run
with it as their working directory and get it as ``STRANDS_CORPUS_TMP``.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("strands", reason="strands-agents is in the dev extra")

CORPUS = Path(__file__).resolve().parent / "strands_programs"
SRC = Path(__file__).resolve().parents[2] / "src"
PROGRAMS = sorted(p.stem for p in CORPUS.glob("p[0-9][0-9]_*.py"))
TIMEOUT = 120  # seconds; a program takes about one (it is a guard against a hang, not a performance check)

_FROM = re.compile(r"^(\s*)from\s+strands(\.[\w.]+)?\s+import\b")
_IMPORT = re.compile(r"^(\s*)import\s+strands(\.[\w.]+)?(\s+as\s+\w+)?\s*(#.*)?$")


def rewrite_imports(source: str, name: str) -> str:
    """``source`` with every import of ``strands`` turned into the same import of ``tether.strands``.

    ``from strands.x import y`` -> ``from tether.strands.x import y``; ``import strands`` ->
    ``import tether.strands as strands``; ``import strands.x as y`` -> ``import tether.strands.x as y``.
    ``import strands.x`` without ``as`` would bind ``tether`` instead of ``strands``: it is refused.
    """
    out = []
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        if m := _FROM.match(line):
            line = line.replace("strands", "tether.strands", 1)
        elif m := _IMPORT.match(line):
            indent, dotted, alias = m.group(1), m.group(2) or "", m.group(3)
            if dotted and not alias:
                raise ValueError(f"{name}:{number}: 'import strands{dotted}' without 'as' cannot be rewritten faithfully")
            line = f"{indent}import tether.strands{dotted}{alias or ' as strands'}\n"
        elif re.match(r"^\s*(from|import)\s+strands\b", line):
            raise ValueError(f"{name}:{number}: an import of strands the rewrite does not understand: {line.strip()!r}")
        out.append(line)
    return "".join(out)


def test_rewrite_imports() -> None:
    source = (
        "from strands import Agent, tool\n"
        "from strands.hooks import (\n    HookProvider,\n)\n"
        "import strands\n"
        "import strands.agent as agent_module  # the module\n"
        "from mcp import stdio_client\n"
        "    from strands.models import Model\n"
        "x = 'from strands import Agent'\n"
    )
    assert rewrite_imports(source, "p") == (
        "from tether.strands import Agent, tool\n"
        "from tether.strands.hooks import (\n    HookProvider,\n)\n"
        "import tether.strands as strands\n"
        "import tether.strands.agent as agent_module\n"
        "from mcp import stdio_client\n"
        "    from tether.strands.models import Model\n"
        "x = 'from strands import Agent'\n"
    )
    with pytest.raises(ValueError, match="p:1"):
        rewrite_imports("import strands.agent\n", "p")


def copy_corpus(dest: Path, *, tether: bool) -> Path:
    """A copy of the corpus directory under ``dest`` (imports rewritten for the Tether variant)."""
    dest.mkdir(parents=True)
    for path in CORPUS.glob("*.py"):
        text = path.read_text()
        (dest / path.name).write_text(rewrite_imports(text, path.name) if tether else text)
    return dest


def run_program(name: str, root: Path, *, tether: bool) -> subprocess.CompletedProcess[str]:
    """Run ``name`` from a fresh copy of the corpus under ``root``, in a fresh interpreter."""
    corpus = copy_corpus(root / "corpus", tether=tether)
    work = root / "work"
    work.mkdir()
    path = [str(SRC)]
    if tether:
        # The real package is made unimportable: a program on tether.strands must not reach it.
        block = root / "block" / "strands"
        block.mkdir(parents=True)
        (block / "__init__.py").write_text("raise ImportError('the real strands package was imported under tether.strands')\n")
        path.insert(0, str(block.parent))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(path),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "STRANDS_CORPUS_TMP": str(work),
    }
    return subprocess.run([sys.executable, str(corpus / f"{name}.py")], cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def describe(label: str, proc: subprocess.CompletedProcess[str]) -> str:
    return f"{label}: exit {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_on_strands(name: str, tmp_path: Path) -> None:
    first = run_program(name, tmp_path / "one", tether=False)
    assert first.returncode == 0, describe(f"{name} on strands", first)
    lines = [line for line in first.stdout.splitlines() if line.strip()]
    assert len(lines) >= 5 and len(first.stdout) >= 300, f"{name} prints too little to compare anything:\n{first.stdout}"
    second = run_program(name, tmp_path / "two", tether=False)
    assert second.returncode == 0, describe(f"{name} on strands (second run)", second)
    diff = "".join(difflib.unified_diff(first.stdout.splitlines(True), second.stdout.splitlines(True), "run 1", "run 2"))
    assert not diff, f"{name} prints different things on two runs under strands, so it cannot be compared:\n{diff}"


DELIBERATE: dict[str, dict[str, str]] = {
    "p20_agents_as_tools": {
        "result.usage": "an agent tool's usage rolls up into its parent's: a Tether result counts what the run cost",
        "poet.message_count": "an agent tool's calls run on fresh runners (each a durable child run); the agent passed is a template",
    },
}
"""Program -> output label (the text before a line's first ``": "``) -> the deliberate difference
(docs/guides/from-strands.md) that makes that line differ on Tether."""


def _without(lines: list[str], labels: dict[str, str]) -> list[str]:
    return [line for line in lines if line.split(": ", 1)[0] not in labels]


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_prints_the_same_on_tether(name: str, tmp_path: Path) -> None:
    on_strands = run_program(name, tmp_path / "strands", tether=False)
    assert on_strands.returncode == 0, describe(f"{name} on strands", on_strands)
    on_tether = run_program(name, tmp_path / "tether", tether=True)
    assert on_tether.returncode == 0, describe(f"{name} on tether.strands", on_tether)
    deliberate = DELIBERATE.get(name, {})
    strands_lines, tether_lines = on_strands.stdout.splitlines(True), on_tether.stdout.splitlines(True)
    compared = _without(strands_lines, deliberate), _without(tether_lines, deliberate)
    diff = "".join(difflib.unified_diff(*compared, "strands", "tether.strands"))
    assert not diff, f"{name}: tether.strands prints something else than strands:\n{diff}"
    for label, why in deliberate.items():
        ours = [line for line in tether_lines if line.split(": ", 1)[0] == label]
        theirs = [line for line in strands_lines if line.split(": ", 1)[0] == label]
        assert theirs, f"{name}: Strands prints no {label!r} line (DELIBERATE is out of date)"
        assert ours != theirs, f"{name}: {label!r} is listed as a deliberate difference ({why}) but prints the same: unlist it"


def test_the_corpus_is_complete() -> None:
    """At least twenty programs, every one importing strands (so the rewrite has something to swap)."""
    assert len(PROGRAMS) >= 20, PROGRAMS
    for name in PROGRAMS:
        source = (CORPUS / f"{name}.py").read_text()
        assert rewrite_imports(source, name) != source, f"{name} imports nothing from strands"
