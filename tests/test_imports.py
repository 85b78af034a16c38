"""The public API imports, and `import tether` pulls in no provider SDK or heavy dependency."""

from __future__ import annotations

import json
import subprocess
import sys

import tether

HEAVY = ("openai", "anthropic", "boto3", "botocore", "temporalio", "psycopg", "llama_cpp", "strands", "strands_tools")


def test_public_names() -> None:
    from tether import Agent, AgentResult, TetherError, ToolContext, tool

    assert callable(Agent) and callable(tool)
    assert issubclass(TetherError, Exception)
    assert AgentResult.__name__ == "AgentResult" and ToolContext.__name__ == "ToolContext"
    for name in tether.__all__:
        assert hasattr(tether, name), name
    assert tether.__version__


def test_import_tether_imports_no_provider_sdk_importtime() -> None:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import tether"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    imported = set()
    for line in proc.stderr.splitlines():
        if "|" not in line or not line.startswith("import time:"):
            continue
        name = line.rsplit("|", 1)[1].strip()
        imported.add(name.split(".")[0])
    assert "tether" in imported  # the probe sees our own import
    assert "pydantic" in imported
    leaked = sorted(imported & set(HEAVY))
    assert leaked == [], f"import tether pulled in {leaked}"


def test_import_tether_imports_no_provider_sdk_sys_modules() -> None:
    code = "import json, sys, tether; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(proc.stdout)
    assert "tether.agent" in modules
    roots = {name.split(".")[0] for name in modules}
    assert not roots & set(HEAVY), sorted(roots & set(HEAVY))
