"""The backend registry: names, convention, 'module:Class', unknown names."""

from __future__ import annotations

import pytest

from bb_robot.driver.backends import base
from bb_robot.driver.backends.base import backend_class, builtin_backends, register_backend
from bb_robot.driver.backends.sim import SimBackend
from bb_robot.driver.errors import BackendError


def test_sim_is_found_by_its_module_name() -> None:
    assert backend_class("sim") is SimBackend
    assert "sim" in builtin_backends()


def test_module_colon_class() -> None:
    assert backend_class("bb_robot.driver.backends.sim:SimBackend") is SimBackend
    with pytest.raises(BackendError, match="has no Backend class 'Nope'"):
        backend_class("bb_robot.driver.backends.sim:Nope")


def test_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(BackendError) as info:
        backend_class("warp_drive")
    assert "unknown backend 'warp_drive'" in str(info.value) and "sim" in str(info.value)
    with pytest.raises(BackendError, match="unknown backend"):
        backend_class("no_such_package.module:Thing")


def test_register_backend() -> None:
    class Custom(SimBackend):
        name = "custom_test_backend"

    register_backend(Custom)
    try:
        assert backend_class("custom_test_backend") is Custom
    finally:
        base._REGISTRY.pop("custom_test_backend")


def test_sim_declares_its_parameters() -> None:
    names = [spec.name for spec in SimBackend.parameters()]
    assert names == ["initial_positions", "max_step", "max_gap"]
    assert all(spec.description for spec in SimBackend.parameters())


def test_options_fall_back_to_the_parameter_defaults_and_say_what_is_wrong() -> None:
    import logging

    from helpers.driver_rig import JOINTS, arm_limits, arm_robot

    from bb_robot.driver.backends.base import BackendContext

    def sim(**options: object) -> SimBackend:
        context = BackendContext(arm_robot(), JOINTS, arm_limits(), 500.0, logging.getLogger("t"), options)  # type: ignore[arg-type]
        return SimBackend(context)

    defaults = {spec.name: spec.default for spec in SimBackend.parameters()}
    backend = sim()
    assert backend.max_step == defaults["max_step"] and backend.max_gap == defaults["max_gap"]
    assert backend.option("not_a_parameter") is None and backend.text_option("not_a_parameter") == ""
    assert sim(max_step=0.001, initial_positions=[0.1, 0.2, 0.3]).numbers_option("initial_positions") == [0.1, 0.2, 0.3]
    with pytest.raises(BackendError, match="sim.max_step must be a number, not 'fast'"):
        sim(max_step="fast")
    with pytest.raises(BackendError, match="sim.initial_positions must be numbers"):
        sim(initial_positions=["a"])
