"""Reading URDF links: visuals, collisions, geometry, meshes, inertials, and materials
(top-level definitions, inline ones, and references resolved once the whole file is read).
"""

from __future__ import annotations

from math import isfinite

from . import ir
from .errors import InvalidValueError
from .reading import ElementReader
from .xml_safe import Node

# Elements that stand at most once in their parent: a later one is reported and skipped (see children_once).
_ONCE_IN_LINK = frozenset({"inertial"})
_ONCE_IN_VISUAL = frozenset({"origin", "geometry", "material"})
_ONCE_IN_COLLISION = frozenset({"origin", "geometry"})
_ONCE_IN_INERTIAL = frozenset({"origin", "mass", "inertia"})


class LinkReader(ElementReader):
    """Reads ``<link>`` and ``<material>`` elements; keeps the materials known so far."""

    def __init__(self, source: str | None) -> None:
        super().__init__(source)
        self.materials: dict[str, ir.Material] = {}
        self.material_lines: dict[str, int] = {}
        self.local_materials: dict[str, ir.Material] = {}
        # visuals whose <material name="x"/> was not defined at top level: resolved at the end
        self.pending: list[tuple[ir.Link, int, str, int]] = []

    # -- materials ---------------------------------------------------------------------

    def material_body(self, node: Node, owner: str) -> tuple[ir.Color | None, str | None]:
        color: ir.Color | None = None
        texture: str | None = None
        for child in node.children:
            tag = child.tag
            if tag == "color":
                if color is not None:
                    self.repeated(child, owner)
                    continue
                if "rgba" not in child.attrib:
                    self.warn(child.line, f"{owner}: <color> has no rgba; ignored")
                    continue
                try:
                    color = self.color(child, owner)
                except InvalidValueError as error:  # a colour is not needed for TF or to drive joints
                    self.tolerate(error, child, "the colour is ignored")
            elif tag == "texture":
                if texture is not None:
                    self.repeated(child, owner)
                    continue
                filename = child.attrib.get("filename")
                if not filename:
                    self.warn(child.line, f"{owner}: <texture> has no filename; ignored")
                    continue
                texture = filename
            else:
                self.unknown(child, owner, "material")
        return color, texture

    def color(self, node: Node, owner: str) -> ir.Color:
        text = node.attrib["rgba"]
        parts = text.split()
        values: list[float] = []
        if len(parts) == 4 and "_" not in text:
            try:
                values = [float(part) for part in parts]
            except ValueError:
                values = []
        if len(values) != 4 or not all(isfinite(v) for v in values):
            raise self.bad_numbers(node, "rgba", text, owner, 4)
        if not all(0.0 <= v <= 1.0 for v in values):
            self.warn(node.line, f'{owner}: <color rgba="{text}"> has components outside [0, 1]')
        return ir.Color(values[0], values[1], values[2], values[3])

    def top_level_material(self, node: Node) -> None:
        name = node.attrib.get("name")
        if not name:
            self.tolerate(
                self.missing(node, "name", None, hint='A top-level <material> needs a name: <material name="blue">.'),
                node,
                "the material is dropped",
            )
            return
        owner = f"material '{name}'"
        color, texture = self.material_body(node, owner)
        material = ir.Material(name=name, color=color, texture=texture)
        known = self.materials.get(name)
        if known is None:
            self.materials[name] = material
            self.material_lines[name] = node.line
        elif known != material:
            self.warn(
                node.line,
                f"material '{name}' is defined again differently (first at line "
                f"{self.material_lines[name]}); the first definition is used",
            )

    def visual_material(self, node: Node, owner: str) -> tuple[ir.Material, bool]:
        """The visual's material and whether it still needs resolving by name."""
        name = node.attrib.get("name") or None
        color, texture = self.material_body(node, owner)
        if color is None and texture is None:
            if name is None:
                self.warn(node.line, f"{owner}: <material> has neither a name nor a colour or texture")
                return ir.Material(), False
            found = self.materials.get(name) or self.local_materials.get(name)
            if found is not None:
                return found, False
            return ir.Material(name=name), True
        material = ir.Material(name=name, color=color, texture=texture)
        if name is not None and name not in self.materials and name not in self.local_materials:
            self.local_materials[name] = material
        return material, False

    def resolve_pending_materials(self) -> None:
        for link, index, name, line in self.pending:
            found = self.local_materials.get(name)
            if found is None:
                self.warn(
                    line,
                    f"link '{link.name}' <visual>: material '{name}' is not defined; kept by name only (no colour)",
                )
                continue
            if index == 0:
                assert link.visual is not None
                link.visual = ir.Visual(link.visual.name, link.visual.origin, link.visual.geometry, found)
            else:
                visual = link.extra_visuals[index - 1]
                link.extra_visuals[index - 1] = ir.Visual(visual.name, visual.origin, visual.geometry, found)

    # -- links ---------------------------------------------------------------------------

    def link(self, node: Node) -> ir.Link:
        name = node.attrib.get("name")
        if not name:
            raise self.missing(node, "name", None, hint='Name the link: <link name="base_link">.')
        owner = f"link '{name}'"
        link = ir.Link(name=name)
        visuals: list[ir.Visual] = []
        for child in self.children_once(node, owner, _ONCE_IN_LINK):
            tag = child.tag
            if tag == "visual":
                visual, pending = self.visual(child, owner)
                if pending is not None:
                    self.pending.append((link, len(visuals), pending, child.line))
                visuals.append(visual)
            elif tag == "collision":
                link.collisions.append(self.collision(child, owner))
            elif tag == "inertial":
                link.inertial = self.inertial(child, owner)
            else:
                self.unknown(child, owner, "link")
        if visuals:
            link.visual = visuals[0]
            if len(visuals) > 1:
                link.extra_visuals = visuals[1:]
                self.warn(
                    node.line,
                    f"{owner} has {len(visuals)} <visual> elements; the first is Link.visual, "
                    f"the other {len(visuals) - 1} are kept in Link.extra_visuals",
                )
        return link

    def visual(self, node: Node, link_owner: str) -> tuple[ir.Visual, str | None]:
        """The visual, and the material name to resolve later (or ``None``)."""
        name = node.attrib.get("name")
        owner = f"{link_owner} <visual>"
        origin: ir.Origin | None = None
        geometry: ir.Geometry | None = None
        geometry_seen = False
        material: ir.Material | None = None
        pending: str | None = None
        for child in self.children_once(node, owner, _ONCE_IN_VISUAL):
            tag = child.tag
            if tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "geometry":
                geometry_seen = True
                geometry = self.geometry(child, owner)
            elif tag == "material":
                material, unresolved = self.visual_material(child, owner)
                if unresolved:
                    pending = material.name
            else:
                self.unknown(child, owner, "visual")
        if not geometry_seen:
            self.warn(node.line, f"{owner} has no <geometry> (URDF requires one); geometry is None")
        return ir.Visual(name=name, origin=origin, geometry=geometry, material=material), pending

    def collision(self, node: Node, link_owner: str) -> ir.Collision:
        name = node.attrib.get("name")
        owner = f"{link_owner} <collision>"
        origin: ir.Origin | None = None
        geometry: ir.Geometry | None = None
        geometry_seen = False
        for child in self.children_once(node, owner, _ONCE_IN_COLLISION):
            tag = child.tag
            if tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "geometry":
                geometry_seen = True
                geometry = self.geometry(child, owner)
            else:
                self.unknown(child, owner, "collision")
        if not geometry_seen:
            self.warn(node.line, f"{owner} has no <geometry> (URDF requires one); geometry is None")
        return ir.Collision(name=name, origin=origin, geometry=geometry)

    def geometry(self, node: Node, owner: str) -> ir.Geometry | None:
        shape: ir.Geometry | None = None
        for child in node.children:
            tag = child.tag
            if tag not in ("box", "cylinder", "sphere", "mesh"):
                self.warn(child.line, f"{owner}: geometry <{tag}> is not supported; skipped")
                continue
            if shape is not None:
                self.warn(child.line, f"{owner}: <geometry> holds more than one shape; <{tag}> is ignored")
                continue
            if tag == "box":
                size = self.vec3(child, "size", owner)
                if size is None:
                    raise self.missing(child, "size", owner, hint='Add size="x y z" in metres.')
                if size[0] < 0 or size[1] < 0 or size[2] < 0:
                    self.warn(child.line, f'{owner}: <box size="{child.attrib["size"]}"> is negative')
                shape = ir.Box(size=size)
            elif tag == "cylinder":
                radius = self.required_number(child, "radius", owner)
                length = self.required_number(child, "length", owner)
                if radius < 0 or length < 0:
                    self.warn(child.line, f"{owner}: <cylinder> has a negative radius or length")
                shape = ir.Cylinder(radius=radius, length=length)
            elif tag == "sphere":
                radius = self.required_number(child, "radius", owner)
                if radius < 0:
                    self.warn(child.line, f"{owner}: <sphere> has a negative radius")
                shape = ir.Sphere(radius=radius)
            else:
                shape = self.mesh(child, owner)
        if shape is None and not node.children:
            self.warn(node.line, f"{owner}: <geometry> is empty; geometry is None")
        return shape

    def mesh(self, node: Node, owner: str) -> ir.Mesh:
        filename = node.attrib.get("filename")
        if not filename:
            raise self.missing(node, "filename", owner, hint='Add filename="package://pkg/meshes/part.stl".')
        scale = self.vec3(node, "scale", owner)
        if scale is None:
            return ir.Mesh(filename=filename)
        if scale[0] == scale[1] == scale[2]:
            return ir.Mesh(filename=filename, scale=scale[0])
        self.warn(
            node.line,
            f'{owner}: <mesh scale="{node.attrib["scale"]}"> is not uniform; '
            "Mesh.scale is the first component and Mesh.extra_scale_xyz keeps all three",
        )
        return ir.Mesh(filename=filename, scale=scale[0], extra_scale_xyz=scale)

    def inertial(self, node: Node, link_owner: str) -> ir.Inertial:
        owner = f"{link_owner} <inertial>"
        origin: ir.Origin | None = None
        mass: float | None = None
        mass_seen = False
        inertia: ir.Inertia | None = None
        for child in self.children_once(node, owner, _ONCE_IN_INERTIAL):
            tag = child.tag
            if tag == "origin":
                origin = self.origin(child, owner)
            elif tag == "mass":
                mass_seen = True
                mass = self.required_number(child, "value", owner)
                if mass < 0:
                    self.warn(
                        child.line,
                        f'{owner}: <mass value="{child.attrib["value"]}"> is negative; '
                        "kept as written (simulators will refuse it)",
                    )
            elif tag == "inertia":
                inertia = self.inertia(child, owner)
            else:
                self.unknown(child, owner, "inertial")
        if not mass_seen:
            self.warn(node.line, f"{owner} has no <mass> (URDF requires one); mass is None")
        if inertia is None:
            self.warn(node.line, f"{owner} has no <inertia> (URDF requires one); all components are 0")
            inertia = ir.Inertia()
        return ir.Inertial(origin=origin, mass=mass, inertia=inertia)

    def inertia(self, node: Node, owner: str) -> ir.Inertia:
        values: dict[str, float] = {}
        absent: list[str] = []
        for key in ir.INERTIA_KEYS:
            value = self.number(node, key, owner)
            if value is None:
                absent.append(key)
                value = 0.0
            values[key] = value
        if absent:
            self.warn(
                node.line,
                f"{owner}: <inertia> has no {', '.join(absent)} (URDF requires all six); read as 0",
            )
        return ir.Inertia(**values)
