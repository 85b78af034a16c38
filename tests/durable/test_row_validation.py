"""Every read path is total: a damaged head, message, result or step row is a StoreError that
names the run, the table and the position, never a KeyError, a TypeError or a RecursionError
from deeper in; ``list_runs`` lists a run whose head is damaged as ``corrupt`` and the others
as usual.

The fuzz test mutates the rows of a real run (keys dropped, types changed, values nested deep,
text truncated) behind the store's back and reads the run every way a store can.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from tether.durable import AESGCMCipher, RunStore
from tether.durable.codec import MAX_ROW_DEPTH, decode_head
from tether.durable.history import Timeline, summary_of
from tether.durable.session import run_state_of
from tether.errors import StoreError

from .._json_paths import json_paths
from .backends import Backend, backend
from .helpers import Crash, Plan, make_agent
from .helpers import calls_row as calls
from .helpers import head_row as head
from .helpers import user_row as msg

__all__ = ["backend"]

BOMB = "[" * 100_000 + "]" * 100_000
"""A 100,000-deep nested array: 200 kB of valid JSON that ``json.loads`` cannot parse."""


def result(ident: str, content: Any) -> Any:
    return {"toolUseId": ident, "status": "success", "content": content}


def crashed_run(store: RunStore) -> None:
    """Run ``r`` crashed in call ``b`` of its two-call cycle: messages, a result row, 4 steps."""
    with pytest.raises(Crash):
        make_agent(store, Plan(tool_after_effect=2))("go", run_id="r")
    make_agent(store, Plan())("go", run_id="healthy")


# -- the fuzz test ---------------------------------------------------------------------------

SCALARS: list[Any] = [5, -1, 0, 2**70, 1.5, "x", "", None, True, False, [], {}, [1, "a"], {"k": "v"}]


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """A damaged copy of one row's text, and what was done to it."""
    kind = rng.choice(["truncate", "bomb", "garbage", "drop", "drop", "retype", "retype", "retype", "nest", "add"])
    if kind == "truncate":
        cut = rng.randrange(len(text))
        return text[:cut], f"truncated at {cut}"
    if kind == "bomb":
        return BOMB, "a 100,000-deep array"
    if kind == "garbage":
        return rng.choice(["", "null", "5", '"text"', "[]", "{", "{}", '{"enc": "aesgcm", "ct": 1}', "NaN"]), "garbage"
    value = json.loads(text)
    paths = json_paths(value)
    path = rng.choice(paths)
    if kind == "drop":
        droppable = [p for p in paths if p and isinstance(get(value, p[:-1]), dict)]
        if not droppable:
            return json.dumps([value]), "wrapped in a list"
        path = rng.choice(droppable)
        del get(value, path[:-1])[path[-1]]
        return json.dumps(value), f"dropped {path}"
    if kind == "retype":
        replacement = copy.deepcopy(rng.choice(SCALARS))
        what = f"set {path} to {replacement!r}"
    elif kind == "nest":
        depth = rng.choice([3, 300, MAX_ROW_DEPTH + 10, 2000])
        marker = "\0nest\0"  # json.dumps cannot write 2000 levels: nest the text instead
        if path:
            get(value, path[:-1])[path[-1]] = marker
        text = json.dumps(value if path else marker)
        return text.replace(json.dumps(marker), "[" * depth + "]" * depth), f"nested {path} {depth} deep"
    else:
        target = get(value, path)
        if not isinstance(target, dict):
            return json.dumps({"extra": value}), "wrapped in an object"
        target[rng.choice(["extra", "rev", "phase", "content", "toolUseId", "step"])] = copy.deepcopy(rng.choice(SCALARS))
        return json.dumps(value), f"added a key at {path}"
    if not path:
        return json.dumps(replacement), what
    get(value, path[:-1])[path[-1]] = replacement
    return json.dumps(value), what


def get(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def read_everything(store: RunStore, steps: list[int]) -> bool:
    """Every read path of a store on run ``r``; only StoreError may come out of any of them.

    Returns whether the run still loaded (the damage left it valid).
    """
    summaries = {run.run_id: run for run in store.list_runs()}  # never raises, whatever the heads hold
    assert summaries["healthy"].status == "finished"
    assert summaries["r"].status in ("running", "stalled", "corrupt")  # running with no live owner is stalled
    reads: list[Callable[[], Any]] = [lambda: store.head("r"), lambda: store.history("r")]
    reads += [lambda n=n: store.load_at("r", n) for n in steps]  # type: ignore[misc]
    for read in reads:
        try:
            read()
        except StoreError:
            pass
    try:
        loaded = store.load("r")
    except StoreError:
        return False
    assert loaded is not None
    run = run_state_of(loaded)  # a loaded head rebuilds the run...
    summary_of("r", loaded.head)  # ...and summarizes
    Timeline(loaded.head, run.metrics)
    return True


ROWS = [("head", None), ("messages", 0), ("messages", 3), ("results", (1, "a")), ("steps", 1), ("steps", 4)]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_fuzzed_rows_raise_only_store_errors(kind: str, tmp_path: Any, request: pytest.FixtureRequest) -> None:
    rng = random.Random(20261114)
    made = Backend(kind, tmp_path, request)
    try:
        store = made.make()
        crashed_run(store)
        steps = [s.step for s in store.history("r")]
        originals = {(table, key): made.raw_get(table, "r", key) for table, key in ROWS}
        outcomes = {True: 0, False: 0}
        rounds = 500 if kind == "sqlite" else 80
        for _ in range(rounds):
            table, key = rng.choice(ROWS)
            damaged, what = mutate(originals[table, key], rng)
            made.raw_set(table, "r", key, damaged)
            try:
                outcomes[read_everything(store, steps)] += 1
            except Exception as exc:
                pytest.fail(f"{table} {key}: {what}: {type(exc).__name__}: {exc!s:.300}")
            finally:
                made.raw_set(table, "r", key, originals[table, key])
        assert outcomes[False] > rounds // 2 and outcomes[True] > rounds // 20, outcomes  # both kinds of damage were tried
        assert store.load("r") is not None
    finally:
        made.close()


# -- specific rows ---------------------------------------------------------------------------


def test_a_100000_deep_row_is_a_store_error_everywhere(backend: Backend) -> None:
    store = backend.make()
    crashed_run(store)
    for table, key, match in [
        ("head", None, r"run 'r': head: the row is corrupt or truncated \(.*nested"),
        ("messages", 2, r"run 'r': messages seq 2: the row is corrupt or truncated \(.*nested"),
        ("results", (1, "a"), r"run 'r': results cycle 1 toolUseId 'a': the row is corrupt"),
        ("steps", 2, r"run 'r': steps step 2: the row is corrupt"),
    ]:
        original = backend.raw_get(table, "r", key)
        backend.raw_set(table, "r", key, BOMB)
        read = store.history if table == "steps" else store.load
        with pytest.raises(StoreError, match=match):
            read("r")
        if table == "head":
            summary = {run.run_id: run for run in store.list_runs()}["r"]
            assert summary.status == "corrupt" and "the store is damaged" in (summary.problem or "")
        backend.raw_set(table, "r", key, original)
    assert store.load("r") is not None


def test_a_deep_row_inside_a_sealed_envelope_is_a_store_error(backend: Backend) -> None:
    cipher = AESGCMCipher({"k1": b"\x01" * 32}, current="k1")
    store = backend.make(cipher=cipher)
    store.write("r", head(1), [msg("hi")], {})
    from tether.durable.crypto import RowPlace

    bomb = json.dumps({**cipher.seal(BOMB, RowPlace("messages", "r", 0))})
    backend.raw_set("messages", "r", 0, bomb)
    with pytest.raises(StoreError, match=r"run 'r': messages seq 0: the row decrypted is corrupt or truncated"):
        store.load("r")


def test_a_tool_result_whose_content_is_5_is_refused(backend: Backend) -> None:
    store = backend.make()
    store.write("r", head(2, phase="tools"), [msg("q"), calls("t1")], {"t1": result("t1", [{"text": "fine"}])})
    backend.raw_set("results", "r", (0, "t1"), json.dumps(result("t1", 5)))
    with pytest.raises(StoreError, match=r"run 'r': results cycle 0 toolUseId 't1': result.content: must be a list; the store is damaged"):
        store.load("r")


def test_a_foreign_result_row_in_the_open_cycle_is_refused(backend: Backend) -> None:
    store = backend.make()
    store.write("r", head(2, phase="tools"), [msg("q"), calls("t1", "t2")], {"t1": result("t1", [{"text": "one"}])})
    backend.raw_set("results", "r", (0, "zz"), json.dumps(result("zz", [{"text": "not asked for"}])))
    with pytest.raises(StoreError, match=r"run 'r': results cycle 0 toolUseId 'zz': the result answers no tool call of the open cycle"):
        store.load("r")


def test_a_step_that_records_a_result_without_a_row_is_refused(backend: Backend) -> None:
    store = backend.make()
    tools = head(2, phase="tools")
    step = {"step": 1, "position": "resumed", "cycle_index": 0, "seq": 2, "message_count": 2, "created_at": "t", "results": ["t1"]}
    store.write("r", tools, [msg("q"), calls("t1")], {}, step={**step, "head": tools})
    with pytest.raises(StoreError, match=r"run 'r': steps step 1: it records tool results \['t1'\] that have no row"):
        store.load_at("r", 1)


def test_one_damaged_head_does_not_hide_the_other_runs(backend: Backend) -> None:
    store = backend.make()
    crashed_run(store)
    backend.raw_set("head", "r", None, '{"cursor": {"cycle_index": "x"}, "next_seq": "a", "start_seq": 0, "metrics": 3}')
    runs = {run.run_id: run for run in store.list_runs()}
    assert runs["healthy"].status == "finished" and runs["healthy"].problem is None
    assert runs["r"].status == "corrupt"
    assert (runs["r"].problem or "").startswith("run 'r': head: head.rev: must be a non-negative integer")


def test_rows_nested_deeper_than_the_bound_are_refused_when_written(backend: Backend) -> None:
    store = backend.make()
    deep: Any = "bottom"
    for _ in range(MAX_ROW_DEPTH - 10):
        deep = [deep]
    ok = {**head(1), "state": {"deep": deep}}
    store.write("r", ok, [msg("a")], {})
    loaded = store.load("r")
    assert loaded is not None and loaded.head["state"] == {"deep": deep}
    too_deep = {**head(2, rev=2), "state": {"deep": [[[[[[[[[[[[deep]]]]]]]]]]]]}}
    with pytest.raises(StoreError, match=rf"run 'r': cannot store head: it nests arrays and objects more than {MAX_ROW_DEPTH} levels"):
        store.write("r", too_deep, [msg("b")], {})
    assert store.load("r") is not None


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda h: h.pop("metrics"), r"head\.metrics: is missing"),
        (lambda h: h.update(next_seq=-1), r"head\.next_seq: must be a non-negative integer"),
        (lambda h: h.update(start_seq=5), r"head\.start_seq: \(5\) is after next_seq \(1\)"),
        (lambda h: h["cursor"].update(phase="flying"), r"head\.cursor\.phase: must be one of model, tools, idle"),
        (lambda h: h.update(metrics={"usage": {"total_tokens": "many"}}), r"head\.metrics\.usage\.total_tokens must be a non-negative"),
        (lambda h: h.update(system_prompt="be nice"), r"head\.system_prompt must be a list of system content blocks"),
        (lambda h: h.update(status="sleeping"), r"head\.status: must be one of running"),
        (lambda h: h.update(created_at=5), r"head\.created_at: must be a timestamp string"),
        (lambda h: h.update(interrupt_state={"interrupts": {"i": {"id": "j", "name": "n"}}}), r"interrupts\.i\.id: must be the"),
        (lambda h: h.update(state=[1]), r"head\.state: must be an object"),
    ],
)
def test_bad_heads_name_the_field(change: Callable[[dict[str, Any]], Any], match: str) -> None:
    bad = head(1)
    change(bad)
    with pytest.raises(StoreError, match=r"run 'r': head: .*" + match):
        decode_head("r", json.dumps(bad))


def test_summary_of_raises_only_store_errors() -> None:
    with pytest.raises(StoreError, match=r"run 'x': head: cannot summarize it"):
        summary_of("x", {"metrics": 3})
