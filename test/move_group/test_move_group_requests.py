"""MoveGroupCore on the bundled arm: MoveIt's requests as plain data, answered in-process.

Joint and pose goals as MoveIt's clients send them (a sphere region and absolute axis tolerances),
the tool's final pose recomputed by Pinocchio from the URDF; an object added as a
``CollisionObject`` that the next plan goes around (every sample of the plan checked against the
scene); attached objects; IK and FK against the library; Cartesian paths with their fraction; and
the hostile requests, each with the ``MoveItErrorCodes`` value that names it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from helpers.collision_robots import BUNDLED_ARM

from bb_robot.loading import load_file
from bb_robot.model.transforms import matrix_to_quaternion
from bb_robot.move_group.groups import GroupError, default_group, read_groups
from bb_robot.move_group.requests import Code, MoveGroupCore, Refused, error_code
from bb_robot.move_group.scene_updates import MAX_OBJECTS, MAX_VERTICES, UpdateRefused
from bb_robot.move_group.setup import build_core
from bb_robot.planning.errors import GoalInCollision, NoIkSolution, PlanningTimeout, StartInCollision

pin = pytest.importorskip("pinocchio")
pytest.importorskip("coal")

CONFIG = BUNDLED_ARM.parent.parent / "config" / "bb_arm.yaml"
READY = {"shoulder_lift_joint": -0.8, "elbow_joint": 1.4, "wrist_1_joint": -0.6, "wrist_2_joint": 1.2}


@pytest.fixture(scope="module")
def core() -> MoveGroupCore:
    built = build_core(load_file(str(BUNDLED_ARM)), limits_file=str(CONFIG))
    return built


@pytest.fixture(autouse=True)
def fresh(core: MoveGroupCore) -> None:
    core.updates.clear()
    values = {name: READY.get(name, 0.0) for name in core.names}
    core.set_joint_states(list(values), list(values.values()))


def pinocchio_pose(q: np.ndarray, names: tuple[str, ...], frame: str = "tcp") -> np.ndarray:
    model = pin.buildModelFromUrdf(str(BUNDLED_ARM))
    data = model.createData()
    values = pin.neutral(model)
    for name, value in zip(names, q, strict=True):
        values[model.joints[model.getJointId(name)].idx_q] = value
    pin.framesForwardKinematics(model, data, values)
    return np.asarray(data.oMf[model.getFrameId(frame)].homogeneous, dtype=float).copy()


def pose_data(matrix: np.ndarray) -> dict[str, Any]:
    x, y, z, w = matrix_to_quaternion(matrix[:3, :3])
    p = matrix[:3, 3]
    return {"position": {"x": p[0], "y": p[1], "z": p[2]}, "orientation": {"x": x, "y": y, "z": z, "w": w}}


def pose_constraints(
    target: np.ndarray, link: str = "tcp", frame: str = "base_link", tolerance: float = 1e-3
) -> dict[str, Any]:
    """A pose goal as MoveGroupInterface's setPoseTarget sends it."""
    data = pose_data(target)
    return {
        "position_constraints": [
            {
                "header": {"frame_id": frame},
                "link_name": link,
                "constraint_region": {
                    "primitives": [{"type": 2, "dimensions": [tolerance]}],
                    "primitive_poses": [{"position": data["position"], "orientation": {"w": 1.0}}],
                },
                "weight": 1.0,
            }
        ],
        "orientation_constraints": [
            {
                "header": {"frame_id": frame},
                "link_name": link,
                "orientation": data["orientation"],
                "absolute_x_axis_tolerance": tolerance,
                "absolute_y_axis_tolerance": tolerance,
                "absolute_z_axis_tolerance": tolerance,
                "weight": 1.0,
            }
        ],
    }


def joint_constraints(**values: float) -> dict[str, Any]:
    return {
        "joint_constraints": [
            {"joint_name": n, "position": v, "tolerance_above": 1e-4, "tolerance_below": 1e-4}
            for n, v in values.items()
        ]
    }


def full_path(core: MoveGroupCore, outcome: Any) -> np.ndarray:
    trajectory = outcome.trajectory
    assert trajectory is not None
    q = np.array([outcome.start[n] for n in core.names])
    rows = np.repeat(q[None, :], len(trajectory.times), axis=0)
    for column, name in enumerate(trajectory.names):
        rows[:, core.names.index(name)] = trajectory.positions[:, column]
    return rows


def box_object(
    name: str, xyz: tuple[float, float, float], size: tuple[float, float, float], operation: int = 0
) -> dict[str, Any]:
    return {
        "id": name,
        "header": {"frame_id": "base_link"},
        "pose": {"position": dict(zip("xyz", xyz, strict=True)), "orientation": {"w": 1.0}},
        "primitives": [{"type": 1, "dimensions": list(size)}],
        "primitive_poses": [{"orientation": {"w": 1.0}}],
        "operation": operation,
    }


# ---------------------------------------------------------------------- groups
def test_without_srdf_groups_the_chain_is_served_as_arm(core: MoveGroupCore) -> None:
    assert list(core.groups) == ["arm"] and core.default_group == "arm"
    assert core.groups["arm"].tip == "tcp" and "left_finger_joint" not in core.groups["arm"].joints
    assert core.group("") is core.groups["arm"]
    with pytest.raises(Refused) as refused:
        core.group("manipulator")
    assert refused.value.code == Code.INVALID_GROUP_NAME and "arm" in str(refused.value)


def test_srdf_groups_chain_joint_link_and_subgroup() -> None:
    robot = load_file(str(BUNDLED_ARM)).robot
    text = (
        '<robot name="bb_arm"><group name="manipulator"><chain base_link="base_link" tip_link="tcp"/></group>'
        '<group name="hand"><joint name="left_finger_joint"/></group>'
        '<group name="both"><group name="manipulator"/><link name="left_finger"/></group></robot>'
    )
    groups = read_groups(text, robot)
    assert groups["manipulator"].joints == default_group(robot, "arm").joints
    assert groups["hand"].joints == ("left_finger_joint",)
    assert groups["both"].joints[-1] == "left_finger_joint" and groups["both"].tip == "left_finger"
    with pytest.raises(GroupError, match="includes itself"):
        read_groups('<robot name="x"><group name="a"><group name="a"/></group></robot>', robot)
    with pytest.raises(GroupError, match="no_such_link"):
        read_groups(
            '<robot name="x"><group name="a"><chain base_link="base_link" tip_link="no_such_link"/></group></robot>',
            robot,
        )


# ---------------------------------------------------------------------- plans
def test_a_joint_goal_ends_at_its_values(core: MoveGroupCore) -> None:
    outcome = core.plan({"goal_constraints": [joint_constraints(shoulder_pan_joint=0.6, elbow_joint=1.0)]})
    assert outcome.code == Code.SUCCESS, outcome.message
    assert outcome.trajectory is not None
    last = dict(zip(outcome.trajectory.names, outcome.trajectory.positions[-1], strict=True))
    assert last["shoulder_pan_joint"] == pytest.approx(0.6, abs=1e-9) and last["elbow_joint"] == pytest.approx(
        1.0, abs=1e-9
    )


def test_a_pose_goal_reaches_the_pose_within_1_mm_and_1_mrad(core: MoveGroupCore) -> None:
    start = np.array([READY.get(n, 0.0) for n in core.names])
    target = pinocchio_pose(start, core.names)
    target[:3, 3] += [0.08, -0.1, 0.05]
    outcome = core.plan({"goal_constraints": [pose_constraints(target)], "allowed_planning_time": 5.0})
    assert outcome.code == Code.SUCCESS, outcome.message
    reached = pinocchio_pose(full_path(core, outcome)[-1], core.names)
    assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 1e-3
    angle = math.acos(min(1.0, (np.trace(reached[:3, :3].T @ target[:3, :3]) - 1) / 2))
    assert angle <= 1e-3


def test_an_object_added_as_a_collision_object_is_gone_around(core: MoveGroupCore) -> None:
    goal = joint_constraints(shoulder_pan_joint=1.6)
    out = {"shoulder_lift_joint": 0.6, "elbow_joint": 0.9}  # the tool 0.86 m out from the pan axis
    core.set_joint_states(list(out), list(out.values()))
    straight = core.plan({"goal_constraints": [goal]})
    assert straight.code == Code.SUCCESS
    path = full_path(core, straight)
    middle = core.link_pose("tcp", path[len(path) // 2])[:3, 3]
    core.updates.collision_object(box_object("crate", tuple(middle), (0.12, 0.12, 0.12)))
    assert any(core.scene.colliding(q) for q in path), "the old path must cross the crate"
    around = core.plan({"goal_constraints": [goal], "allowed_planning_time": 10.0})
    assert around.code == Code.SUCCESS, around.message
    assert not any(core.scene.colliding(q) for q in full_path(core, around))


def test_num_planning_attempts_and_scaling(core: MoveGroupCore) -> None:
    slow = core.plan(
        {
            "goal_constraints": [joint_constraints(shoulder_pan_joint=1.0)],
            "max_velocity_scaling_factor": 0.1,
            "max_acceleration_scaling_factor": 0.1,
            "num_planning_attempts": 3,
        }
    )
    fast = core.plan({"goal_constraints": [joint_constraints(shoulder_pan_joint=1.0)]})
    assert slow.code == fast.code == Code.SUCCESS
    assert slow.trajectory is not None and fast.trajectory is not None
    assert slow.trajectory.duration > 3 * fast.trajectory.duration


def test_an_unknown_planner_id_plans_with_a_warning(core: MoveGroupCore) -> None:
    outcome = core.plan({"goal_constraints": [joint_constraints(elbow_joint=1.2)], "planner_id": "CHOMP"})
    assert outcome.code == Code.SUCCESS and any("CHOMP" in w for w in outcome.warnings)


def test_a_path_constraint_keeps_the_tool_level(core: MoveGroupCore) -> None:
    start = np.array([READY.get(n, 0.0) for n in core.names])
    level = core.link_pose("tcp", start)
    constraint = {
        "orientation_constraints": [
            {"link_name": "tcp", "orientation": pose_data(level)["orientation"], "absolute_x_axis_tolerance": 0.2,
             "absolute_y_axis_tolerance": 0.2, "absolute_z_axis_tolerance": math.pi}
        ]
    }  # fmt: skip
    outcome = core.plan(
        {"goal_constraints": [joint_constraints(shoulder_pan_joint=0.8)], "path_constraints": constraint}
    )
    assert outcome.code == Code.SUCCESS, outcome.message
    for q in full_path(core, outcome):
        z = core.link_pose("tcp", q)[:3, 2]
        assert math.acos(min(1.0, float(z @ level[:3, 2]))) <= 0.2 * math.sqrt(2) + 1e-6


# ---------------------------------------------------------------------- hostile requests
HOSTILE = [
    ("empty goal list", {"goal_constraints": []}, Code.INVALID_GOAL_CONSTRAINTS),
    ("empty constraints", {"goal_constraints": [{}]}, Code.INVALID_GOAL_CONSTRAINTS),
    (
        "unknown group",
        {"group_name": "legs", "goal_constraints": [joint_constraints(elbow_joint=1.0)]},
        Code.INVALID_GROUP_NAME,
    ),
    ("unknown joint", {"goal_constraints": [joint_constraints(knee=1.0)]}, Code.INVALID_GOAL_CONSTRAINTS),
    ("NaN joint", {"goal_constraints": [joint_constraints(elbow_joint=math.nan)]}, Code.INVALID_GOAL_CONSTRAINTS),
    ("joint beyond its limit", {"goal_constraints": [joint_constraints(elbow_joint=40.0)]}, Code.INVALID_MOTION_PLAN),
    (
        "start with an unknown joint",
        {
            "start_state": {"joint_state": {"name": ["knee"], "position": [0.0]}},
            "goal_constraints": [joint_constraints(elbow_joint=1.0)],
        },
        Code.INVALID_ROBOT_STATE,
    ),
    (
        "start with inf",
        {
            "start_state": {"joint_state": {"name": ["elbow_joint"], "position": [math.inf]}},
            "goal_constraints": [joint_constraints(elbow_joint=1.0)],
        },
        Code.INVALID_ROBOT_STATE,
    ),
    (
        "velocity scale 2",
        {"goal_constraints": [joint_constraints(elbow_joint=1.0)], "max_velocity_scaling_factor": 2.0},
        Code.INVALID_MOTION_PLAN,
    ),
    (
        "visibility",
        {"goal_constraints": [{"visibility_constraints": [{"target_radius": 1.0}]}]},
        Code.INVALID_GOAL_CONSTRAINTS,
    ),
    (
        "orientation alone",
        {"goal_constraints": [{"orientation_constraints": pose_constraints(np.eye(4))["orientation_constraints"]}]},
        Code.INVALID_GOAL_CONSTRAINTS,
    ),
    (
        "path position constraint",
        {"goal_constraints": [joint_constraints(elbow_joint=1.0)], "path_constraints": {"position_constraints": [{}]}},
        Code.INVALID_GOAL_CONSTRAINTS,
    ),
]


@pytest.mark.parametrize(("label", "request_data", "code"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_plan_requests_get_their_code(
    core: MoveGroupCore, label: str, request_data: dict[str, Any], code: int
) -> None:
    outcome = core.plan(request_data)
    assert outcome.code == code, (label, outcome.code, outcome.message)
    assert outcome.message and outcome.trajectory is None


def test_hostile_pose_goals(core: MoveGroupCore) -> None:
    target = np.eye(4)
    target[:3, 3] = [0.3, 0.1, 0.6]
    nan = pose_constraints(target)
    nan["position_constraints"][0]["constraint_region"]["primitive_poses"][0]["position"]["x"] = math.nan
    unknown_link = pose_constraints(target, link="hand")
    unknown_frame = pose_constraints(target, frame="map")
    huge_region = pose_constraints(target)
    huge_region["position_constraints"][0]["constraint_region"]["primitives"] = [
        {"type": 1, "dimensions": [1.0, -1.0, 1.0]}
    ]
    far = pose_constraints(np.eye(4) @ np.diag([1, 1, 1, 1.0]))
    far["position_constraints"][0]["constraint_region"]["primitive_poses"][0]["position"] = {
        "x": 50.0,
        "y": 0.0,
        "z": 0.0,
    }
    cases = [(nan, Code.INVALID_GOAL_CONSTRAINTS), (unknown_link, Code.INVALID_LINK_NAME),
             (unknown_frame, Code.FRAME_TRANSFORM_FAILURE), (huge_region, Code.INVALID_GOAL_CONSTRAINTS),
             (far, Code.NO_IK_SOLUTION)]  # fmt: skip
    for constraints, code in cases:
        outcome = core.plan({"goal_constraints": [constraints]})
        assert outcome.code == code, outcome.message
    boxed = core.plan(
        {
            "goal_constraints": [pose_constraints(target)],
            "workspace_parameters": {
                "min_corner": {"x": -0.1, "y": -0.1, "z": 0.0},
                "max_corner": {"x": 0.1, "y": 0.1, "z": 2.0},
            },
        }
    )
    assert boxed.code == Code.INVALID_GOAL_CONSTRAINTS and "workspace" in boxed.message


def test_no_joint_states_yet_is_stale() -> None:
    fresh_core = build_core(load_file(str(BUNDLED_ARM)))
    outcome = fresh_core.plan({"goal_constraints": [joint_constraints(elbow_joint=1.0)]})
    assert outcome.code == Code.ROBOT_STATE_STALE and "joint_states" in outcome.message


def test_error_codes_of_the_planners_verdicts() -> None:
    assert error_code(StartInCollision(("a", "b"), 0.0, 0.0)) == Code.START_STATE_IN_COLLISION
    assert error_code(GoalInCollision(("a", "b"), 0.0, 0.0)) == Code.GOAL_IN_COLLISION
    assert error_code(NoIkSolution("x")) == Code.NO_IK_SOLUTION
    assert error_code(PlanningTimeout("x", 1, 1.0)) == Code.PLANNING_FAILED


# ---------------------------------------------------------------------- scene updates
def test_add_move_append_remove(core: MoveGroupCore) -> None:
    updates = core.updates
    updates.collision_object(box_object("crate", (0.5, 0.0, 0.2), (0.1, 0.1, 0.1)))
    updates.collision_object(box_object("crate", (0.6, 0.0, 0.2), (0.1, 0.1, 0.1), operation=3))
    assert updates.records["crate"].pose[0, 3] == pytest.approx(0.6)
    updates.collision_object(box_object("crate", (0.6, 0.2, 0.2), (0.05, 0.05, 0.05), operation=2))
    assert len(core.scene.objects["crate"].parts) == 2
    updates.collision_object({"id": "crate", "operation": 1})
    assert "crate" not in core.scene.objects
    with pytest.raises(UpdateRefused) as refused:
        updates.collision_object({"id": "crate", "operation": 1})
    assert refused.value.code == Code.INVALID_OBJECT_NAME


@pytest.mark.parametrize(
    ("label", "data"),
    [
        ("NaN pose", {**box_object("a", (0.5, 0, 0), (0.1, 0.1, 0.1)), "pose": {"position": {"x": math.nan}}}),
        ("unknown frame", {**box_object("a", (0.5, 0, 0), (0.1, 0.1, 0.1)), "header": {"frame_id": "map"}}),
        ("huge box", box_object("a", (0.5, 0, 0), (1e6, 1.0, 1.0))),
        ("negative size", box_object("a", (0.5, 0, 0), (-1.0, 1.0, 1.0))),
        ("no shapes", {"id": "a", "operation": 0}),
        ("slash in name", box_object("a/b", (0.5, 0, 0), (0.1, 0.1, 0.1))),
        (
            "bad primitive type",
            {**box_object("a", (0.5, 0, 0), (0.1, 0.1, 0.1)), "primitives": [{"type": 9, "dimensions": [1.0]}]},
        ),
        (
            "triangle index out of range",
            {
                "id": "a",
                "meshes": [{"vertices": [{"x": 0, "y": 0, "z": 0}] * 3, "triangles": [{"vertex_indices": [0, 1, 7]}]}],
                "mesh_poses": [{}],
            },
        ),
        (
            "huge mesh",
            {
                "id": "a",
                "meshes": [
                    {
                        "vertices": [{"x": 0.0, "y": 0.0, "z": 0.0}] * (MAX_VERTICES + 1),
                        "triangles": [{"vertex_indices": [0, 1, 2]}],
                    }
                ],
                "mesh_poses": [{}],
            },
        ),
        ("planes", {**box_object("a", (0.5, 0, 0), (0.1, 0.1, 0.1)), "planes": [{"coef": [0, 0, 1, 0]}]}),
        ("bad operation", {**box_object("a", (0.5, 0, 0), (0.1, 0.1, 0.1)), "operation": 7}),
    ],
)
def test_hostile_collision_objects_change_nothing(core: MoveGroupCore, label: str, data: dict[str, Any]) -> None:
    version = core.scene.version
    with pytest.raises(UpdateRefused):
        core.updates.collision_object(data)
    assert core.scene.version == version and not core.scene.objects


def test_a_flood_of_objects_stops_at_the_bound(core: MoveGroupCore) -> None:
    for index in range(MAX_OBJECTS):
        core.updates.collision_object(box_object(f"b{index}", (2.0 + index * 0.01, 2.0, 0.0), (0.005, 0.005, 0.005)))
    with pytest.raises(UpdateRefused, match=str(MAX_OBJECTS)):
        core.updates.collision_object(box_object("one_more", (3.0, 3.0, 0.0), (0.01, 0.01, 0.01)))
    assert len(core.scene.objects) == MAX_OBJECTS


def test_an_attached_object_moves_with_the_tool_and_is_put_back(core: MoveGroupCore) -> None:
    core.updates.attached_object(
        {"link_name": "tcp", "touch_links": ["left_finger", "right_finger"],
         "object": {**box_object("tool", (0.0, 0.0, 0.05), (0.03, 0.03, 0.1)), "header": {"frame_id": "tcp"}}}
    )  # fmt: skip
    assert core.scene.objects["tool"].link == "tcp"
    assert core.contacts(None) == []
    outcome = core.plan({"goal_constraints": [joint_constraints(shoulder_pan_joint=0.7)]})
    assert outcome.code == Code.SUCCESS, outcome.message
    core.updates.attached_object({"object": {"id": "tool", "operation": 1}})
    assert core.scene.objects["tool"].link == ""
    with pytest.raises(UpdateRefused) as refused:
        core.updates.attached_object({"link_name": "hand", "object": {"id": "tool"}})
    assert refused.value.code == Code.INVALID_LINK_NAME


def test_an_objects_allowed_pairs_stay_through_attach_and_detach(core: MoveGroupCore) -> None:
    # as in MoveIt, whose matrix names objects: a cube allowed to rest on a link is lifted off it attached
    core.updates.collision_object(box_object("cube", (2.0, 2.0, 0.0), (0.04, 0.04, 0.04)))
    core.updates.allowed_matrix(
        {"entry_names": ["cube", "base_link"], "entry_values": [{"enabled": [False, True]}, {"enabled": [True, False]}]}
    )
    assert core.scene.runtime_allowed == {("base_link", "cube")}
    core.updates.attached_object({"link_name": "tcp", "touch_links": ["left_finger"], "object": {"id": "cube"}})
    assert core.scene.objects["cube"].link == "tcp" and core.scene.runtime_allowed == {("base_link", "cube")}
    assert ("attached/cube", "base_link") in {tuple(sorted(p)) for p in core.scene.allowed}
    core.updates.attached_object({"object": {"id": "cube", "operation": 1}})
    assert core.scene.objects["cube"].link == "" and core.scene.runtime_allowed == {("base_link", "cube")}


# ---------------------------------------------------------------------- kinematics, validity, Cartesian
def test_fk_and_ik_against_pinocchio(core: MoveGroupCore) -> None:
    q = np.array([0.3, -0.7, 1.2, -0.4, 0.9, 0.2, 0.0])
    state = {"joint_state": {"name": list(core.names), "position": list(q)}}
    (pose,) = core.fk("base_link", ["tcp"], state)
    np.testing.assert_allclose(pose, pinocchio_pose(q, core.names), atol=1e-9)
    solution = core.ik(
        {"pose_stamped": {"header": {"frame_id": "base_link"}, "pose": pose_data(pose)}, "avoid_collisions": True}
    )
    reached = pinocchio_pose(np.array([solution[n] for n in core.names]), core.names)
    np.testing.assert_allclose(reached, pose, atol=1e-4)
    with pytest.raises(Refused) as refused:
        core.fk("", ["hand"], None)
    assert refused.value.code == Code.INVALID_LINK_NAME
    far = np.eye(4)
    far[:3, 3] = [5.0, 0.0, 0.0]
    with pytest.raises(Refused) as refused:
        core.ik({"pose_stamped": {"pose": pose_data(far)}, "timeout": {"sec": 0, "nanosec": 200_000_000}})
    assert refused.value.code == Code.NO_IK_SOLUTION


def test_state_validity_names_the_contacts(core: MoveGroupCore) -> None:
    assert core.contacts(None) == []
    tcp = core.link_pose("tcp")[:3, 3]
    core.updates.collision_object(box_object("block", tuple(tcp), (0.05, 0.05, 0.05)))
    found = core.contacts(None)
    assert any("world/block" in (a, b) for a, b, _ in found)
    outside = core.contacts({"joint_state": {"name": ["elbow_joint"], "position": [40.0]}})
    assert ("elbow_joint", "joint limits") in [(a, b) for a, b, _ in outside]


def test_cartesian_path_fraction(core: MoveGroupCore) -> None:
    begin = core.link_pose("tcp")
    target = begin.copy()
    target[:3, 3] += [0.0, 0.1, 0.0]
    full = core.cartesian(
        {"waypoints": [pose_data(target)], "max_step": 0.01, "jump_threshold": 0.0, "avoid_collisions": True}
    )
    assert full.code == Code.SUCCESS and full.fraction == pytest.approx(1.0)
    wall = begin[:3, 3] + [0.0, 0.09, 0.0]
    core.updates.collision_object(box_object("wall", tuple(wall), (0.1, 0.01, 0.1)))
    cut = core.cartesian(
        {"waypoints": [pose_data(target)], "max_step": 0.01, "jump_threshold": 0.0, "avoid_collisions": True}
    )
    assert cut.code == Code.SUCCESS and 0.0 < cut.fraction < 1.0 and cut.message
    assert core.cartesian({"waypoints": [], "max_step": 0.01}).code == Code.INVALID_GOAL_CONSTRAINTS
