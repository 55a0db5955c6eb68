"""Seed 000 (``BB.Urdf.Parser``) items the parser tests leave implicit.

The IR types carry exactly the seed's fields (plus the documented extras), nil-able
fields come out as ``None`` when the file leaves them out, and the link and joint lists
are flat whatever the depth of the tree.
"""

from __future__ import annotations

import dataclasses

import pytest

from bb_robot.urdf import ir, parse_string

SEED_FIELDS: dict[type, set[str]] = {
    ir.Robot: {"name", "links", "joints", "transmissions", "materials", "warnings"},
    ir.Link: {"name", "visual", "collisions", "inertial"},
    ir.Visual: {"name", "origin", "geometry", "material"},
    ir.Collision: {"name", "origin", "geometry"},
    ir.Inertial: {"origin", "mass", "inertia"},
    ir.Inertia: {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"},
    ir.Origin: {"xyz", "rpy"},
    ir.Box: {"size"},
    ir.Cylinder: {"radius", "length"},
    ir.Sphere: {"radius"},
    ir.Mesh: {"filename", "scale"},
    ir.Material: {"name", "color", "texture"},
    ir.Color: {"red", "green", "blue", "alpha"},
    ir.Joint: {"name", "type", "parent", "child", "origin", "axis", "limit", "dynamics", "mimic"},
    ir.Limit: {"lower", "upper", "effort", "velocity"},
    ir.Dynamics: {"damping", "friction"},
    ir.Mimic: {"joint", "multiplier", "offset"},
    ir.Transmission: {"name", "joint", "actuator", "reduction"},
}

# Fields we add to the seed's types (see docs/seed-traceability.md, "Deviations").
EXTRA_FIELDS: dict[type, set[str]] = {
    ir.Robot: {"source"},
    ir.Link: {"extra_visuals"},
    ir.Mesh: {"extra_scale_xyz"},
    ir.Joint: {"safety_controller"},
    ir.Transmission: {"offset"},
}


@pytest.mark.parametrize("cls", list(SEED_FIELDS), ids=lambda cls: cls.__name__)
def test_ir_type_has_the_seed_fields_and_only_the_documented_extras(cls: type) -> None:
    fields = {field.name for field in dataclasses.fields(cls)}
    assert fields == SEED_FIELDS[cls] | EXTRA_FIELDS.get(cls, set())


def test_geometry_is_one_of_the_four_seed_shapes() -> None:
    assert set(ir.Geometry.__args__) == {ir.Box, ir.Cylinder, ir.Sphere, ir.Mesh}  # type: ignore[attr-defined]


def test_visual_without_origin_or_material_has_none() -> None:
    doc = parse_string(
        '<robot name="r"><link name="a"><visual><geometry><sphere radius="1"/></geometry></visual></link></robot>'
    )
    assert doc.links[0].visual == ir.Visual(name=None, origin=None, geometry=ir.Sphere(1.0), material=None)


def test_inline_material_without_a_name_has_name_none() -> None:
    doc = parse_string(
        '<robot name="r"><link name="a"><visual><geometry><box size="1 1 1"/></geometry>'
        '<material><color rgba="0.5 0.5 0.5 1"/></material></visual></link></robot>'
    )
    visual = doc.links[0].visual
    assert visual is not None
    assert visual.material == ir.Material(name=None, color=ir.Color(0.5, 0.5, 0.5, 1.0), texture=None)
    assert doc.materials == {}


def test_joint_without_limit_dynamics_mimic_or_origin_has_none() -> None:
    doc = parse_string(
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
    )
    joint = doc.joints[0]
    assert (joint.origin, joint.axis, joint.limit, joint.dynamics, joint.mimic) == (None, None, None, None, None)


def test_link_and_joint_lists_are_flat_and_joints_name_their_links() -> None:
    depth = 6
    links = "".join(f'<link name="l{i}"/>' for i in range(depth + 1))
    joints = "".join(
        f'<joint name="j{i}" type="fixed"><parent link="l{i}"/><child link="l{i + 1}"/></joint>' for i in range(depth)
    )
    doc = parse_string(f'<robot name="r">{links}{joints}</robot>')
    assert [link.name for link in doc.links] == [f"l{i}" for i in range(depth + 1)]
    assert all(isinstance(link, ir.Link) for link in doc.links)
    assert [(j.parent, j.child) for j in doc.joints] == [(f"l{i}", f"l{i + 1}") for i in range(depth)]
    assert all(isinstance(j.parent, str) and isinstance(j.child, str) for j in doc.joints)


def test_a_robot_without_transmissions_or_materials_has_empty_maps() -> None:
    doc = parse_string('<robot name="r"><link name="a"/></robot>')
    assert doc.transmissions == {} and doc.materials == {} and doc.warnings == []
