"""``bb-robot up``'s watch of a driver process: lost when it ends, restarted when another runs."""

from __future__ import annotations

from bb_robot.cli.up_process import DriverWatch


def test_a_driver_lost_and_respawned_is_said_in_order() -> None:
    watch = DriverWatch()
    assert watch.update(None) is None  # not started yet: nothing to say
    assert watch.update(100) is None  # the first process
    assert watch.warnings() == ()
    event = watch.update(None)
    assert event == "driver lost: its process 100 ended" and watch.lost and watch.losses == 1
    assert watch.warnings() == ("driver lost: its process ended",)
    event = watch.update(200)
    assert event is not None and "driver restarted (process 200, restart 1)" in event and "disarmed" in event
    assert not watch.lost and watch.restarts == 1 and watch.losses == 1
    assert "restarted 1 time(s)" in watch.warnings()[0]
    assert watch.update(200) is None
    # Replaced without a gap seen in between: a restart too.
    assert watch.update(300) is not None and watch.restarts == 2
