"""Packed heads (tether.durable.packing): patches are exact, and a store that keeps step heads as
deltas and large values as blobs gives back exactly the steps it was given.

The property tests compare against the representation of schema 2 (a whole head in every step
row): every step dict a durable session hands to ``store.prepare`` is recorded as JSON at that
moment, and ``history()`` / ``load_at()`` must return exactly those, for random runs.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether import Agent, ToolContext, tool
from tether._json import dumps_compact
from tether.durable import MemoryStore, RunStore, SQLiteStore
from tether.durable.codec import decode_step_at, is_zipped, unzip_step, zip_step
from tether.durable.codec.compress import STEP_DICTIONARY_V1
from tether.durable.packing import BLOB_MIN, KEYFRAME_EVERY, HeadPacker, apply, blob_id, checked_patch, diff
from tether.errors import StoreError
from tether.models import ScriptedModel
from tether.models.scripted import tool_calls

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=20,
)
json_objects = st.dictionaries(st.text(max_size=4), json_values, max_size=6)


@settings(max_examples=500, deadline=None)
@given(old=json_objects, new=json_objects)
def test_a_checked_patch_rebuilds_the_exact_text(old: dict[str, Any], new: dict[str, Any]) -> None:
    old_text, new_text = dumps_compact(old), dumps_compact(new)
    frozen = json.loads(old_text)
    patch = checked_patch(frozen, old_text, new, new_text)
    assert dumps_compact(frozen) == old_text  # the base is never changed
    if patch is not None:
        assert dumps_compact(apply(frozen, json.loads(dumps_compact(patch)))) == new_text


def test_values_equal_in_python_but_not_in_json_are_never_patched_away() -> None:
    for before, after in [
        ({"a": [1]}, {"a": [True]}),
        ({"a": 1}, {"a": 1.0}),
        ({"a": 0.0}, {"a": -0.0}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
    ]:
        patch = checked_patch(before, dumps_compact(before), after, dumps_compact(after))
        assert patch is None or dumps_compact(apply(before, patch)) == dumps_compact(after)
    assert diff({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "y": 3}}) == {"a": {"y": [3]}}  # nested, only the change
    assert diff({"a": 1, "b": 2}, {"a": 1}) == {"b": []}


def test_patches_that_do_not_fit_are_value_errors() -> None:
    for base, patch in [({}, {"a": []}), ({"a": 1}, {"a": [1, 2]}), ({"a": 1}, {"a": 5}), ([], {})]:
        with pytest.raises(ValueError):
            apply(base, patch)


def test_a_large_unchanged_value_is_one_blob_and_a_small_change_a_patch() -> None:
    packer = HeadPacker()
    state = {"big": "x" * 5000, "n": 0}
    first = packer.pack({"state": state, "rev": 1})
    assert len(first.blobs) == 1 and first.packed["state"] == {"$blob": first.blobs[0][0]}
    assert first.blobs[0][0] == blob_id(dumps_compact(state))
    again = packer.pack({"state": state, "rev": 2})
    assert again.blobs == [] and again.packed["state"] == first.packed["state"]
    state["n"] = 1
    changed = packer.pack({"state": state, "rev": 3})
    assert changed.blobs == [] and changed.packed["state"] == {"$blob": first.blobs[0][0], "$patch": {"n": [1]}}
    state["big"] = "y" * 5000  # most of the value changed: stored afresh
    rebased = packer.pack({"state": state, "rev": 4})
    assert len(rebased.blobs) == 1 and rebased.packed["state"] == {"$blob": rebased.blobs[0][0]}


def test_a_small_value_shaped_like_a_reference_is_stored_as_a_blob() -> None:
    lookalike = {"$blob": "sha256:00"}
    packed = HeadPacker().pack({"state": lookalike})
    assert packed.blobs and packed.packed["state"] == {"$blob": blob_id(dumps_compact(lookalike))}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_zip_step_is_a_fresh_compressor_s_deflate(text: str) -> None:
    """The primed compressor's copies deflate exactly as a compressor set up per row would."""
    packer = zlib.compressobj(6, zlib.DEFLATED, -11, 2, zlib.Z_DEFAULT_STRATEGY, STEP_DICTIONARY_V1)
    fresh = b"z1:" + packer.compress(text.encode("utf-8", "surrogatepass")) + packer.flush()
    assert zip_step(text) == (fresh if len(fresh) < len(text) else text)


def test_step_rows_compress_and_damaged_ones_are_refused() -> None:
    text = json.dumps({"step": 2, "position": "after_model", "cycle_index": 0, "created_at": "2026-01-01T00:00:00Z", "delta": {"rev": [2]}})
    zipped = zip_step(text)
    assert is_zipped(zipped) and len(zipped) < len(text) and unzip_step(zipped) == text
    assert zip_step("{}") == "{}"  # not shorter: kept as text
    for bad in [zipped[:-3], b"z1:" + b"\xff" * 20, b"z1:"]:
        with pytest.raises(StoreError, match="steps step 1"):
            decode_step_at("r", 1, lambda first, stop, bad=bad: [(1, bad)])


# -- stores give back exactly the steps they were given ---------------------------------------


def _recording(store: RunStore) -> list[dict[str, Any]]:
    """Record every step dict handed to ``store.prepare`` as JSON at that moment (the whole head:
    the representation step rows had before packing)."""
    recorded: list[dict[str, Any]] = []
    prepare = store.prepare

    def spy(run_id: str, head: dict[str, Any], messages: Any, results: Any, step: Any, packer: Any = None) -> Any:
        if step is not None:
            recorded.append(json.loads(json.dumps(step)))
        return prepare(run_id, head, messages, results, step, packer)

    store.prepare = spy  # type: ignore[method-assign]
    return recorded


@tool
def work(n: int, context: ToolContext) -> str:
    """Change the agent's state by ``n``: small values, a large value, or the large value a little.

    Args:
        n: Which change.
    """
    state = context.agent.state
    if n % 4 == 0:
        state.set("count", (state.get("count") or 0) + 1)
    elif n % 4 == 1:
        state.set("big", {"text": "b" * (BLOB_MIN * 2), "round": n})
    elif n % 4 == 2:
        big = state.get("big") or {"text": ""}
        big["round"] = n
        state.set("big", big)
    else:
        state.set("ratio", n / 7)
    return f"did {n}"


cycles = st.lists(st.lists(st.integers(0, 30), min_size=1, max_size=3), min_size=1, max_size=45)


def _check_run(store: RunStore, script: list[list[int]], turns: int, run_id: str = "r") -> None:
    recorded = _recording(store)
    agent = Agent(model=ScriptedModel(_model_script(script, turns), stateful=True), tools=[work], store=store)
    for turn in range(turns):
        agent(f"turn {turn}", run_id=run_id)
    history = store.history(run_id)
    assert [step.to_dict() for step in history] == recorded
    for step in history:
        at = store.load_at(run_id, step.step)
        assert json.loads(json.dumps(at.head)) == recorded[step.step - 1]["head"]
    for after in range(len(history) + 2):  # the steps after any step, rebuilt from the keyframe before them
        assert [step.to_dict() for step in store.history(run_id, after=after)] == recorded[after:]
    stored = store.load(run_id)
    assert stored is not None
    start, stop = int(stored.head["start_seq"]), int(stored.head["next_seq"])
    assert store.messages(run_id, start, stop) == stored.messages
    assert store.messages(run_id, 0, stop)[start:] == stored.messages and store.messages(run_id, stop, stop) == []


def _model_script(script: list[list[int]], turns: int) -> list[Any]:
    out: list[Any] = []
    per_turn = max(1, len(script) // turns)
    for turn in range(turns):
        for calls in script[turn * per_turn : (turn + 1) * per_turn] if turn < turns - 1 else script[turn * per_turn :]:
            out.append(tool_calls([("work", {"n": n}) for n in calls]))
        out.append(f"done {turn}")
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(script=cycles, turns=st.integers(1, 3))
def test_history_and_load_at_give_back_every_step_as_it_was_memory(script: list[list[int]], turns: int) -> None:
    _check_run(MemoryStore(), script, turns)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(script=cycles, turns=st.integers(1, 3))
def test_history_and_load_at_give_back_every_step_as_it_was_sqlite(
    tmp_path_factory: pytest.TempPathFactory, script: list[list[int]], turns: int
) -> None:
    store = SQLiteStore(tmp_path_factory.mktemp("packed") / "runs.db")
    try:
        _check_run(store, script, turns)
    finally:
        store.close()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(script=cycles, turns=st.integers(1, 2))
def test_history_and_load_at_give_back_every_step_as_it_was_postgres(pg_conninfo: str, script: list[list[int]], turns: int) -> None:
    from tether.durable.postgres import PostgresStore

    store = PostgresStore(pg_conninfo)
    try:
        _check_run(store, script, turns, run_id=f"r{len(store.list_runs())}")  # one database for every example
    finally:
        store.close()


def test_a_long_run_replays_at_most_a_keyframe_spacing_of_deltas(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    script = [[n % 4] for n in range(2 * KEYFRAME_EVERY)]
    _check_run(store, script, 1)
    import sqlite3

    with sqlite3.connect(store.path) as conn:
        bodies = [json.loads(unzip_step(b) if is_zipped(b) else b) for (b,) in conn.execute("SELECT body FROM steps ORDER BY k")]
    whole = [i + 1 for i, body in enumerate(bodies) if "head" in body]
    assert whole[0] == 1 and all(b - a <= KEYFRAME_EVERY for a, b in zip(whole, [*whole[1:], len(bodies) + 1], strict=True))
    assert sum("delta" in body for body in bodies) > len(bodies) // 2


# -- large values are stored once ---------------------------------------------------------------


@tool
def fetch(page: int) -> str:
    """Return a large page.

    Args:
        page: Which page.
    """
    return f"page {page} " + "p" * (3 * BLOB_MIN)


def _blob_count(store: RunStore) -> int:
    if isinstance(store, MemoryStore):
        return sum(len(rows.blobs) for rows in store._runs.values())
    if isinstance(store, SQLiteStore):
        import sqlite3

        with sqlite3.connect(store.path) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0])
    import psycopg

    with psycopg.connect(store.conninfo) as conn:  # type: ignore[attr-defined]
        return int(conn.execute("SELECT COUNT(*) FROM tether_blobs").fetchone()[0])  # type: ignore[index]


def test_large_tool_results_are_one_blob_each_and_read_back_whole(store: RunStore) -> None:
    script = [tool_calls([("fetch", {"page": 1}), ("fetch", {"page": 2})]), "done"]
    agent = Agent(model=ScriptedModel(script), tools=[fetch], store=store)
    agent("read", run_id="r")
    assert _blob_count(store) == 3  # the first result's row and its message row share one blob; the manifest
    loaded = store.load("r")
    assert loaded is not None and loaded.messages == agent.messages
    results = [block["toolResult"] for block in loaded.messages[2]["content"]]
    assert [r["content"][0]["text"][:7] for r in results] == ["page 1 ", "page 2 "]
    for step in store.history("r"):
        at = store.load_at("r", step.step)
        assert at.messages == agent.messages[: step.message_count]
    resumed = Agent(model=ScriptedModel(["again"]), tools=[fetch], store=store)
    assert str(resumed("more", run_id="r")) == "again" and resumed.messages[:4] == agent.messages


def test_a_state_set_once_is_stored_once(store: RunStore) -> None:
    big = {"doc": "d" * (4 * BLOB_MIN)}
    script = [tool_calls([("work", {"n": 0})]) for _ in range(6)] + ["done"]
    Agent(model=ScriptedModel(script), tools=[work], store=store, state={"big": big})("go", run_id="r")
    assert _blob_count(store) == 2  # the state's value and the manifest
    assert all(step.head["state"]["big"] == big for step in store.history("r"))


def test_blobs_are_verified_sealed_and_bound_to_their_run(tmp_path: Path) -> None:
    import sqlite3

    from tether.durable import AESGCMCipher

    plain = SQLiteStore(tmp_path / "plain.db")
    Agent(model=ScriptedModel([tool_calls([("fetch", {"page": 1})]), "done"]), tools=[fetch], store=plain)("go", run_id="r")
    with sqlite3.connect(plain.path) as conn:
        ident = conn.execute("SELECT id FROM blobs WHERE body LIKE '%page 1%'").fetchone()[0]
        assert ident.startswith("sha256:")
        conn.execute("UPDATE blobs SET body = replace(body, 'page 1', 'page 9') WHERE id = ?", (ident,))
    with pytest.raises(StoreError, match=r"run 'r': blobs 'sha256:[0-9a-f]+': its text does not match its digest"):
        plain.load("r")

    cipher = AESGCMCipher({"k": b"k" * 32}, "k")
    sealed = SQLiteStore(tmp_path / "sealed.db", cipher=cipher)
    Agent(
        model=ScriptedModel([tool_calls([("fetch", {"page": 1})]), "done"]), tools=[fetch], store=sealed, state={"big": "s" * 4 * BLOB_MIN}
    )("go", run_id="r")
    assert b"pppppppp" not in (tmp_path / "sealed.db").read_bytes() + (tmp_path / "sealed.db-wal").read_bytes()
    loaded = sealed.load("r")
    assert loaded is not None and loaded.head["state"]["big"] == "s" * 4 * BLOB_MIN
    with sqlite3.connect(sealed.path) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM blobs")]
        assert len(ids) == 3 and all(i.startswith("hmac:") for i in ids)  # the state, the result, the manifest
        bodies = [row[0] for row in conn.execute("SELECT body FROM blobs ORDER BY id")]
        for ident, body in zip(sorted(ids), [*bodies[1:], bodies[0]], strict=True):  # each sealed row moved to another's id
            conn.execute("UPDATE blobs SET body = ? WHERE id = ?", (body, ident))
    with pytest.raises(StoreError, match=r"run 'r': blobs 'hmac:[0-9a-f]+' failed authentication"):
        sealed.load("r")


def test_size_breaks_a_run_down_by_kind_of_row(store: RunStore) -> None:
    from tether.errors import RunNotFoundError

    script = [tool_calls([("fetch", {"page": 1}), ("fetch", {"page": 2})]), "done"]
    Agent(model=ScriptedModel(script), tools=[fetch], store=store, state={"big": "s" * 4 * BLOB_MIN})("read", run_id="big")
    Agent(model=ScriptedModel(["hi"]), store=store)("hello", run_id="small")
    size = store.size("big")
    assert list(size.tables) == ["head", "messages", "results", "steps", "blobs"]
    assert size.tables["head"][0] == 1 and size.tables["messages"][0] == 4 and size.tables["results"][0] == 1
    assert size.tables["steps"][0] == len(store.history("big")) and size.tables["blobs"][0] == 4  # the state, two results, the manifest
    assert size.tables["blobs"][1] > 4 * BLOB_MIN + 6 * BLOB_MIN and size.total == sum(b for _, b in size.tables.values())
    assert [s.run_id for s in store.run_sizes()] == ["big", "small"]
    assert store.run_sizes()[0] == size
    with pytest.raises(RunNotFoundError):
        store.size("nope")


def test_deleting_a_run_removes_its_rows_and_blobs_and_only_its_own(store: RunStore) -> None:
    from tether.errors import RunLockedError, RunNotFoundError

    shared = {"big": "s" * 4 * BLOB_MIN}  # the same value in two runs: each run has its own blob
    for run_id in ("a", "b"):
        Agent(model=ScriptedModel([tool_calls([("fetch", {"page": 1})]), "done"]), tools=[fetch], store=store, state=shared)(
            "go", run_id=run_id
        )
    assert _blob_count(store) == 6  # each run's state, result and manifest
    with store.lease("a"), pytest.raises(RunLockedError):
        store.delete_run("a")  # a live owner: refused, nothing deleted
    assert store.load("a") is not None
    store.delete_run("a")
    assert store.load("a") is None and store.head("a") is None and _blob_count(store) == 3
    assert [run.run_id for run in store.list_runs()] == ["b"]
    loaded = store.load("b")
    assert loaded is not None and loaded.head["state"] == shared and len(store.history("b")) > 1
    with pytest.raises(RunNotFoundError):
        store.delete_run("a")
    Agent(model=ScriptedModel(["again"]), store=store)("new", run_id="a")  # the id can be used again
    assert [m["role"] for m in (store.load("a") or pytest.fail()).messages] == ["user", "assistant"]


def test_head_delta_patches_the_last_whole_head_until_it_outgrows_the_head() -> None:
    from tether.durable.packing import HEAD_DELTA_FRACTION

    packer = HeadPacker()
    head: dict[str, Any] = {"rev": 1, **{f"k{i}": "x" * 20 for i in range(10)}}
    assert packer.head_delta(packer.pack(head), 1) is None  # the first head is written whole: the base
    base = packer.pack(head)
    bases = []
    for rev in range(2, 30):
        changed = range(10) if rev == 20 else range(1)  # at 20 every field changes: the delta outgrows the head
        head = {**head, "rev": rev, **{f"k{i}": f"{rev}-" + "y" * 20 for i in changed}}
        packed = packer.pack(head)
        found = packer.head_delta(packed, rev)
        if found is None:  # written whole: the next deltas patch this one
            base, bases = packed, [*bases, rev]
            continue
        text, base_rev = found
        assert base_rev == base.packed["rev"] and len(text) * HEAD_DELTA_FRACTION <= len(packed.text)
        assert apply(base.packed, json.loads(text)) == packed.packed  # base + delta is the head, exactly
    assert bases == [20]


@settings(max_examples=300, deadline=None)
@given(heads=st.lists(json_objects, min_size=2, max_size=5))
def test_head_and_step_deltas_made_from_member_texts_rebuild_each_head_exactly(heads: list[dict[str, Any]]) -> None:
    # Members are compared by text and patched one by one; the patched head must encode to the
    # head's text exactly, whatever changed (order, types equal in Python but not in JSON, keys).
    from tether._json import join_members, member_texts
    from tether.durable.packing import predicted

    for head in heads:
        assert join_members(member_texts(head)) == dumps_compact(head)
    packer = HeadPacker()
    base: dict[str, Any] | None = None
    previous: dict[str, Any] | None = None
    for rev, head in enumerate(heads, 1):
        packed = packer.pack(head)
        assert packed.text == dumps_compact(packed.packed)
        found = packer.head_delta(packed, rev)
        if found is None:
            base = json.loads(packed.text)
        else:
            assert base is not None
            assert dumps_compact(apply(base, json.loads(found[0]))) == packed.text
            assert found[0] == dumps_compact(json.loads(found[0]))
        kind, value, text = packer.step_record(packed, rev, "now")
        assert text == dumps_compact(value)  # a step row splices this text in for the value
        if kind == "delta":
            assert previous is not None
            assert dumps_compact(apply(predicted(previous, rev, "now"), json.loads(dumps_compact(value)))) == packed.text
        previous = json.loads(packed.text)


def test_a_head_delta_patches_only_the_members_and_fields_that_changed() -> None:
    packer = HeadPacker()
    head: dict[str, Any] = {"rev": 1, "cursor": {"phase": "model", "cycle": 1, "started": []}, "state": {"k": "v" * 40}, "n": 1}
    assert packer.head_delta(packer.pack(head), 1) is None
    head = {**head, "rev": 2, "cursor": {**head["cursor"], "phase": "tools"}, "n": 1.0}
    found = packer.head_delta(packer.pack(head), 2)
    assert found is not None and json.loads(found[0]) == {"rev": [2], "cursor": {"phase": ["tools"]}, "n": [1.0]}
    assert found[0] == '{"rev":[2],"cursor":{"phase":["tools"]},"n":[1.0]}'  # 1.0 stays 1.0: set whole, never patched away
    reordered = {"n": 1.0, **{k: v for k, v in head.items() if k != "n"}, "rev": 3}
    assert packer.head_delta(packer.pack(reordered), 3) is None  # an order a patch cannot keep: written whole


def test_a_head_delta_that_does_not_fit_its_base_is_a_damaged_store() -> None:
    from tether.durable.codec import merge_head_delta

    assert json.loads(merge_head_delta("r", '{"rev":1,"a":{"b":1}}', '{"rev":[2],"a":{"b":[]}}')) == {"rev": 2, "a": {}}
    with pytest.raises(StoreError, match=r"run 'r': head delta: it does not fit"):
        merge_head_delta("r", '{"rev":1}', '{"gone":[]}')
    with pytest.raises(StoreError, match=r"run 'r': head delta: the row is corrupt"):
        merge_head_delta("r", '{"rev":1}', '{"rev":')


def test_the_manifest_is_one_blob_written_once() -> None:
    """The run's manifest is the same at every save point of a session: each head refers to
    one blob, whose row only the first write carries (inline it made every head rewrite a few
    hundred characters longer)."""
    manifest = {"version": 1, "tools": {"lookup": {"schema": "sha256:" + "0" * 64, "effect": "idempotent"}}, "digest": "sha256:" + "1" * 64}
    packer = HeadPacker()
    first = packer.pack({"rev": 1, "manifest": manifest, "state": {}})
    second = packer.pack({"rev": 2, "manifest": dict(manifest), "state": {}})
    ident = blob_id(dumps_compact(manifest))
    assert first.blobs == [(ident, dumps_compact(manifest))] and second.blobs == []
    assert first.packed["manifest"] == second.packed["manifest"] == {"$blob": ident}
    assert len(second.text) < len(dumps_compact(manifest))
    changed = packer.pack({"rev": 3, "manifest": {**manifest, "version": 2}, "state": {}})  # a migrated run's new manifest
    assert len(changed.blobs) == 1 and changed.packed["manifest"] != first.packed["manifest"]


def test_a_loaded_run_has_its_manifest_whole(store: RunStore) -> None:
    @tool
    def note(text: str) -> str:
        """Note a short text."""
        return text

    agent = Agent(model=ScriptedModel([tool_calls([("note", {"text": "hi"})]), "done"]), tools=[note], store=store)
    agent("go", run_id="m")
    loaded = store.load("m")
    assert loaded is not None and loaded.head["manifest"]["tools"].keys() == {"note"}
    assert store.size("m").tables["blobs"][0] == 1  # the manifest, stored once
