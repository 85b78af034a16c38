"""Nested run ids (:mod:`tether.durable.ids`): deterministic, valid, distinct for distinct keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tether.multiagent
import tether.multiagent.nesting
from tether.durable.adoption import adopt_child
from tether.durable.ids import child_run_id
from tether.durable.store import RUN_ID_PATTERN
from tether.errors import StoreError


def test_a_plain_key_reads_as_parent_dot_key() -> None:
    assert child_run_id("run-1", "tooluse_abc") == "run-1.tooluse_abc"
    assert child_run_id("run-1", "tooluse_abc") == child_run_id("run-1", "tooluse_abc")


def test_keys_that_would_be_ambiguous_or_unsafe_get_a_digest() -> None:
    dotted = child_run_id("run-1", "node.2")
    assert dotted.startswith("run-1.node_2-") and RUN_ID_PATTERN.fullmatch(dotted)
    assert child_run_id("run-1", "a/b") != child_run_id("run-1", "a_b")


def test_bad_parents_and_keys_are_refused() -> None:
    with pytest.raises(StoreError, match="invalid"):
        child_run_id("no spaces", "k")
    with pytest.raises(TypeError):
        child_run_id("p", "")


ids = st.from_regex(r"[A-Za-z0-9._:-]{1,128}", fullmatch=True).filter(lambda s: s not in (".", ".."))


@given(ids, st.text(min_size=1, max_size=200), st.text(min_size=1, max_size=200))
def test_always_valid_and_distinct(parent: str, a: str, b: str) -> None:
    x, y = child_run_id(parent, a), child_run_id(parent, b)
    assert RUN_ID_PATTERN.fullmatch(x) and RUN_ID_PATTERN.fullmatch(y)
    assert (x == y) == (a == b)


def test_the_multiagent_paths_still_name_the_same_functions() -> None:
    assert tether.multiagent.child_run_id is child_run_id
    assert tether.multiagent.nesting.child_run_id is child_run_id
    assert tether.multiagent.nesting.adopt_child is adopt_child
