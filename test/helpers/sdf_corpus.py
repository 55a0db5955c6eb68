"""What the SDF loader does with each SDF file of the shared corpus: the scope and joints of the files
that load without a scope, the typed error (and what its message names) of those it rejects.

``test/sdf/test_sdf_corpus.py`` checks every entry (and that every corpus file has one); other
tests use the lists to know which files to expect a model from.
"""

from __future__ import annotations

from bb_robot.sdf import errors
from helpers.robots import UR3E_JOINTS

IIWA_JOINTS = tuple(f"joint{i}" for i in range(1, 8))

# file -> (selected scope, independent joints) for the files that load without a scope
LOADS: dict[str, tuple[str, tuple[str, ...]]] = {
    "gz_sim/examples/worlds/joint_position_controller.sdf": ("joint_position_controller_demo", ("j1",)),
    "gz_sim/examples/worlds/pendulum_links.sdf": ("double_pendulum_with_base", ("upper_joint", "lower_joint")),
    "gz_sim/examples/worlds/world_joint.sdf": ("pendulum", ("world_joint",)),
    "gz_sim/test/worlds/include_connected_nested_models.sdf": (
        "include_connected_nested_new_name::nested_models_new_name::model_00",
        ("joint_01",),
    ),
    "gz_sim/test/worlds/models/connected_nested_models/model.sdf": ("connected_nested_models::model_00", ("joint_01",)),
    "gz_sim/test/worlds/models/include_connected_nested/model.sdf": (
        "include_connected_nested::nested_models_new_name::model_00",
        ("joint_01",),
    ),
    "sas_robot_driver_gazebo/sdf/iiwa14.sdf": ("converted_robot", IIWA_JOINTS),
    "sas_robot_driver_gazebo/sdf/iiwa14_position_controller.sdf": ("r820_position_controller::r820", IIWA_JOINTS),
    "sas_robot_driver_gazebo/sdf/ur3e.sdf": ("ur3e", UR3E_JOINTS),
    "sas_robot_driver_gazebo/sdf/ur3e_position_controller.sdf": ("ur3e_position_controller::ur3e", UR3E_JOINTS),
    "sas_robot_driver_gazebo/sdf/ur3e_world.sdf": ("ur3e::ur3e_position_controller::ur3e", UR3E_JOINTS),
    "sdformat/test/integration/model/double_pendulum_kinematics/double_pendulum-1.5.sdf": (
        "double_pendulum_kinematics",
        ("upper_joint", "lower_joint"),
    ),
    "sdformat/test/sdf/double_pendulum.sdf": ("double_pendulum_with_base", ("upper_joint", "lower_joint")),
    "sdformat/test/sdf/joint_axis_in_rotated_frame.sdf": (
        "axis_in_rotated_frame",
        ("wheel_joint", "wheel_joint_exact"),
    ),
    "sdformat/test/sdf/joint_axis_infinite_limits.sdf": (
        "joint_axis_infinite_limits",
        ("default_joint_limits", "infinite_joint_limits_neg", "infinite_joint_limits_inf", "finite_joint_limits"),
    ),
    "sdformat/test/sdf/model_joint_axis_expressed_in.sdf": ("model_joint_axis_expressed_in", ("J1", "J2")),
    "sdformat/test/sdf/nested_model.sdf": ("top_level_model", ("top_level_joint",)),
    "sdformat/test/sdf/world_nested_model.sdf": ("top_level_model", ("top_level_joint",)),
    "synthetic/resources/ur3e_arm/model.sdf": ("ur3e", UR3E_JOINTS),
    "synthetic/sdf_x_axis_arm.sdf": ("x_axis_arm", ("j1", "j2")),
    "synthetic/sdf_z_axis_via_rotation.sdf": ("z_axis_rotated", ("j1", "j2")),
}

# file -> (error class, substrings of the message besides the file name)
REJECTS: dict[str, tuple[type[errors.SdfError], tuple[str, ...]]] = {
    # several candidates at the same depth: the scopes are listed
    "gz_sim/examples/worlds/joint_trajectory_controller.sdf": (
        errors.ScopeError,
        ("'RR_position_control', 'RR_velocity_control', 'RR_effort_control'", "model_scope"),
    ),
    "gz_sim/examples/worlds/mimic_fast_slow_pendulums_world.sdf": (
        errors.ScopeError,
        ("3 models", "'pendulum_with_base'", "'pendulum_with_base_mimic_fast_follows_slow'"),
    ),
    "gz_sim/examples/worlds/nested_model_joint_positions.sdf": (
        errors.ScopeError,
        ("'model2::model21'", "'model4::model42'", "same nesting depth"),
    ),
    "sdformat/test/sdf/placement_frame.sdf": (
        errors.ScopeError,
        ("'parent_model_include::placement_frame_using_link'", "same nesting depth"),
    ),
    "synthetic/sdf_world_two_ur3e_includes.sdf": (errors.ScopeError, ("'left_arm', 'right_arm'", "model_scope")),
    # no model with links and a movable joint
    "gz_sim/examples/worlds/nested_model.sdf": (errors.ScopeError, ("no model has both links", "'model_00::model_01'")),
    "gz_sim/test/worlds/models/scheme_resource_uri/model.sdf": (errors.ScopeError, ("'scheme_resource_uri'",)),
    "gz_sim/test/worlds/models/sphere/model.sdf": (errors.ScopeError, ("'sphere'",)),
    "gz_sim/test/worlds/resource_paths.sdf": (errors.ScopeError, ("'scheme_resource_uri'",)),
    "sas_robot_driver_gazebo/sdf/reference_frame.sdf": (errors.ScopeError, ("'frame'",)),
    "sdformat/test/integration/model/nested_include/top_camera/top_camera.sdf": (errors.ScopeError, ("top_camera",)),
    "sdformat/test/integration/model/nested_include/top_model/top_model.sdf": (errors.ScopeError, ("top_model",)),
    "sdformat/test/integration/model/nested_include/wheel/wheel.sdf": (errors.ScopeError, ("'wheel'",)),
    "sdformat/test/integration/model/test_model/model.sdf": (errors.ScopeError, ("'test_model'",)),
    "sdformat/test/integration/model/test_model_with_ns/model.sdf": (errors.ScopeError, ("test_model_with_ns",)),
    "sdformat/test/sdf/includes.sdf": (errors.ScopeError, ("'override_model_name'", "'test_model_with_file'")),
    "sdformat/test/sdf/joint_child_frame.sdf": (errors.ScopeError, ("'joint_child_frame'",)),
    "sdformat/test/sdf/joint_nested_parent_child.sdf": (errors.ScopeError, ("'joint_nested_parent_child::M1::M2'",)),
    "sdformat/test/sdf/joint_parent_frame.sdf": (errors.ScopeError, ("'joint_parent_frame'",)),
    "sdformat/test/sdf/joint_parent_world.sdf": (errors.ScopeError, ("'joint_parent_world'",)),
    "sdformat/test/sdf/model_canonical_link.sdf": (errors.ScopeError, ("'model_canonical_link'",)),
    "sdformat/test/sdf/model_frame_attached_to.sdf": (errors.ScopeError, ("'model_frame_attached_to'",)),
    "sdformat/test/sdf/model_frame_relative_to.sdf": (errors.ScopeError, ("'model_frame_relative_to'",)),
    "sdformat/test/sdf/model_joint_relative_to.sdf": (errors.ScopeError, ("'model_joint_relative_to'",)),
    "sdformat/test/sdf/model_link_relative_to.sdf": (errors.ScopeError, ("'model_link_relative_to'",)),
    "sdformat/test/sdf/model_multi_nested_model.sdf": (errors.ScopeError, ("'outer_model::mid_model::inner_model'",)),
    "sdformat/test/sdf/nested_model_cross_references.sdf": (errors.ScopeError, ("'top_model::mid_model'",)),
    "sdformat/test/sdf/pose_1_9.sdf": (errors.ScopeError, ("'model_with_empty_pose'", "(8 more)")),
    "sdformat/test/sdf/rotations_in_degrees.sdf": (errors.ScopeError, ("'parent_model'",)),
    "sdformat/test/sdf/rotations_in_quaternions.sdf": (errors.ScopeError, ("'parent_model'",)),
    "sdformat/test/sdf/world_complete.sdf": (errors.ScopeError, ("'model1'",)),
    "sdformat/test/sdf/world_joint_parent_frame.sdf": (errors.ScopeError, ("'parent_model', 'child_model'",)),
    # includes
    "gz_sim/test/worlds/model_nested_include.sdf": (
        errors.IncludeError,
        (":65:", "https://fuel.gazebosim.org/1.0/openrobotics/models/coke can", "not fetched"),
    ),
    "sas_robot_driver_gazebo/sdf/iiwa14_world.sdf": (
        errors.IncludeError,
        (":62:", "'model://frame.sdf'", "cannot be found", "sas_robot_driver_gazebo/sdf/frame.sdf"),
    ),
    "sdformat/test/sdf/includes_missing_model.sdf": (errors.IncludeError, ("'missing_model'", "cannot be found")),
    "synthetic/sdf_include_cycle.sdf": (errors.IncludeError, ("includes itself", "self_include/model.sdf ->")),
    "synthetic/resources/self_include/model.sdf": (errors.IncludeError, ("includes itself",)),
    "synthetic/sdf_include_missing.sdf": (
        errors.IncludeError,
        (":4:", "'model://does_not_exist'", "synthetic/does_not_exist", "synthetic/resources/does_not_exist"),
    ),
    # joint types the robot model has no equivalent for
    "sdformat/test/integration/model/nested_include/base/base.sdf": (
        errors.UnsupportedSdfError,
        ("<joint> 'caster_wheel'", "'ball'"),
    ),
    "sdformat/test/integration/model/nested_include/test_nested_include.sdf": (
        errors.UnsupportedSdfError,
        ("base/base.sdf:", "'ball'"),
    ),
    "sdformat/test/integration/model/test_model_with_frames/model.sdf": (
        errors.UnsupportedSdfError,
        ("<joint> 'J1'", "'universal'"),
    ),
    "sdformat/test/integration/model/test_model_with_frames_no_rotations/model.sdf": (
        errors.UnsupportedSdfError,
        ("'universal'",),
    ),
    "sdformat/test/integration/model/test_nested_model_with_frames/model.sdf": (
        errors.UnsupportedSdfError,
        ("'universal'",),
    ),
    "sdformat/test/sdf/ball_prismatic_joint.sdf": (errors.UnsupportedSdfError, (":13:", "'ball_joint'", "'ball'")),
    # not a model or world
    "sdformat/test/integration/model/test_actor/model.sdf": (errors.SdfStructureError, ("holds no <world>", "'actor'")),
    "sdformat/test/integration/model/test_light/model.sdf": (errors.SdfStructureError, ("'light'",)),
    "sdformat/test/sdf/root_duplicate_models.sdf": (errors.SdfStructureError, ("2 <model>",)),
    "sdformat/test/sdf/root_multiple_models.sdf": (errors.SdfStructureError, ("3 <model>",)),
    "sdformat/test/sdf/empty_noversion.sdf": (errors.SdfStructureError, ("no version attribute",)),
    # values and XML
    "sdformat/test/sdf/bad_syntax_pose.sdf": (errors.InvalidValueError, (":5:", "<model> 'robot1'", "'bad'")),
    "sdformat/test/sdf/joint_axis_xyz_normalization.sdf": (
        errors.InvalidValueError,
        (":39:", "<joint> 'joint4'", "zero length"),
    ),
    "sdformat/test/sdf/invalid_xml_syntax.sdf": (errors.SdfSyntaxError, (":8:", "mismatched tag")),
    # frame semantics, as libsdformat reports them
    "gz_sim/test/worlds/include_nested_models.sdf": (
        errors.FrameError,
        ("nested_models/model.sdf:", "'joint_01'", "the same link"),
    ),
    "gz_sim/test/worlds/models/include_nested/model.sdf": (errors.FrameError, ("'joint_01'",)),
    "gz_sim/test/worlds/models/nested_models/model.sdf": (errors.FrameError, ("'joint_01'",)),
    "sdformat/test/sdf/joint_child_world.sdf": (errors.FrameError, (":7:", "the child is 'world'")),
    "sdformat/test/sdf/joint_invalid_child.sdf": (errors.FrameError, (":7:", '<child>="invalid"', "'link'")),
    "sdformat/test/sdf/joint_invalid_parent.sdf": (errors.FrameError, (":7:", '<parent>="invalid"')),
    "sdformat/test/sdf/joint_invalid_parent_same_as_child.sdf": (errors.FrameError, ("both 'link'",)),
    "sdformat/test/sdf/joint_invalid_self_child.sdf": (errors.FrameError, ("names itself as its child",)),
    "sdformat/test/sdf/model_duplicate_links.sdf": (errors.FrameError, (":7:", "<link> 'link'", "(line 4)")),
    "sdformat/test/sdf/model_frame_invalid_attached_to_cycle.sdf": (
        errors.FrameError,
        ("attached_to cycle", "::F1 -> ", "::F2 -> ", "::F1"),
    ),
    "sdformat/test/sdf/model_invalid_canonical_link.sdf": (
        errors.FrameError,
        (":3:", 'canonical_link="link3"', "'link1', 'link2'"),
    ),
    "sdformat/test/sdf/model_invalid_frame_relative_to_cycle.sdf": (errors.FrameError, ("relative_to cycle",)),
    "sdformat/test/sdf/model_invalid_reserved_names.sdf": (
        errors.FrameError,
        ("4 frame problems", "'__frame__'", "<link> 'world'", "'__link__'", "'__joint__'"),
    ),
    "sdformat/test/sdf/model_without_links.sdf": (errors.FrameError, (":3:", "has no link")),
}
