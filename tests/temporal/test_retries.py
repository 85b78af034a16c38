"""The agent's RetryPolicy on Temporal: activity retry policies and throttled-attempt delays."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client

from tether import RetryPolicy
from tether.temporal import BlobStore, TetherClient
from tether.temporal.retries import activity_retry_policy, retry_settings, throttle_delay

from .fixtures import activity_starts, history_events, running_worker


def test_the_policy_maps_onto_the_activity_retry_policy() -> None:
    policy = RetryPolicy(max_attempts=7, initial_delay=0.25, max_delay=12.0, multiplier=3.0, jitter=0.1)
    mapped = activity_retry_policy(retry_settings(policy))
    assert mapped.initial_interval == timedelta(seconds=0.25)
    assert mapped.backoff_coefficient == 3.0
    assert mapped.maximum_interval == timedelta(seconds=12.0)
    assert mapped.maximum_attempts == 7
    assert activity_retry_policy(retry_settings(policy), attempts=1).maximum_attempts == 1  # non-idempotent tools


def test_a_zero_delay_policy_stays_a_valid_temporal_policy() -> None:
    mapped = activity_retry_policy(retry_settings(RetryPolicy(initial_delay=0.0, max_delay=0.0)))
    assert mapped.initial_interval > timedelta(0)  # zero would mean "the server default" (1 s)
    assert mapped.maximum_interval is not None and mapped.maximum_interval >= mapped.initial_interval


def test_missing_settings_fall_back_to_the_default_policy() -> None:
    assert activity_retry_policy(None) == activity_retry_policy(retry_settings(RetryPolicy()))


def test_throttle_delays_are_the_local_delays_with_jitter_and_retry_after() -> None:
    exact = RetryPolicy(initial_delay=1.0, max_delay=5.0, multiplier=2.0, jitter=0.0)
    assert [throttle_delay(exact, attempt, None).total_seconds() for attempt in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]
    assert throttle_delay(exact, 1, 3.0) == timedelta(seconds=3.0)  # a longer retry_after wins ...
    assert throttle_delay(exact, 1, 60.0) == timedelta(seconds=5.0)  # ... capped by max_delay
    jittered = RetryPolicy(initial_delay=1.0, max_delay=5.0, multiplier=2.0, jitter=0.5)
    random.seed(7)
    draws = {throttle_delay(jittered, 2, None).total_seconds() for _ in range(50)}
    assert len(draws) > 1 and all(1.0 <= d <= 2.0 for d in draws)  # base 2 s reduced by up to half


async def test_attempts_on_the_server_follow_the_agent_policy(client: Client, blobs: BlobStore, task_queue: str, tmp_path: Path) -> None:
    # The model is throttled (retry_after 0.45 s) on attempts 1 and 2. The agent's policy:
    # 4 attempts, 0.2 s doubling to at most 0.5 s, no jitter; so attempt 2 must wait
    # max(0.4, 0.45) = 0.45 s, which the final attempt's last failure records.
    log = tmp_path / "side.log"
    tc = TetherClient(client, blobs, task_queue)
    async with running_worker(client, task_queue, blobs):
        result = await tc.execute("throttled", "Go.", run_id="throttled-1", config={"log": str(log), "retry_after": 0.45})
    assert result.stop_reason == "end_turn" and result.text == "through"
    assert log.read_text().splitlines() == ["attempt 1", "attempt 2", "attempt 3", "model 0"]
    events = await history_events(client, "throttled-1")
    scheduled = [
        e.activity_task_scheduled_event_attributes
        for e in events
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name == "tether.call_model"
    ]
    policy = scheduled[0].retry_policy
    assert policy.initial_interval.ToTimedelta() == timedelta(seconds=0.2)
    assert policy.backoff_coefficient == 2.0
    assert policy.maximum_interval.ToTimedelta() == timedelta(seconds=0.5)
    assert policy.maximum_attempts == 4
    (start,) = activity_starts(events, "tether.call_model")
    assert start.attempt == 3
    failure = start.last_failure.application_failure_info
    assert failure.type == "ModelThrottledError"
    assert failure.next_retry_delay.ToTimedelta() == timedelta(seconds=0.45)
