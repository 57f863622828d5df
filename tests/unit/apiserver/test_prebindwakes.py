"""A binding cycle parked on VolumeBinding's PreBind write resumes when the webhook
answers, not at a later poll (``scheduler.bindingcycle``, ``runtime.PreBindWritePendingError``).

Upstream ``volume_binding.go`` PreBind calls ``BindPodVolumes``
(``volumebinding/binder.go``): ``bindAPIUpdate`` blocks the binding goroutine in its API
call, which returns as soon as the admission webhook answers; then
``wait.PollUntilContextTimeout(ctx, time.Second, bindTimeout, false, checkBindings)``
checks the bindings every second, the first check one second after the writes. So the
answered write ends its wait at once, while the bindings' progress is polled (there is
no event wake-up upstream to copy). Time is a ``ManualClock``: the test never sleeps on
it and shows the resumption happens at the very instant of the answer.
"""

from __future__ import annotations

import asyncio

from kubeprio.scheduler.bindingcycle import PRE_BIND_POLL_INTERVAL
from tests.unit.apiserver.test_componentwebhooks import until
from tests.unit.apiserver.test_kubeletwebhooks import late_claim_cluster


def test_a_prebind_write_resumes_at_the_instant_its_webhook_answers() -> None:
    env, scheduler, clock, settle, selected_node = late_claim_cluster()
    env.caller.release.clear()
    parked_at = clock.now()
    answered_at: list[float] = []

    async def main() -> None:
        settle()  # returns: the claim write waits off the loop
        assert scheduler.waiting_binds == 1
        wakeup = scheduler.next_wakeup()
        # No 1 s poll while the webhook thinks: only the answers' deadline (safety net).
        assert wakeup is not None
        assert wakeup - parked_at > PRE_BIND_POLL_INTERVAL
        env.caller.release.set()
        await until(lambda: scheduler.next_wakeup() == clock.now())
        answered_at.append(clock.now())
        settle()  # at the same instant: the write is sent again, with the answer

    asyncio.run(main())
    env.waits.close()
    assert answered_at == [parked_at]  # the clock never moved
    assert selected_node() == "n1"
    assert env.caller.paths() == ["/c"]
    assert env.writes.posted == 1
    # Then upstream's poll: the first check of the bindings one second after the writes.
    assert scheduler.next_wakeup() == parked_at + PRE_BIND_POLL_INTERVAL
    assert scheduler.failed_attempts == 0
    assert scheduler.waiting_binds == 1
