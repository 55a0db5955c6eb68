"""The arms of the FK benchmark, every code path, against Pinocchio to 1e-12.

``ForwardKinematics.compute`` and ``SerialManipulator`` have four ways of computing:
straight-line Python generated per model for one configuration (:mod:`bb_robot.model.unrolled`),
the compiled batch kernel (:mod:`bb_robot.model.compiled`, numba), the batched numpy products
(:mod:`bb_robot.model.batch`), in which a joint origin that is a
signed permutation takes columns of the parent rather than a matrix product, and, for a model
too long to generate code for, the batched code on one row.  Each is compared here with
Pinocchio (an independent implementation, ``forwardKinematics`` + ``updateFramePlacements``
and ``computeFrameJacobian(..., LOCAL_WORLD_ALIGNED)``) and with the others, to 1e-12 on every
matrix entry, on the arms of ``benchmarks/bench_fk.py``: example-robot-data's Panda, xArm7,
UR5, Kinova and Talos, and the first 200 links of the synthetic 1000-link chain.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.pinocchio_configuration import pin_configuration
from helpers.robot_files import CORPUS_DIR, example_robot_data_urdfs, robot_label

import bb_robot.model.unrolled
from bb_robot.model import compiled
from bb_robot.model.batch import apply_step, empty_frames, make_step
from bb_robot.model.geometry import Origin
from bb_robot.model.kinematics import ForwardKinematics
from bb_robot.model.serial import SerialManipulator
from bb_robot.model.transforms import origin_to_matrix
from bb_robot.urdf.builder import load_urdf

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI `pin`) is not installed: nothing to compare with")

TOL = 1e-12
CONFIGURATIONS = 8
ARMS = (
    "erd:panda_description/urdf/panda.urdf",
    "erd:xarm_description/urdf/xarm7.urdf",
    "erd:ur_description/urdf/ur5_robot.urdf",
    "erd:kinova_description/robots/kinova.urdf",
    "erd:talos_data/robots/talos_full_v2.urdf",
    "corpus:synthetic/long_chain_1000.urdf[:200]",
)
# Serial chains of the same arms: (arm, tip).
CHAINS = (
    ("erd:panda_description/urdf/panda.urdf", "panda_hand_tcp"),
    ("erd:xarm_description/urdf/xarm7.urdf", None),
    ("erd:ur_description/urdf/ur5_robot.urdf", "tool0"),
    ("erd:kinova_description/robots/kinova.urdf", None),
    ("erd:talos_data/robots/talos_full_v2.urdf", "arm_left_7_link"),
)


def _chain_prefix(path: Path, links: int, directory: Path) -> Path:
    root = ET.parse(path).getroot()
    names = {element.get("name") for element in root.findall("link")[:links]}
    for element in list(root):
        child = element.find("child")
        if (element.tag == "link" and element.get("name") not in names) or (
            element.tag == "joint" and (child is None or child.get("link") not in names)
        ):
            root.remove(element)
    out = directory / f"{path.stem}_first_{links}.urdf"
    ET.ElementTree(root).write(out)
    return out


def _path(label: str, tmp_path: Path) -> Path:
    if label.startswith("corpus:"):
        name, _, links = label.removeprefix("corpus:").partition("[:")
        path = CORPUS_DIR / name
        if not path.is_file():
            pytest.skip(f"no {name} in the shared corpus")
        return _chain_prefix(path, int(links.rstrip("]")), tmp_path) if links else path
    found = {robot_label(p): p for p in example_robot_data_urdfs()}
    if label not in found:
        pytest.skip(f"example-robot-data has no {label}")
    return found[label]


def _pinocchio(path: Path) -> Any:
    try:
        return pin.buildModelFromUrdf(str(path), mimic=True)
    except ValueError:  # mimic layouts Pinocchio cannot represent: mimic joints become free joints
        return pin.buildModelFromUrdf(str(path))


def _pin_q(model: Any, fk: ForwardKinematics, q: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration for ``q``; mimic joints it holds as free get their URDF value."""
    values = dict(zip(fk.joint_names, (float(x) for x in q), strict=True))

    def value(name: str) -> float:
        joint = fk.robot.joints[name]
        return (
            values[name]
            if joint.mimic is None
            else joint.mimic.multiplier * value(joint.mimic.joint) + joint.mimic.offset
        )

    result = pin.neutral(model)
    for joint_id in range(1, model.njoints):
        joint, name = model.joints[joint_id], model.names[joint_id]
        if (
            joint.nq == 0
            or name not in fk.robot.joints
            or fk.robot.joints[name].type
            not in (
                "revolute",
                "continuous",
                "prismatic",
            )
        ):
            continue
        v = value(name)
        if joint.nq == 2:
            result[joint.idx_q : joint.idx_q + 2] = (math.cos(v), math.sin(v))
        else:
            result[joint.idx_q] = v
    return result


def _sample(lower: np.ndarray, upper: np.ndarray, seed: int) -> np.ndarray:
    lower = np.where(np.isfinite(lower), lower, -math.pi)
    upper = np.where(np.isfinite(upper), upper, math.pi)
    rng = np.random.default_rng(seed)
    return np.vstack([np.zeros(len(lower)), rng.uniform(lower, upper, (CONFIGURATIONS, len(lower)))])


def _fk_limits(fk: ForwardKinematics) -> tuple[np.ndarray, np.ndarray]:
    limits = [fk.robot.joints[name].limits for name in fk.joint_names]
    lower = np.array([lim.lower if lim is not None and lim.lower is not None else -math.inf for lim in limits])
    upper = np.array([lim.upper if lim is not None and lim.upper is not None else math.inf for lim in limits])
    return lower, upper


@pytest.mark.parametrize("label", ARMS)
def test_every_path_of_forward_kinematics_matches_pinocchio(label: str, tmp_path: Path, monkeypatch: Any) -> None:
    path = _path(label, tmp_path)
    robot = load_urdf(path)
    fk = ForwardKinematics(robot)
    monkeypatch.setattr(bb_robot.model.unrolled, "MAX_UNROLLED_STEPS", 0)  # no generated code: numpy on one row
    numpy_only = ForwardKinematics(robot)
    monkeypatch.undo()
    model = _pinocchio(path)
    data = model.createData()
    frames = [model.getFrameId(link, pin.BODY) for link in fk.link_names]
    configurations = _sample(*_fk_limits(fk), seed=3)
    monkeypatch.setattr(compiled, "_mode", ["numpy"])  # the numpy batch path and the generated code
    batch = fk.compute(configurations)
    generated_poses = [fk.compute(q) for q in configurations]
    monkeypatch.setattr(compiled, "_mode", ["auto"])  # compiled code
    if compiled.kernels(0) is None:
        pytest.skip("numba is not installed (requirements/python.txt): no compiled kinematics to test")
    kernel_batch = fk.compute(configurations)
    kernel_one = [fk.compute(np.ascontiguousarray(q)) for q in configurations]
    monkeypatch.undo()
    for k, q in enumerate(configurations):
        pin.forwardKinematics(model, data, _pin_q(model, fk, q))
        pin.updateFramePlacements(model, data)
        expected = np.array([data.oMf[f].homogeneous for f in frames])
        generated = generated_poses[k]
        assert generated.flags.writeable and generated.flags.c_contiguous
        assert kernel_one[k].flags.writeable and kernel_one[k].flags.c_contiguous
        for name, poses in (
            ("generated", generated),
            ("batched", batch[k]),
            ("compiled, batched", kernel_batch[k]),
            ("compiled, one configuration", kernel_one[k]),
            ("numpy, one row", numpy_only.compute(q)),
        ):
            worst = float(np.abs(poses - expected).max())
            assert worst <= TOL, f"{name} path, configuration {k}: differs from Pinocchio by {worst:.3g}"
        np.testing.assert_allclose(generated, batch[k], atol=TOL, rtol=0)


@pytest.mark.parametrize(("label", "tip"), CHAINS)
def test_every_path_of_the_serial_model_matches_pinocchio(
    label: str, tip: str | None, tmp_path: Path, monkeypatch: Any
) -> None:
    path = _path(label, tmp_path)
    robot = load_urdf(path)
    chain = SerialManipulator.from_robot(robot, tip, strict=False)
    monkeypatch.setattr(bb_robot.model.unrolled, "MAX_UNROLLED_STEPS", 0)
    numpy_only = SerialManipulator.from_robot(robot, tip, strict=False)
    monkeypatch.undo()
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    tip_frame = model.getFrameId(chain.tip_link, pin.BODY)
    link_frames = [model.getFrameId(link, pin.BODY) for link in chain.link_names]
    columns = [model.joints[model.getJointId(j)].idx_v for j in chain.joint_names]
    configurations = _sample(chain.lower_limits, chain.upper_limits, seed=5)
    batch_pose, batch_jacobian = chain.end_effector_pose(configurations), chain.jacobian(configurations)
    batch_links = chain.link_poses(configurations)
    for k, q in enumerate(configurations):
        pin_q = pin_configuration(model, chain, q)
        pin.forwardKinematics(model, data, pin_q)
        pin.updateFramePlacements(model, data)
        pose = data.oMf[tip_frame].homogeneous
        links = np.array([data.oMf[f].homogeneous for f in link_frames])
        jacobian = pin.computeFrameJacobian(model, data, pin_q, tip_frame, pin.LOCAL_WORLD_ALIGNED)[:, columns]
        for name, model_, mode in (
            ("compiled", chain, "auto"),
            ("generated", chain, "numpy"),
            ("numpy, one row", numpy_only, "numpy"),
        ):
            monkeypatch.setattr(compiled, "_mode", [mode])
            if mode == "auto" and compiled.kernels(0) is None:
                pytest.skip("numba is not installed (requirements/python.txt): no compiled kinematics to test")
            np.testing.assert_allclose(model_.end_effector_pose(q), pose, atol=TOL, rtol=0, err_msg=name)
            np.testing.assert_allclose(model_.jacobian(q), jacobian, atol=TOL, rtol=0, err_msg=name)
            np.testing.assert_allclose(model_.link_poses(q), links, atol=TOL, rtol=0, err_msg=name)
            poses = model_.forward(q)
            np.testing.assert_allclose(poses.links, links, atol=TOL, rtol=0, err_msg=name)
            np.testing.assert_allclose(poses.end_effector, pose, atol=TOL, rtol=0, err_msg=name)
            monkeypatch.undo()
        np.testing.assert_allclose(batch_pose[k], pose, atol=TOL, rtol=0)
        np.testing.assert_allclose(batch_jacobian[k], jacobian, atol=TOL, rtol=0)
        np.testing.assert_allclose(batch_links[k], links, atol=TOL, rtol=0)


@pytest.mark.parametrize("kind", ["fixed", "revolute", "prismatic"])
@pytest.mark.parametrize(
    "rpy", [(0.0, 0.0, 0.0), (math.pi / 2, 0.0, 0.0), (-math.pi / 2, 0.0, math.pi), (0.0, math.pi / 2, -math.pi / 2)]
)
def test_a_permutation_step_equals_the_matrix_product(kind: str, rpy: tuple[float, float, float]) -> None:
    """A joint origin that is a signed permutation takes the column path; the product gives the same."""
    from bb_robot.model.batch import FIXED, PRISMATIC, REVOLUTE

    origin = origin_to_matrix(Origin((0.1, -0.2, 0.3), rpy))
    kinds = {"fixed": FIXED, "revolute": REVOLUTE, "prismatic": PRISMATIC}
    for axis in ((0.0, 0.0, 1.0), (0.0, -1.0, 0.0), (1.0, 0.0, 0.0)):
        step = make_step(0, 1, kinds[kind], origin, axis)
        assert step.permutation is not None
        rng = np.random.default_rng(1)
        values = rng.uniform(-3.0, 3.0, 50)
        roll, pitch, yaw = rng.uniform(-3.0, 3.0, 3)  # a parent pose that is not the identity
        parent = origin_to_matrix(Origin((0.5, 0.1, -0.4), (roll, pitch, yaw)))
        results = []
        for candidate in (step, replace(step, permutation=None)):
            frames = empty_frames(2, len(values))
            frames[0] = parent[:, :, None]
            apply_step(frames, candidate, values)
            results.append(frames[1].copy())
        np.testing.assert_allclose(results[0], results[1], atol=TOL, rtol=0)


def test_the_serial_model_pickles_after_generating_code(tmp_path: Path) -> None:
    """The generated functions are not picklable; the serial model drops them and rebuilds them."""
    import pickle

    chain = SerialManipulator.from_robot(
        load_urdf(_path("erd:ur_description/urdf/ur5_robot.urdf", tmp_path)), "tool0", strict=False
    )
    q = np.linspace(-1.0, 1.0, chain.dof)
    expected_pose, expected_jacobian = chain.end_effector_pose(q), chain.jacobian(q)
    copy = pickle.loads(pickle.dumps(chain))
    np.testing.assert_array_equal(copy.end_effector_pose(q), expected_pose)
    np.testing.assert_array_equal(copy.jacobian(q), expected_jacobian)
