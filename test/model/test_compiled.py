"""The compiled batch kernel (bb_robot.model.compiled) against the numpy path and the generated code.

Every kind of step the kernel has (an axis rotation with and without an origin rotation, a
general axis, a prismatic joint, fixed joints with and without a rotation, mimic joints with a
multiplier and offset, a held floating joint) is computed three ways: the kernel, the numpy
batch path and the per-configuration generated code, on a hand-made robot and on every URDF of
example-robot-data.  Loading is checked in fresh interpreters: numba is loaded only for a large
batch, never with ``BB_ROBOT_KERNEL=numpy``, and a numba that fails to import leaves the numpy
path giving the same numbers.  Agreement with Pinocchio is in test_kinematics_paths.py.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.robot_files import REJECTED_BY_US, example_robot_data_urdfs, robot_label

from bb_robot.model import compiled
from bb_robot.model.errors import InvalidJointValue
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.urdf.builder import build_robot, load_urdf
from bb_robot.urdf.parser import parse_string

TOL = 1e-12

EVERY_STEP = """<robot name="every_step">
  <link name="base"/>
  <joint name="spin" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l1"/>
  <joint name="tilted" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.1 0 0.2" rpy="1.5707963267948966 0 0.3"/><axis xyz="0 -1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <link name="l2"/>
  <joint name="skew" type="continuous"><parent link="l2"/><child link="l3"/>
    <origin xyz="0 0.2 0" rpy="0.1 0.2 0.3"/><axis xyz="0.6 0.8 0"/></joint>
  <link name="l3"/>
  <joint name="slide" type="prismatic"><parent link="l3"/><child link="l4"/>
    <origin xyz="0 0 0.1" rpy="0 0.4 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <link name="l4"/>
  <joint name="offset" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0.05 0.01 0.2"/></joint>
  <link name="tool"/>
  <joint name="mount" type="fixed"><parent link="l4"/><child link="camera"/>
    <origin xyz="0 0.1 0" rpy="-1.2 0.3 2.0"/></joint>
  <link name="camera"/>
  <joint name="finger" type="prismatic"><parent link="l4"/><child link="finger_a"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.04" effort="1" velocity="1"/></joint>
  <link name="finger_a"/>
  <joint name="finger_mirror" type="prismatic"><parent link="l4"/><child link="finger_b"/>
    <axis xyz="1 0 0"/><limit lower="-0.04" upper="0" effort="1" velocity="1"/>
    <mimic joint="finger" multiplier="-1" offset="0.001"/></joint>
  <link name="finger_b"/>
  <joint name="wrist_mimic" type="revolute"><parent link="l1"/><child link="follower"/>
    <origin xyz="0 0.3 0" rpy="0 0 1.5707963267948966"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/><mimic joint="spin" multiplier="0.5" offset="0.2"/></joint>
  <link name="follower"/>
  <joint name="loose" type="floating"><parent link="base"/><child link="payload"/>
    <origin xyz="1 2 3" rpy="0 0 1"/></joint>
  <link name="payload"/>
</robot>
"""


def _require_kernels() -> None:
    compiled.choose("auto")
    if compiled.kernels(0) is None:
        pytest.skip("numba is not installed (requirements/python.txt): no compiled kinematics to test")


def _three_ways(fk: ForwardKinematics, batch: np.ndarray, monkeypatch: Any) -> tuple[np.ndarray, ...]:
    """The poses of ``batch`` from compiled code (batched, and one configuration at a time), the
    numpy path and the generated code."""
    _require_kernels()
    monkeypatch.setattr(compiled, "_mode", ["auto"])
    kernel = fk.compute(batch)
    one_at_a_time = np.array([fk.compute(np.ascontiguousarray(q)) for q in batch])
    monkeypatch.setattr(compiled, "_mode", ["numpy"])
    numpy_path = fk.compute(batch)
    generated = np.array([fk.compute(q) for q in batch])
    monkeypatch.undo()
    return kernel, one_at_a_time, numpy_path, generated


def _configurations(fk: ForwardKinematics, count: int, seed: int) -> np.ndarray:
    lower, upper = [], []
    for name in fk.joint_names:
        limits = fk.robot.joints[name].limits
        low = limits.lower if limits is not None and limits.lower is not None else -math.pi
        high = limits.upper if limits is not None and limits.upper is not None else math.pi
        lower.append(low if math.isfinite(low) else -math.pi)
        upper.append(high if math.isfinite(high) else math.pi)
    return np.random.default_rng(seed).uniform(lower, upper, (count, len(fk.joint_names)))


def _assert_agree(
    label: str, kernel: np.ndarray, one: np.ndarray, numpy_path: np.ndarray, generated: np.ndarray
) -> None:
    scale = max(1.0, float(np.abs(generated).max()))
    for name, poses in (("batch kernel", kernel), ("one-configuration kernel", one), ("numpy path", numpy_path)):
        worst = float(np.abs(poses - generated).max())
        assert worst <= TOL * scale, f"{label}: the {name} differs from the generated code by {worst:.3g}"


def test_every_kind_of_step_agrees_three_ways(monkeypatch: Any) -> None:
    fk = ForwardKinematics(build_robot(parse_string(EVERY_STEP)))
    assert fk.held_joints == ("loose",) and set(fk.mimic_joints) == {"finger_mirror", "wrist_mimic"}
    kinds = set(fk._program().kinds)
    assert kinds == {0, 1, 2, 3, 4, 5}, f"the hand-made robot no longer covers every step kind: {sorted(kinds)}"
    assert not fk._program().direct  # mimic joints: values are computed from q, not q itself
    batch = _configurations(fk, 64, seed=5)
    batch[0] = 0.0
    batch[1] = [3.0, -3.0, math.pi, 0.5, 0.04]  # at and past ±π, where tan(v/2) is large
    results = _three_ways(fk, batch, monkeypatch)
    assert results[0].shape == (64, len(fk.link_names), 4, 4) and results[0].flags.c_contiguous
    _assert_agree("every_step", *results)
    kernel = results[0]
    np.testing.assert_array_equal(kernel[:, :, 3], np.broadcast_to([0.0, 0.0, 0.0, 1.0], kernel[:, :, 3].shape))


@pytest.mark.parametrize("values_per_block", [1, 16, 100])
def test_a_batch_in_blocks_agrees_with_one_block(values_per_block: int, monkeypatch: Any) -> None:
    """Blocks of the minimum size and an uneven last block, on a program whose values are computed
    from q (mimic joints) and on a batch given as a strided view."""
    fk = ForwardKinematics(build_robot(parse_string(EVERY_STEP)))
    _require_kernels()
    wide = _configurations(fk, 2 * 71, seed=17)[::2]  # 71 rows, not contiguous
    generated = np.array([fk.compute(np.ascontiguousarray(q)) for q in wide])
    whole = fk.compute(wide)
    monkeypatch.setattr(compiled, "BLOCK_VALUES", values_per_block)
    rows = compiled.block_rows(fk._program().slots)
    assert rows == compiled.MIN_BATCH or values_per_block == 100
    assert len(wide) % rows != 0 and len(wide) // rows >= 2, "the batch must span several blocks, the last one short"
    blocked = fk.compute(wide)
    assert blocked.shape == whole.shape and blocked.flags.c_contiguous
    worst = float(np.abs(blocked - whole).max())
    assert worst <= TOL, f"blocks of {rows} rows differ from one block by {worst:.3g}"
    assert float(np.abs(blocked - generated).max()) <= TOL * max(1.0, float(np.abs(generated).max()))


# The files bb_robot rejects on purpose are checked to stay rejected by test_fk_against_pinocchio.py.
LOADABLE = [p for p in example_robot_data_urdfs() if robot_label(p).split(":", 1)[1] not in REJECTED_BY_US]


@pytest.mark.parametrize("path", LOADABLE, ids=robot_label)
def test_kernel_agrees_on_every_example_robot(path: Path, monkeypatch: Any) -> None:
    fk = ForwardKinematics(load_urdf(path))
    _assert_agree(robot_label(path), *_three_ways(fk, _configurations(fk, 40, seed=11), monkeypatch))


def test_a_bad_batch_is_refused_before_the_kernel_runs(monkeypatch: Any) -> None:
    fk = ForwardKinematics(build_robot(parse_string(EVERY_STEP)))
    _require_kernels()
    monkeypatch.setattr(compiled, "_mode", ["auto"])
    batch = _configurations(fk, 32, seed=2)
    batch[7, 3] = math.nan
    with pytest.raises(InvalidJointValue, match="slide"):
        fk.compute(batch)
    with pytest.raises(InvalidJointValue, match="slide"):
        fk.compute(batch[7].copy())  # one configuration: the compiled code finds it, as_batch names it
    with pytest.raises(InvalidJointValue, match="spin"):
        fk.compute(np.array([math.inf, 0, 0, 0, 0]))
    with pytest.raises(InvalidJointValue, match=r"expected 5 joint values"):
        fk.compute(np.zeros((32, 4)))
    with pytest.raises(InvalidJointValue, match=r"expected 5 joint values"):
        fk.compute(np.zeros(4))


def _fresh_interpreter(code: str, **environment: str) -> dict[str, Any]:
    """Run ``code`` (which prints one JSON object) in a new interpreter and return what it printed."""
    env = {key: value for key, value in os.environ.items() if key != compiled.ENVIRONMENT}
    env.update(environment)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


_LOADING = f"""
import json, sys
import numpy as np
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.urdf.builder import build_robot
from bb_robot.urdf.parser import parse_string
fk = ForwardKinematics(build_robot(parse_string({EVERY_STEP!r})))
before = "numba" in sys.modules
fk.compute(np.zeros(5))
single = "numba" in sys.modules
fk.compute(np.zeros((3, 5)))
small = "numba" in sys.modules
large = fk.compute(np.linspace(-1, 1, 5 * 64).reshape(64, 5))
from bb_robot.model import compiled
kernel = compiled.kernels(64) is not None
print(json.dumps({{"before": before, "single": single, "small": small, "large": "numba" in sys.modules,
                  "kernel": kernel, "poses": large.tolist()}}))
"""


def test_by_default_compiled_code_is_loaded_on_first_use() -> None:
    _require_kernels()
    result = _fresh_interpreter(_LOADING)
    assert result == {**result, "before": False, "single": True, "kernel": True}


def test_batch_mode_loads_numba_for_a_large_batch_only() -> None:
    _require_kernels()
    result = _fresh_interpreter(_LOADING, BB_ROBOT_KERNEL="batch")
    assert result == {**result, "single": False, "small": False, "large": True, "kernel": True}


def test_the_python_paths_when_chosen_or_when_numba_fails() -> None:
    _require_kernels()
    default = _fresh_interpreter(_LOADING)
    chosen = _fresh_interpreter(_LOADING, BB_ROBOT_KERNEL="numpy")
    assert chosen == {**chosen, "single": False, "small": False, "large": False, "kernel": False}
    # numba present but failing to import: the loader takes the Python paths.
    broken = _fresh_interpreter("import sys; sys.modules['numba'] = None\n" + _LOADING)
    assert broken["kernel"] is False
    for other in (chosen, broken):
        np.testing.assert_allclose(np.array(other["poses"]), np.array(default["poses"]), atol=TOL, rtol=0)


def test_the_command_line_keeps_one_configuration_in_python(tmp_path: Path) -> None:
    _require_kernels()
    urdf = tmp_path / "every_step.urdf"
    urdf.write_text(EVERY_STEP)
    code = (
        "import json, sys\n"
        "from bb_robot.cli.main import main\n"
        f"status = main(['fk', {str(urdf)!r}, '--joint', 'spin=0.5', '--json'])\n"
        "print(json.dumps({'status': status, 'numba': 'numba' in sys.modules}))\n"
    )
    assert _fresh_interpreter(code) == {"status": 0, "numba": False}
    # An explicit choice wins over the command line's default.
    assert _fresh_interpreter(code, BB_ROBOT_KERNEL="auto") == {"status": 0, "numba": True}


def test_a_mode_that_does_not_exist() -> None:
    with pytest.raises(ValueError, match="auto, batch, numpy"):
        compiled.choose("fast")


def test_the_serial_model_agrees_with_its_generated_code(monkeypatch: Any) -> None:
    """Pose, frames and Jacobian of a chain with revolute, general-axis and prismatic joints."""
    from bb_robot.model.serial import SerialManipulator

    _require_kernels()
    chain = SerialManipulator.from_robot(build_robot(parse_string(EVERY_STEP)), "finger_a", strict=False)
    assert chain.actuations.count("TZ") == 2  # the prismatic columns of the Jacobian are covered
    rng = np.random.default_rng(4)
    lower = np.maximum(chain.lower_limits, -math.pi)  # the continuous joint has no limits
    upper = np.minimum(chain.upper_limits, math.pi)
    for q in rng.uniform(lower, upper, (20, chain.dof)):
        monkeypatch.setattr(compiled, "_mode", ["auto"])
        poses = chain.forward(q)
        results = [chain.end_effector_pose(q), chain.jacobian(q), poses.links, poses.joints, poses.end_effector]
        monkeypatch.setattr(compiled, "_mode", ["numpy"])
        poses = chain.forward(q)
        expected = [chain.end_effector_pose(q), chain.jacobian(q), poses.links, poses.joints, poses.end_effector]
        for got, want in zip(results, expected, strict=True):
            np.testing.assert_allclose(got, want, atol=TOL, rtol=0)
    monkeypatch.setattr(compiled, "_mode", ["auto"])
    bad = np.zeros(chain.dof)
    bad[2] = math.nan
    for method in (chain.end_effector_pose, chain.jacobian, chain.forward, chain.link_poses):
        with pytest.raises(InvalidJointValue, match=chain.joint_names[2]):
            method(bad)


def test_one_configuration_from_several_threads(monkeypatch: Any) -> None:
    """The one-configuration kernel writes into scratch held by the program; it runs with the
    interpreter lock held, so threads sharing a model never see each other's numbers."""
    import threading

    _require_kernels()
    monkeypatch.setattr(compiled, "_mode", ["auto"])
    fk = ForwardKinematics(build_robot(parse_string(EVERY_STEP)))
    wrong: list[str] = []

    def work(seed: int) -> None:
        for q in _configurations(fk, 400, seed):
            if float(np.abs(fk.compute(q) - fk.compute(q.tolist())).max()) > TOL:
                wrong.append(f"thread {seed}: {q.tolist()}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong[:3]
