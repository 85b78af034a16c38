"""Strands' unified storage (``strands.storage``): bytes under string keys, for
:class:`~tether.strands.session.SnapshotSessionManager`.

``LocalFileStorage`` keeps each key as a file under a base directory (``a/b/c`` is
``<base_dir>/a/b/c``, written atomically), as Strands does, so the two read each other's files;
``InMemoryStorage`` keeps them in a dict. Keys are normalized as Strands normalizes them: runs
of ``/`` collapse, leading/trailing ``/`` go, and empty keys, backslashes and ``..`` segments
are refused.
"""

from __future__ import annotations

import builtins
import os
import uuid
from typing import Protocol, runtime_checkable

from ..types.exceptions import StorageError


@runtime_checkable
class Storage(Protocol):
    """Bytes under string keys."""

    async def write(self, key: str, data: bytes) -> None: ...

    async def read(self, key: str) -> bytes | None: ...

    async def delete(self, key: str) -> None: ...

    async def list(self, query: str = "") -> builtins.list[str]: ...


def normalize_key(key: str) -> str:
    """``key`` normalized (see the module docstring); ``ValueError`` for a refused key."""
    if not isinstance(key, str):
        raise ValueError(f"storage key must be a string, got {type(key).__name__}")
    if "\\" in key:
        raise ValueError(f"storage key {key!r} contains a backslash")
    parts = [part for part in key.split("/") if part]
    if not parts:
        raise ValueError(f"storage key {key!r} is empty")
    if any(part in ("..", ".") for part in parts):
        raise ValueError(f"storage key {key!r} contains a '.' or '..' segment")
    return "/".join(parts)


def normalize_prefix(prefix: str) -> str:
    """A list prefix: slash runs collapsed, leading slashes stripped, a trailing slash kept."""
    if "\\" in prefix or any(part == ".." for part in prefix.split("/")):
        raise ValueError(f"storage prefix {prefix!r} contains a backslash or a '..' segment")
    parts = [part for part in prefix.split("/") if part]
    out = "/".join(parts)
    return f"{out}/" if out and prefix.endswith("/") else out


class LocalFileStorage:
    """Each key a file under ``base_dir`` (Strands' default ``./.strands/``)."""

    def __init__(self, base_dir: str = "./.strands/") -> None:
        self._base_dir = os.path.normpath(base_dir)

    @property
    def base_dir(self) -> str:
        """The root directory of every key."""
        return self._base_dir

    def path_for(self, key: str) -> str:
        """The file of ``key``."""
        return os.path.join(self._base_dir, *normalize_key(key).split("/"))

    async def write(self, key: str, data: bytes) -> None:
        path = self.path_for(key)
        try:
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            tmp_path = os.path.join(parent, f".__strands_tmp_{uuid.uuid4().hex}")
            try:
                with open(tmp_path, "wb") as f:
                    f.write(data)
                os.replace(tmp_path, path)
            except BaseException:
                try:
                    os.unlink(tmp_path)
                except OSError:
                    pass
                raise
        except OSError as error:
            raise StorageError(f"Failed to write '{key}' ({path}): {error}") from error

    async def read(self, key: str) -> bytes | None:
        path = self.path_for(key)
        try:
            with open(path, "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            raise StorageError(f"Failed to read '{key}' ({path}): {error}") from error

    async def delete(self, key: str) -> None:
        try:
            os.unlink(self.path_for(key))
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as error:
            raise StorageError(f"Failed to delete '{key}': {error}") from error

    async def list(self, query: str = "") -> builtins.list[str]:
        prefix = normalize_prefix(query)
        keys: builtins.list[str] = []
        if not os.path.isdir(self._base_dir):
            return keys
        for dirpath, _, filenames in os.walk(self._base_dir):
            for filename in filenames:
                if filename.startswith(".__strands_"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, filename), self._base_dir).replace(os.sep, "/")
                if rel.startswith(prefix):
                    keys.append(rel)
        return sorted(keys)


class InMemoryStorage:
    """Keys in a dict (lost with the process)."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}

    async def write(self, key: str, data: bytes) -> None:
        self._data[normalize_key(key)] = bytes(data)

    async def read(self, key: str) -> bytes | None:
        return self._data.get(normalize_key(key))

    async def delete(self, key: str) -> None:
        self._data.pop(normalize_key(key), None)

    async def list(self, query: str = "") -> builtins.list[str]:
        prefix = normalize_prefix(query)
        return sorted(key for key in self._data if key.startswith(prefix))


__all__ = ["InMemoryStorage", "LocalFileStorage", "Storage", "StorageError"]
