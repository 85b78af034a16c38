"""The import mapping: every ``tether.strands.X`` path is Strands' own ``strands.X`` module.

Tether does not re-implement Strands' API; it makes real Strands agents durable. So that a
program may still spell its imports ``tether.strands...``, a ``sys.meta_path`` finder answers
every ``tether.strands.X`` (at any depth: ``tether.strands.models.ollama``,
``tether.strands.session.file_session_manager``) with the module object ``strands.X`` itself,
imported the ordinary way. Nothing is copied or wrapped: ``tether.strands.models.ollama is
strands.models.ollama``, its classes are Strands' classes and ``isinstance`` holds both ways.

Tether's own modules in the ``tether/strands/`` folder (the session manager, the executor, this
module, ...) are not aliased: the finder leaves them to Python's own path finder. A name that
is neither Tether's nor Strands' raises :class:`ModuleNotFoundError` naming both paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import pkgutil
import sys
import types
from collections.abc import Iterable, Sequence

from ..errors import MissingExtraError

TARGET = "strands"
"""The package every aliased path resolves into (strands-agents' import name)."""

INSTALL_HINT = "pip install 'tether[strands]'"
"""How to install the ``strands`` extra (strands-agents and its community tools)."""


def require_strands() -> types.ModuleType:
    """Strands' top-level package, imported.

    Raises:
        MissingExtraError: strands-agents is not installed (or fails to import); the message says
            how to install the ``strands`` extra.
    """
    try:
        return importlib.import_module(TARGET)
    except ImportError as exc:
        raise MissingExtraError(
            f"tether.strands is the durability provider for strands-agents, which could not be imported ({exc}); "
            f"install it with {INSTALL_HINT}"
        ) from exc


def own_modules(package_path: Iterable[str]) -> frozenset[str]:
    """The names of the modules and packages in Tether's ``tether/strands`` folder(s)."""
    return frozenset(info.name for info in pkgutil.iter_modules(list(package_path)))


class StrandsAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``<package>.X`` as ``strands.X`` for every ``X`` that is not one of ``own``.

    Args:
        package: The aliasing package's dotted name (``"tether.strands"``).
        own: The first components under ``package`` that are Tether's own modules, found normally.
    """

    def __init__(self, package: str, own: frozenset[str]) -> None:
        self.prefix = package + "."
        self.own = own

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec whose module is ``strands.X`` for ``fullname`` = ``<package>.X``, else None.

        Raises:
            ModuleNotFoundError: ``strands.X`` does not exist (the error names both paths);
                an ImportError raised inside ``strands.X`` itself (a provider's missing SDK)
                propagates as Strands raises it.
        """
        if not fullname.startswith(self.prefix):
            return None
        rest = fullname[len(self.prefix) :]
        if rest.split(".", 1)[0] in self.own:
            return None
        name = f"{TARGET}.{rest}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (name == exc.name or name.startswith(exc.name + ".")):
                raise  # something strands.X imports is missing: Strands' own error
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: tether.strands.X is Strands' own strands.X, "
                f"and the installed strands-agents has no module {exc.name!r}",
                name=fullname,
            ) from None
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=module, is_package=hasattr(module, "__path__"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        """The already imported ``strands.X`` (no new module object is made)."""
        module: types.ModuleType = spec.loader_state
        spec.loader_state = (module, module.__spec__)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing runs again; the module keeps its own ``__spec__`` (the import system set the alias's)."""
        spec = module.__spec__
        if spec is not None and spec.loader is self:
            module.__spec__ = spec.loader_state[1]


def install(package: str, package_path: Iterable[str]) -> StrandsAlias:
    """Put the finder for ``package`` first on ``sys.meta_path`` (once) and return it.

    First, so that Python's path finder never loads a Strands source file a second time under a
    ``tether.strands`` name from the parent's ``__path__`` (which is Strands' own folder).
    """
    for finder in sys.meta_path:
        if isinstance(finder, StrandsAlias) and finder.prefix == package + ".":
            return finder
    finder = StrandsAlias(package, own_modules(package_path))
    sys.meta_path.insert(0, finder)
    return finder
