"""Condense ``pip install -v`` output into progress lines: what is collected, built and installed.

Usage: ``pip install -v ... 2>&1 | python scripts/pip_progress.py LOG``. Every line goes to LOG;
the terminal gets one line per package collected and, while a package builds from source (the
llama-cpp-python wheel takes minutes), its compile progress from the build's own ``[ 42%]``
(make) or ``[57/140]`` (ninja) counters: updated in place on a terminal, one line per 10% step
otherwise. Exits 0; the caller checks pip's own exit status and shows LOG's tail on failure.
"""

from __future__ import annotations

import re
import sys
import time
from typing import TextIO

_PERCENT = re.compile(r"^\s*\[\s*(\d{1,3})%\]")
_STEPS = re.compile(r"^\s*\[(\d+)/(\d+)\]")
_COLLECTING = re.compile(r"^Collecting (\S+)")  # indented: a build backend's own build environment
_BUILDING = re.compile(r"^\s*Building wheel for (\S+) \(pyproject\.toml\)(?:: started)?\s*$")
_BUILT = re.compile(r"^\s*Created wheel for ([^\s:]+)")
_INSTALLED = re.compile(r"^Successfully installed (.+)")


class Progress:
    """Turns pip's lines into the few a person wants to see, written to ``out``."""

    def __init__(self, out: TextIO, live: bool) -> None:
        self.out = out
        self.live = live
        self.building: str | None = None
        self.shown = -1
        self.started = 0.0
        self.partial = False

    def write(self, text: str, *, in_place: bool = False) -> None:
        if self.partial and not in_place:
            self.out.write("\n")
        self.out.write(("\r" + text + "\033[K") if in_place else text + "\n")
        self.out.flush()
        self.partial = in_place

    def feed(self, line: str) -> None:
        if match := _COLLECTING.match(line):
            self.write(f"  collecting {match.group(1)}")
        elif match := _BUILDING.match(line):
            self.building, self.shown, self.started = match.group(1), -1, time.monotonic()
            self.write(f"  building {self.building} from source (once; llama.cpp: about 5 minutes on a quiet 2-core machine)...")
        elif self.building and (percent := self._percent(line)) is not None:
            step = percent if self.live else percent // 10 * 10
            if step > self.shown:
                self.shown = step
                elapsed = int(time.monotonic() - self.started)
                self.write(f"  building {self.building}: {percent:3d}% ({elapsed // 60}m{elapsed % 60:02d}s)", in_place=self.live)
        elif match := _BUILT.match(line):
            if self.building:
                self.write(f"  built {self.building}")
            self.building = None
        elif match := _INSTALLED.match(line):
            self.write(f"  installed {match.group(1)}")

    @staticmethod
    def _percent(line: str) -> int | None:
        if match := _PERCENT.match(line):
            return min(100, int(match.group(1)))
        if match := _STEPS.match(line):
            done, total = int(match.group(1)), int(match.group(2))
            return min(100, done * 100 // total) if total else None
        return None

    def close(self) -> None:
        if self.partial:
            self.write("")


def main(argv: list[str]) -> int:
    log_path = argv[1] if len(argv) > 1 else None
    progress = Progress(sys.stderr, live=sys.stderr.isatty())
    log = open(log_path, "w", encoding="utf-8") if log_path else None
    try:
        for line in sys.stdin:
            if log is not None:
                log.write(line)
                log.flush()
            progress.feed(line)
    finally:
        progress.close()
        if log is not None:
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
