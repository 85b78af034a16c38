"""The Strands program corpus: each program prints the same through ``tether.strands`` as on Strands.

Every ``p*.py`` in ``strands_programs/`` is a small idiomatic Strands program driven by a scripted
model (``fake_model.FakeModel``, itself a ``strands.models.Model`` subclass) that prints its
observable results deterministically. Each runs in a fresh interpreter twice, both on the real
strands-agents 1.62.0:

(a) as written;
(b) with every ``strands`` import rewritten to ``tether.strands`` (in a copy of the whole corpus
    directory, so the fake model and helpers are swapped too): the import mapping must hand every
    path Strands' own module, so the program cannot tell.

Both must exit 0, print something substantial, and print the same thing (which also shows the
program prints the same on two runs: the corpus is deterministic, as the provider's crash tests
that reuse it need). To run one program alone: ``pytest tests/compat/test_strands_programs.py -k p01``.

Everything a program writes goes under pytest's tmp_path: the corpus is copied there, programs run
with it as their working directory and get it as ``STRANDS_CORPUS_TMP`` (and ``TETHER_HOME``).
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "STRANDS_CORPUS_TMP": str(work),
        "TETHER_HOME": str(work / "tether-home"),
    }
    return subprocess.run([sys.executable, str(corpus / f"{name}.py")], cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def describe(label: str, proc: subprocess.CompletedProcess[str]) -> str:
    return f"{label}: exit {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_prints_the_same_through_tether_strands(name: str, tmp_path: Path) -> None:
    on_strands = run_program(name, tmp_path / "strands", tether=False)
    assert on_strands.returncode == 0, describe(f"{name} on strands", on_strands)
    lines = [line for line in on_strands.stdout.splitlines() if line.strip()]
    assert len(lines) >= 5 and len(on_strands.stdout) >= 300, f"{name} prints too little to compare anything:\n{on_strands.stdout}"
    through = run_program(name, tmp_path / "tether", tether=True)
    assert through.returncode == 0, describe(f"{name} through tether.strands", through)
    diff = "".join(difflib.unified_diff(on_strands.stdout.splitlines(True), through.stdout.splitlines(True), "strands", "tether.strands"))
    assert not diff, f"{name}: through tether.strands it prints something else (or the program is not deterministic):\n{diff}"


def test_the_corpus_is_complete() -> None:
    """At least twenty programs, every one importing strands (so the rewrite has something to swap)."""
    assert len(PROGRAMS) >= 20, PROGRAMS
    for name in PROGRAMS:
        source = (CORPUS / f"{name}.py").read_text()
        assert rewrite_imports(source, name) != source, f"{name} imports nothing from strands"
