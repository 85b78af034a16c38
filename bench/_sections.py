"""A bench script's section of a results file (``bench/results.md``): the text between
``<!-- NAME -->`` and ``<!-- /NAME -->``, replaced in place by the script's next run (appended
when the file has none)."""

from __future__ import annotations

import re
from pathlib import Path


def write_section(path: Path, name: str, section: str) -> None:
    """Put ``section`` (which starts with ``<!-- name -->`` and ends with ``<!-- /name -->``) in
    place of ``path``'s section ``name``, or at its end."""
    old = path.read_text() if path.exists() else ""
    text = section.strip("\n")
    marked = re.compile(rf"<!-- {re.escape(name)} -->.*?<!-- /{re.escape(name)} -->", re.S)
    new = marked.sub(lambda _: text, old, count=1) if marked.search(old) else old.rstrip("\n") + ("\n\n" if old else "") + text
    path.write_text(new.rstrip("\n") + "\n")


__all__ = ["write_section"]
