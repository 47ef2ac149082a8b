"""The work queue gives controller-runtime semantics: dedupe, delay, one worker per key."""

from __future__ import annotations

import asyncio

from tau.controller.workqueue import WorkQueue, worker


def test_duplicate_adds_collapse_and_the_earliest_due_time_wins():
    async def scenario():
        queue = WorkQueue()
        queue.add("a", delay=60)
        queue.add("a", delay=0)
        queue.add("a", delay=30)
        assert queue.pending() == 1
        return await asyncio.wait_for(queue.get(), 1)

    assert asyncio.run(scenario()) == "a"


def test_a_key_is_not_handed_out_twice_while_active():
    async def scenario():
        queue = WorkQueue()
        queue.add("a")
        first = await queue.get()
        queue.add("a")
        queue.add("b")
        second = await asyncio.wait_for(queue.get(), 1)
        queue.done(first, None, failed=False)
        third = await asyncio.wait_for(queue.get(), 1)
        return first, second, third

    assert asyncio.run(scenario()) == ("a", "b", "a")


def test_worker_requeues_after_the_returned_delay_and_backs_off_on_errors():
    calls = []

    def handler(name):
        calls.append(name)
        if name == "broken":
            raise RuntimeError("boom")
        return 0.0 if len([c for c in calls if c == name]) < 3 else None

    async def scenario():
        queue = WorkQueue()
        queue.add(("ws", "ok"))
        queue.add(("ws", "broken"))
        task = asyncio.create_task(worker(queue, {"ws": handler}))
        await asyncio.sleep(0.3)
        task.cancel()
        return queue

    queue = asyncio.run(scenario())
    assert calls.count("ok") == 3
    assert queue.stats["ws_errors"] >= 1
    assert calls.count("broken") <= 2  # 1 s backoff after the first failure
