"""bench/compare.py and the Tether side of each scenario still run, at tiny sizes.

No peer is installed and nothing touches the network: the scenario code runs in-process against
Tether's adapter, and one end-to-end check runs compare.py for Tether alone. No timing asserts.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.durable.pg import PgServer

BENCH = Path(__file__).resolve().parents[2] / "bench"
PEERS = BENCH / "peers"


@pytest.fixture(scope="module")
def common() -> ModuleType:
    if str(PEERS) not in sys.path:
        sys.path.insert(0, str(PEERS))
    return importlib.import_module("_common")


@pytest.fixture(scope="module")
def adapter(common: ModuleType) -> ModuleType:
    return importlib.import_module("tether_adapter")


@pytest.fixture(scope="module")
def compare() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_compare", BENCH / "compare.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_fake_model_policy_counts_cycles_from_the_last_result(common: ModuleType) -> None:
    assert common.next_call(None, 3) == (0, 1)
    assert common.next_call(2, 3) == (2, 1)
    assert common.next_call(3, 3) == "done 3"
    assert common.next_call(None, 0) == "done 0"


def test_loop_scenario_runs_tether_and_reports_every_metric(common: ModuleType, adapter: ModuleType) -> None:
    result = common.run_scenario(adapter.ADAPTER, "loop", [3, 45], 1)
    assert result["framework"] == "tether"
    for size in ("3", "45"):
        metrics = result["sizes"][size]
        assert "error" not in metrics, metrics
        for key in ("per_cycle_ms", "cycle_median_ms", "cycle_min_ms", "cycle_max_ms", "first20_ms", "last20_ms"):
            assert metrics[key] > 0, key
        assert metrics["cycle_min_ms"] <= metrics["cycle_median_ms"] <= metrics["cycle_max_ms"]


def test_loop_scenario_rejects_a_run_that_skipped_tool_calls(common: ModuleType) -> None:
    def lying_case(cycles: int) -> Any:
        return lambda: f"done {cycles}"  # the right answer, but add() never ran

    with pytest.raises(RuntimeError, match="add calls"):
        common._run_loop(lying_case, 3)

    def overshooting_case(cycles: int) -> Any:
        def run() -> str:
            for i in range(cycles):
                common.add(i, 1)
            return f"done {cycles}0"  # contains "done 3" but is not it

        return run

    with pytest.raises(RuntimeError, match="final answer"):
        common._run_loop(overshooting_case, 3)


def test_loop_scenario_marks_a_size_the_framework_cannot_do(common: ModuleType, adapter: ModuleType) -> None:
    def capped(cycles: int) -> Any:
        if cycles > 10:
            raise RecursionError("maximum recursion depth exceeded")
        return adapter.loop_case(cycles)

    out = common.scenario_loop(capped, [5, 50], 1)
    assert "error" not in out["5"]
    assert out["50"] == {"error": "RecursionError: maximum recursion depth exceeded"}


def test_snapshot_scenario_round_trips_through_tether(common: ModuleType, adapter: ModuleType) -> None:
    result = common.run_scenario(adapter.ADAPTER, "snapshot", [10, 31], 1)
    for size in (10, 31):
        metrics = result["sizes"][str(size)]
        assert metrics["save_ms"] > 0 and metrics["load_ms"] > 0
        assert metrics["roundtrip_ms"] == pytest.approx(metrics["save_ms"] + metrics["load_ms"])
    document = adapter.snapshot_case(common.conversation(31)).save()
    assert result["sizes"]["31"]["bytes"] == len(document)
    assert len(json.loads(document)["data"]["messages"]) == 31


def test_snapshot_scenario_detects_a_lossy_restore(common: ModuleType, adapter: ModuleType) -> None:
    def lossy(turns: list[Any]) -> Any:
        built = adapter.snapshot_case(turns)
        return common.SnapshotCase(built.save, lambda document: built.load(document) - 1, built.api)

    with pytest.raises(RuntimeError, match="restored 9 messages"):
        common.scenario_snapshot(lossy, [10], 1)


def test_durable_scenario_persists_tether_runs(common: ModuleType, adapter: ModuleType) -> None:
    result = common.run_scenario(adapter.ADAPTER, "durable", [10, 44], 1)
    small, large = result["sizes"]["10"], result["sizes"]["44"]
    assert "error" not in small and "error" not in large, result
    assert (small["turns"], small["cycles"], small["messages"]) == (1, 4, 10)
    assert (large["turns"], large["cycles"], large["messages"]) == (2, 20, 44)
    for metrics in (small, large):
        assert metrics["written_bytes_per_message"] > 0
        assert metrics["disk_bytes_per_message"] > 0
        assert metrics["store_ms_per_cycle"] > 0 and metrics["plain_ms_per_cycle"] > 0


def test_durable_case_persists_the_conversation_for_a_fresh_agent(common: ModuleType, adapter: ModuleType, tmp_path: Path) -> None:
    import asyncio

    from tether.durable import SQLiteStore

    case = adapter.durable_case(2, str(tmp_path))
    for _ in range(2):
        assert asyncio.run(case.turn()) == "done 2"
    fresh = adapter.make_agent(2, store=SQLiteStore(tmp_path / "runs.db"))
    assert str(fresh("again", run_id="bench-run")) == "done 2"
    assert len(fresh.messages) == 3 * (2 * 2 + 2)  # the two stored turns came back from the file


def test_concurrent_scenario_runs_tether_agents(common: ModuleType, adapter: ModuleType) -> None:
    result = common.run_scenario(adapter.ADAPTER, "concurrent", [3, 7], 1)
    for size in ("3", "7"):
        metrics = result["sizes"][size]
        assert metrics["agents_per_s"] > 0 and metrics["wall_ms"] > 0
        assert metrics["peak_rss_mib"] >= metrics["baseline_rss_mib"] > 0


def test_durable_plan_matches_the_requested_sizes(common: ModuleType) -> None:
    assert common.durable_plan(10) == (1, 4)
    assert common.durable_plan(100) == (5, 10)
    assert common.durable_plan(1000) == (45, 10)


def samples_for_render() -> dict[str, Any]:
    return {
        "loop": {
            "tether": {
                "20": {"per_cycle_ms": [0.1, 0.12, 0.08], "cycle_median_ms": [0.05], "first20_ms": [0.05], "last20_ms": [0.05]},
                "2000": {"per_cycle_ms": [0.1], "cycle_median_ms": [0.06], "first20_ms": [0.05], "last20_ms": [0.055]},
            },
            "strands": {
                "20": {"per_cycle_ms": [1.0, 1.1, 0.9], "cycle_median_ms": [0.9]},
                "2000": {"error": "EventLoopException: maximum recursion depth exceeded"},
            },
        },
        "import": {"tether": {"-": {"import_ms": [60.0]}}, "strands": {"-": {"import_ms": [150.0]}}},
    }


def test_report_tables_show_medians_spreads_ratios_and_failures(compare: ModuleType) -> None:
    samples = samples_for_render()
    lines = compare.render_table(samples, "loop", ["tether", "strands"], ["20", "2000"])
    text = "\n".join(lines)
    assert "| 20 | strands | 1.00 (0.900-1.10) | 10.00x |" in text
    assert "| 20 | tether | 0.100 (0.080-0.120) | 1.00x |" in text
    assert "cannot: EventLoopException: maximum recursion depth exceeded" in text


def test_targets_are_judged_from_the_samples(compare: ModuleType) -> None:
    lines = compare.targets(samples_for_render(), ["tether", "strands"])
    loop_line = next(line for line in lines if "fastest peer at N=20" in line)
    assert "10.00x vs strands -> met" in loop_line
    flat_line = next(line for line in lines if "flat to N=2,000" in line)
    assert "1.20 and 1.10 -> met" in flat_line
    import_line = next(line for line in lines if "import tether" in line)
    assert "0.400 of it -> **missed**" in import_line


def test_command_line_rejects_unknown_names(compare: ModuleType) -> None:
    with pytest.raises(SystemExit):
        compare.parse(["--scenarios", "loop,warp"])
    with pytest.raises(SystemExit):
        compare.parse(["--frameworks", "autogen"])
    settings = compare.parse(["--quick", "--frameworks", "strands"])
    assert [fw.name for fw in settings.frameworks] == ["tether", "strands"] and settings.rounds == 1


def test_compare_runs_tether_end_to_end_in_fresh_processes(compare: ModuleType, tmp_path: Path) -> None:
    output = tmp_path / "results.md"
    report = compare.main(["--quick", "--frameworks", "tether", "--scenarios", "loop,import", "--output", str(output)])
    assert output.read_text() == report
    assert "| 2,000 | tether |" in report and "| tether |" in report.split("## import")[1]
    assert "failed:" not in report and "cannot:" not in report


def test_durable_pg_scenario_measures_tether_on_a_real_server(
    common: ModuleType, adapter: ModuleType, monkeypatch: pytest.MonkeyPatch, pg_server: PgServer
) -> None:
    server = pg_server
    monkeypatch.setenv("TETHER_BENCH_PG_HOST", str(server.root))
    monkeypatch.setenv("TETHER_BENCH_PG_PORT", str(server.port))
    monkeypatch.setenv("TETHER_BENCH_PG_USER", "postgres")
    monkeypatch.setattr(common, "PG_CONCURRENT", (3, 2))
    monkeypatch.setattr(common, "PG_FLOOR_COMMITS", 5)
    result = common.run_scenario(adapter.ADAPTER, "durable-pg", [4], 1)
    metrics = result["sizes"]["4"]
    assert metrics["durable_ms_per_cycle"] > 0 and metrics["plain_ms_per_cycle"] > 0
    assert metrics["wal_bytes_per_cycle"] > 0  # the server's own WAL position moved
    assert metrics["write_commits_per_cycle"] >= 1  # every cycle commits at least once
    assert metrics["floor_ms_per_commit"] > 0 and metrics["conversations_per_s"] > 0
    import psycopg

    with psycopg.connect(server.conninfo("postgres")) as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'bench_%'").fetchone()
    assert left == (0,)  # the scenario's database is dropped afterwards


def test_durable_pg_targets_are_judged(compare: ModuleType) -> None:
    figures = {"overhead_ms_per_cycle": [0.5], "wal_bytes_per_cycle": [2000.0], "floor_ms_per_commit": [0.3], "conversations_per_s": [70.0]}
    samples = {
        "durable-pg": {
            "tether": {"200": figures},
            "dbos": {"200": {"overhead_ms_per_cycle": [6.0], "conversations_per_s": [30.0]}},
            "langgraph": {"200": {"overhead_ms_per_cycle": [2.0]}},
        }
    }
    lines = "\n".join(compare.targets(samples, ["tether", "dbos", "langgraph"]))
    assert "1/5 of dbos's (N=200): 0.083 of it -> met" in lines
    assert "1/5 of langgraph's (N=200): 0.250 of it -> **missed**" in lines
    assert "floor measured in the same run: 1.67x -> met" in lines
    assert "WAL <= 2.5 KB per cycle: 2,000 B -> met" in lines
    assert "throughput: 2.33x -> met" in lines


def test_baseline_runs_tether_from_an_exported_revision(compare: ModuleType, tmp_path: Path) -> None:
    settings = compare.parse(["--quick", "--frameworks", "tether", "--baseline", "HEAD"])
    names = [fw.name for fw in settings.frameworks]
    assert names[0] == "tether" and names[1].startswith("tether@") and len(names) == 2
    baseline = settings.frameworks[1]
    compare._export_source(baseline.source, tmp_path, lambda message: None)
    env = compare.framework_env(baseline, tmp_path)
    assert (Path(env["PYTHONPATH"]) / "tether" / "__init__.py").is_file()
    assert compare.framework_env(settings.frameworks[0], tmp_path) == {}
    with pytest.raises(SystemExit):
        compare.parse(["--baseline", "no-such-revision-here"])


SERVE_BLOCK = "<!-- bench/serve.py -->\n## serve: SSE throughput\n\n| a | b |\n<!-- /bench/serve.py -->\n"


def report_of(compare: ModuleType, scenarios: str, frameworks: str, started: str) -> str:
    """A report as a run of ``scenarios`` would write it, from made-up figures (the table cells are ``-``
    but for ``loop``/``import``), started at ``started``."""
    settings = compare.parse(["--scenarios", scenarios, "--frameworks", frameworks])
    made_up = samples_for_render()
    samples = {scenario: made_up.get(scenario, {"tether": {}}) for scenario in settings.scenarios}  # as measure() would
    info = {
        fw.name: {"versions": {fw.name: "1.0"}, "notes": {"snapshot": f"{fw.name} API"}, "python": "3.11"} for fw in settings.frameworks
    }
    meta = {"started": started, "finished": "later", "machine": "M", "load_start": "1", "load_end": "2", "revision": "abc1234"}
    text: str = compare.render(samples, info, settings, meta)
    return text


def sections(compare: ModuleType, text: str) -> dict[str, str]:
    return {chunk.key: chunk.text for chunk in compare.split_report(text)}


def test_a_subset_run_keeps_the_other_sections_byte_for_byte(compare: ModuleType) -> None:
    old = report_of(compare, "loop,snapshot,durable,concurrent,import", "tether,strands", "2026-01-01 00:00:00 UTC") + "\n" + SERVE_BLOCK
    new = report_of(compare, "loop,durable-pg", "tether,dbos", "2026-01-02 00:00:00 UTC")
    spliced = compare.splice(old, new)
    before, after, fresh = sections(compare, old), sections(compare, spliced), sections(compare, new)
    for kept in ("snapshot", "durable", "concurrent", "import", "<!-- bench/serve.py -->"):
        assert after[kept] == before[kept], kept
        assert before[kept] in spliced
    assert after["loop"] == fresh["loop"] and after["durable-pg"] == fresh["durable-pg"]
    assert "| 20 | strands |" not in after["loop"] and "| 20 | dbos |" in after["loop"]
    assert "Run 2026-01-01 00:00:00 UTC" in after["snapshot"]  # a kept section still names its own run
    # Targets: this run's lines for loop, the old ones for the rest, in the order of the sections.
    tags = [line.split("`")[1] for line in after["Targets"].splitlines() if line.startswith("- `")]
    assert tags == ["loop", "loop", "snapshot", "durable", "durable", *["durable-pg"] * 5, "concurrent", "import"]
    assert "10.00x vs strands" in before["Targets"] and "10.00x vs strands" not in after["Targets"]  # dbos ran this time
    assert "1/5 of dbos's" in after["Targets"]
    # Versions and setup: both runs' blocks, each as its run wrote it (the kept sections cite the first).
    old_block = before["Versions and setup"].split("### ", 1)[1]
    assert "### " + old_block.rstrip("\n") + "\n" in after["Versions and setup"]
    assert after["Versions and setup"].rstrip("\n").endswith(fresh["Versions and setup"].split("### ", 1)[1].rstrip("\n"))
    assert "**strands**" in after["Versions and setup"] and "**dbos**" in after["Versions and setup"]
    assert spliced.startswith(new.split("## ", 1)[0])  # this run's preamble, which states no run


def test_a_full_run_replaces_everything_it_produced(compare: ModuleType) -> None:
    everything = ",".join(compare.SCENARIOS)
    old = report_of(compare, everything, "tether,strands", "2026-01-01 00:00:00 UTC") + "\n" + SERVE_BLOCK
    new = report_of(compare, everything, "tether", "2026-01-02 00:00:00 UTC")
    assert compare.splice(old, new) == new + "\n" + SERVE_BLOCK  # the old run's block went: no section names it
    assert compare.splice(new, new) == new


def test_a_heading_new_to_the_file_goes_where_a_full_report_has_it(compare: ModuleType) -> None:
    old = report_of(compare, "loop,durable,import", "tether", "2026-01-01 00:00:00 UTC") + "\n" + SERVE_BLOCK
    new = report_of(compare, "concurrent,durable-pg,snapshot", "tether", "2026-01-02 00:00:00 UTC")
    keys = [chunk.key for chunk in compare.split_report(compare.splice(old, new))]
    assert keys == [
        "",
        "Targets",
        "loop",
        "snapshot",
        "durable",
        "durable-pg",
        "concurrent",
        "import",
        "Versions and setup",
        "<!-- bench/serve.py -->",
    ]
    shuffled = report_of(compare, "import,loop", "tether", "2026-01-01 00:00:00 UTC")  # the file's own order stands
    keys = [chunk.key for chunk in compare.split_report(compare.splice(shuffled, new))]
    assert keys == ["", "Targets", "import", "loop", "snapshot", "durable-pg", "concurrent", "Versions and setup"]
    only_serve = compare.splice(SERVE_BLOCK, new)  # bench/serve.py wrote the file first: this run's sections follow
    assert [chunk.key for chunk in compare.split_report(only_serve)][:3] == ["", "<!-- bench/serve.py -->", "Targets"]
    no_versions = old.replace(sections(compare, old)["Versions and setup"], "")
    keys = [chunk.key for chunk in compare.split_report(compare.splice(no_versions, new))]
    assert keys[-2:] == ["Versions and setup", "<!-- bench/serve.py -->"]


def test_an_output_file_that_does_not_exist_yet_is_just_written(compare: ModuleType) -> None:
    new = report_of(compare, "loop,import", "tether", "2026-01-02 00:00:00 UTC")
    assert compare.splice("", new) == new


def test_targets_of_an_older_format_and_runs_no_section_names_are_dropped(compare: ModuleType) -> None:
    old = report_of(compare, "loop,import", "tether,strands", "2026-01-01 00:00:00 UTC")
    old = old.replace("- `import`: ", "- ")  # an import target line naming no scenario
    new = report_of(compare, "loop", "tether", "2026-01-02 00:00:00 UTC")
    after = sections(compare, compare.splice(old, new))
    assert "import tether <= 1/3" not in after["Targets"]  # which run it spoke for is unknown
    assert "### Run 2026-01-01 00:00:00 UTC" in after["Versions and setup"]  # the import section names it
    newer = report_of(compare, "loop,import", "tether", "2026-01-03 00:00:00 UTC")
    versions = sections(compare, compare.splice(compare.splice(old, new), newer))["Versions and setup"]
    assert [line for line in versions.splitlines() if line.startswith("### ")] == ["### Run 2026-01-03 00:00:00 UTC"]


def test_compare_splices_its_report_into_an_existing_output_file(compare: ModuleType, tmp_path: Path) -> None:
    output = tmp_path / "results.md"
    old = report_of(compare, "loop,snapshot,import", "tether,strands", "2026-01-01 00:00:00 UTC") + "\n" + SERVE_BLOCK
    output.write_text(old)
    report = compare.main(["--quick", "--frameworks", "tether", "--scenarios", "import", "--output", str(output)])
    before, after = sections(compare, old), sections(compare, output.read_text())
    for kept in ("loop", "snapshot", "<!-- bench/serve.py -->"):
        assert after[kept] == before[kept], kept
    assert after["import"] == sections(compare, report)["import"] != before["import"]
    assert "| tether |" in after["import"] and "| strands |" not in after["import"]
    assert "### Run 2026-01-01 00:00:00 UTC" in after["Versions and setup"]
