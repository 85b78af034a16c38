"""Loading Strands-style tools from modules, module paths and ``.py`` files (Strands' ``strands.tools.loader``).

Only paths and module names the *program* passes in ``tools=[...]`` are loaded (code the user
chose); nothing stored ever names code to load.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from .agent_tool import AgentTool
from .decorator import DecoratedFunctionTool
from .tools import PythonAgentTool

_TOOL_MODULE_PREFIX = "_tether_strands_tool_"


def _load_tool_module(tool_name: str, tool_path: str) -> ModuleType:
    """Execute the ``.py`` file as module ``tool_name`` (kept in ``sys.modules`` under a prefixed
    key so a tool named like a standard module does not replace it), with its directory on
    ``sys.path`` while it runs so it can import its siblings."""
    abs_path = str(Path(tool_path).resolve())
    spec = importlib.util.spec_from_file_location(tool_name, abs_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Could not create spec for {tool_name}")
    module = importlib.util.module_from_spec(spec)
    key = f"{_TOOL_MODULE_PREFIX}{tool_name}"
    sys.modules[key] = module
    tool_dir = str(Path(abs_path).parent)
    sys.path.insert(0, tool_dir)
    try:
        spec.loader.exec_module(module)
    except Exception:
        sys.modules.pop(key, None)
        raise
    finally:
        if tool_dir in sys.path:
            sys.path.remove(tool_dir)
    return module


def load_tool_from_string(tool_string: str) -> list[AgentTool]:
    """The tools named by a string: a ``.py`` file path, ``package.module`` or ``package.module:function``."""
    path = os.path.expanduser(tool_string)
    if os.path.exists(path):
        return load_tools_from_file_path(path)
    return load_tools_from_module_path(tool_string)


def load_tools_from_file_path(tool_path: str) -> list[AgentTool]:
    """The tools of the ``.py`` file at ``tool_path`` (its module is named after the file)."""
    module_name = os.path.basename(tool_path).split(".")[0]
    return load_tools_from_module(_load_tool_module(module_name, str(Path(tool_path).resolve())), module_name)


def load_tools_from_module_path(module_tool_path: str) -> list[AgentTool]:
    """The tools of an importable module (``a.b``), or one ``@tool`` of it (``a.b:name``)."""
    module_path, _, func_name = module_tool_path.partition(":")
    try:
        module = importlib.import_module(module_path)
    except ModuleNotFoundError as exc:
        raise AttributeError(f'Tool string: "{module_tool_path}" is not a valid tool string.') from exc
    if func_name:
        target = getattr(module, func_name, None)
        if isinstance(target, DecoratedFunctionTool):
            return [target]
        raise AttributeError(f"Tool {func_name} not found in module {module_path}")
    return load_tools_from_module(module, module_path.split(".")[-1])


def load_tools_from_module(module: ModuleType, module_name: str) -> list[AgentTool]:
    """A module's ``@tool`` functions; failing those, its module tool (``TOOL_SPEC`` and a
    function named like the module)."""
    found: list[AgentTool] = [attr for name in dir(module) if isinstance(attr := getattr(module, name), DecoratedFunctionTool)]
    if found:
        return found
    spec = getattr(module, "TOOL_SPEC", None)
    if not spec:
        raise AttributeError(
            f"The module {module_name} is not a valid module for loading tools."
            "This module must contain @tool decorated function(s), or must be a module based tool."
        )
    if not hasattr(module, module_name):
        raise AttributeError(f"Module-based tool {module_name} missing function {module_name}")
    func = getattr(module, module_name)
    if not callable(func):
        raise TypeError(f"Tool {module_name} function is not callable")
    return [PythonAgentTool(module_name, spec, func)]


__all__ = ["load_tool_from_string", "load_tools_from_file_path", "load_tools_from_module", "load_tools_from_module_path"]
