"""See a run: write the inspector page of a small durable run and print where it is.

A run with a tool that fails, a tool that works and a final answer, on a SQLite store in
``tether-inspect-example/`` of the system's temporary directory (made afresh each time, so the
page stays there to be opened), then ``tether.inspect.render_html`` writes it as one HTML file (open it in
any browser, offline) and ``to_atif`` exports it as an ATIF trajectory. The same from a shell:
``tether view RUN -o run.html`` and ``tether export RUN --format atif``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.inspect import render_html, to_atif
from tether.models import ScriptedModel
from tether.models.scripted import tool_calls


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    if city == "Atlantis":
        raise LookupError(f"no weather station in {city}")
    return f"{city}: 21 °C, light wind"


def main() -> None:
    folder = Path(tempfile.gettempdir()) / "tether-inspect-example"
    shutil.rmtree(folder, ignore_errors=True)  # this example's own directory: start afresh
    folder.mkdir()
    store = SQLiteStore(folder / "runs.db")
    model = ScriptedModel(
        [tool_calls([("weather", {"city": "Lisbon"}), ("weather", {"city": "Atlantis"})]), "Lisbon is 21 °C; Atlantis has no station."]
    )
    agent = Agent(model=model, tools=[weather], store=store)
    print("answer:", agent("What is the weather in Lisbon and in Atlantis?", run_id="weather-1"))

    page = folder / "weather-1.html"
    page.write_text(render_html(store, "weather-1"), encoding="utf-8")
    print(f"inspector page: {page.resolve()} ({page.stat().st_size:,} bytes, {len(store.history('weather-1'))} steps)")

    trajectory = to_atif(store, "weather-1")
    atif = folder / "weather-1.atif.json"
    atif.write_text(json.dumps(trajectory, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"ATIF trajectory: {atif} ({trajectory['schema_version']}, {len(trajectory['steps'])} steps)")
    store.close()


if __name__ == "__main__":
    main()
