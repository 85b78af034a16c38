"""The documentation site: it builds strictly, documents every public name, includes only
examples that tests run, cites only tests that exist, and its CLI reference is the parser's."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.test_examples import EXAMPLES
from tether.cli.app import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

PUBLIC_PACKAGES = [
    "tether",
    "tether.models",
    "tether.durable",
    "tether.manifest",
    "tether.effects",
    "tether.temporal",
    "tether.multiagent",
    "tether.mcp",
    "tether.telemetry",
    "tether.inspect",
    "tether.serve",
    "tether.testing",
]
"""Every public package: each has an API page ``docs/api/<last part>.md`` (``tether``: ``tether.md``)
holding ``::: <package>``, listed in mkdocs.yml's nav, and every name of its ``__all__`` is in the
built reference. Add a package here when it ships."""

SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"', re.M)
CITED_TEST = re.compile(r"(tests/[\w/]+\.py)::(\w+)")


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with ``mkdocs build --strict`` (any warning fails it). ``scripts/test`` has
    just built and checked it the same way before pytest and names it in ``$TETHER_DOCS_SITE``:
    that build is used rather than a second one (a minute of the suite)."""
    built = os.environ.get("TETHER_DOCS_SITE")
    if built and (Path(built) / "index.html").is_file():
        return Path(built)
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # the theme's end-of-life banner
    )
    assert proc.returncode == 0, proc.stderr
    assert not re.search(r"^(WARNING|ERROR)\b", proc.stderr, re.M), proc.stderr
    return out


def inventory(site: Path) -> set[str]:
    """The object names of the mkdocstrings inventory (``objects.inv``, Sphinx format 2)."""
    data = (site / "objects.inv").read_bytes()
    header, _, body = data.partition(b"zlib.\n")
    assert b"# Sphinx inventory version 2" in header
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines() if line.strip()}


def api_page(package: str) -> str:
    return "api/tether.md" if package == "tether" else f"api/{package.split('.')[-1]}.md"


def nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def test_the_strict_build_passes_and_writes_the_home_page(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert "Tether" in (site / "index.html").read_text()


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_public_name_is_in_the_api_reference(site: Path, package: str) -> None:
    page = DOCS / api_page(package)
    assert page.is_file(), f"{package} has no API page {page}"
    assert re.search(rf"^::: {re.escape(package)}\s*$", page.read_text(), re.M), f"{page} lacks '::: {package}'"
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert api_page(package) in nav_pages(config["nav"]), f"{api_page(package)} is not in mkdocs.yml's nav"
    names = inventory(site)
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if f"{package}.{name}" not in names]
    assert not missing, f"{package}: public names missing from the API reference: {missing}"


def test_the_inventory_check_can_fail(site: Path) -> None:
    assert "tether.Agent" in inventory(site)
    assert "tether.NoSuchName" not in inventory(site)


def test_every_snippet_exists_and_every_included_example_is_run_by_the_example_tests() -> None:
    run = {path.resolve() for path in EXAMPLES}
    included = []
    for page in pages():
        for ref in SNIPPET.findall(page.read_text()):
            path = (ROOT / ref).resolve()
            assert path.is_file(), f"{page.relative_to(ROOT)} includes {ref}, which does not exist"
            if ref.startswith("examples/"):
                assert path in run, f"{page.relative_to(ROOT)} includes {ref}, which tests/test_examples.py does not run"
            included.append(ref)
    for wanted in ("first_agent", "tools", "snapshots", "checkpoints_interrupts", "durable_resume", "fork_history", "quickstart"):
        assert f"examples/{wanted}.py" in included, f"no page includes examples/{wanted}.py"


def test_every_cited_test_exists() -> None:
    cited = [(page, path, name) for page in pages() for path, name in CITED_TEST.findall(page.read_text())]
    assert len(cited) >= 30  # the guarantees page cites its proofs
    for page, path, name in cited:
        file = ROOT / path
        assert file.is_file(), f"{page.relative_to(ROOT)} cites {path}, which does not exist"
        tree = ast.parse(file.read_text())
        defined = {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert name in defined, f"{page.relative_to(ROOT)} cites {path}::{name}, which is not a test there"


def load_hook(name: str = "cli_reference") -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{name}_hook", DOCS / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def subcommand_names(parser: argparse.ArgumentParser) -> list[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def test_the_cli_reference_lists_every_subcommand_of_the_parser(site: Path) -> None:
    html = (site / "reference" / "cli.html").read_text()
    names = subcommand_names(build_parser())
    assert {"run", "resume", "runs", "show", "fork", "unlock"} <= set(names)
    for name in names:
        assert f'id="tether-{name}"' in html, f"the CLI reference has no section for `tether {name}`"
        assert f"usage: tether {name}" in html, f"the CLI reference lacks the usage of `tether {name}`"
    assert "--ignore-stored-config" in html and "--older-than" in html  # the flags, not just the names


def test_a_subcommand_added_to_the_parser_appears_without_editing_the_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = load_hook()

    def with_extra() -> argparse.ArgumentParser:
        parser = build_parser()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                extra = action.add_parser("frobnicate", help="frobnicate a run", description="frobnicate a run")
                extra.add_argument("--level", help="how hard")
        return parser

    monkeypatch.setattr(hook, "_parser", with_extra)
    text = hook.render()
    assert "## `tether frobnicate` {#tether-frobnicate}" in text
    assert "usage: tether frobnicate [-h] [--level LEVEL]" in text and "how hard" in text


def test_the_hook_refuses_a_cli_page_without_its_marker() -> None:
    hook = load_hook()

    class Page:
        class file:
            src_uri = "reference/cli.md"

    with pytest.raises(ValueError, match="marker"):
        hook.on_page_markdown("# CLI reference\n", page=Page)


def test_the_readme_links_the_docs_entry_page_and_says_how_to_build() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "](docs/index.md)" in readme
    assert "./scripts/docs" in readme


def test_the_build_needs_no_network() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^\s*font: false", config, re.M), "theme.font must be false (no web fonts from a CDN)"
    for page in pages():
        text = page.read_text()
        assert "```mermaid" not in text, f"{page}: mermaid loads from a CDN; draw diagrams as inline SVG or tables"
        assert not re.search(r"<(script|link|img)[^>]+(src|href)=\"https?:", text), f"{page} loads something from the network"
    assert "analytics" not in config and "extra_javascript" not in config


def test_the_built_site_is_git_ignored() -> None:
    assert "site/" in (ROOT / ".gitignore").read_text().split()
    scripts = (ROOT / "scripts" / "test").read_text()
    assert "./scripts/docs" in scripts and "docs," in scripts  # CI installs the extra and builds strictly


def test_sphinx_roles_in_docstrings_become_links_not_text(site: Path) -> None:
    hook = load_hook("sphinx_roles")
    html = hook.on_page_content("see :class:<code>~tether.RetryPolicy</code> and :func:<code>tether.models.from_string()</code>")
    assert html == (
        'see <autoref identifier="tether.RetryPolicy" optional><code>RetryPolicy</code></autoref> and '
        '<autoref identifier="tether.models.from_string" optional><code>tether.models.from_string()</code></autoref>'
    )
    for page in (site / "api").glob("*.html"):
        text = page.read_text()
        assert not re.search(r":(class|func|meth|mod|data|attr|exc):<code>", text), f"{page.name} shows a raw Sphinx role"
    assert 'href="tether.html#tether.RetryPolicy"' in (site / "api" / "models.html").read_text()


PRINTS = re.compile(r'--8<--\s+"(examples/[\w.]+\.py)"\s*```\s*It prints[^:\n]*:\s*```text\n(.*?)```', re.S)


def printed_outputs() -> list[Any]:
    found = []
    for page in pages():
        for example, text in PRINTS.findall(page.read_text()):
            found.append(pytest.param(example, text, id=f"{page.stem}:{Path(example).stem}"))
    return found


def test_pages_show_the_output_of_their_examples() -> None:
    assert len(printed_outputs()) >= 5


@pytest.mark.parametrize(("example", "shown"), printed_outputs())
def test_the_output_a_page_shows_is_what_its_example_prints(example: str, shown: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / example)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

    def normal(text: str) -> list[str]:
        return [re.sub(r"\[pid \d+\]", "[pid N]", line.rstrip()) for line in text.strip().splitlines()]

    assert normal(proc.stdout) == normal(shown)


FIELD_LIST = re.compile(r"\(`([A-Z]\w*)`: ")
"""Where a page lists a public class's fields: ``(`Step`: `step`, `position`, ...)``."""


def documented_fields() -> list[tuple[str, str, list[str]]]:
    """``(page, class name, backticked names)`` of every field list on every page, up to its closing parenthesis."""
    found = []
    for page in pages():
        text = page.read_text()
        for match in FIELD_LIST.finditer(text):
            depth, end = 1, match.end()
            while depth and end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            found.append((str(page.relative_to(ROOT)), match.group(1), re.findall(r"`(\w+)`", text[match.end() : end])))
    return found


def test_documented_fields_are_the_real_fields_of_the_class() -> None:
    """A page listing a public class's fields names only real ones (``Step.number`` was documented
    while the field is ``step``)."""
    modules = [importlib.import_module(package) for package in PUBLIC_PACKAGES]
    public = {name: getattr(module, name) for module in modules for name in module.__all__}
    lists = documented_fields()
    assert any(name == "Step" for _, name, _ in lists), "docs/guides/durable.md lists Step's fields"
    for page, name, fields in lists:
        cls = public.get(name)
        assert cls is not None, f"{page} lists the fields of `{name}`, which is not a public name"
        assert fields, f"{page} lists no backticked field of `{name}`"
        real = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set(dir(cls))
        wrong = [field for field in fields if field not in real]
        assert not wrong, f"{page} documents fields of `{name}` it does not have: {wrong} (it has {sorted(real)})"
