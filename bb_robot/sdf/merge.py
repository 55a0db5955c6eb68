"""Merge-includes (``<include merge="true">``): the included model's content spliced into
the including model through the proxy frame ``_merged__<name>__model__``, as libsdformat does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bb_robot.sdf.elements import PoseSpec, SdfAxis, SdfFrame, SdfJoint, SdfLink, SdfModel, SdfPlugin
from bb_robot.sdf.frames import canonical_link_name, pose_in_model_with_placement


def _rescope(model: SdfModel, prefix: str) -> SdfModel:
    """Return ``model`` (built with its own name as scope) with every scoped name under ``prefix``."""
    scoped = f"{prefix}::{model.name}" if prefix else model.name
    if scoped == model.scoped_name:
        return model
    return replace(model, scoped_name=scoped, models=tuple(_rescope(m, scoped) for m in model.models))


@dataclass(frozen=True)
class MergedParts:
    """What a merge-include brings into the including model (the proxy frame first among ``frames``)."""

    links: tuple[SdfLink, ...]
    joints: tuple[SdfJoint, ...]
    frames: tuple[SdfFrame, ...]
    models: tuple[SdfModel, ...]
    plugins: tuple[SdfPlugin, ...]


def merged_proxy_name(model_name: str) -> str:
    """The proxy frame a merge-include adds for the merged model's frame (libsdformat's name)."""
    return f"_merged__{model_name}__model__"


def merge_parts(model: SdfModel, parent_scope: str) -> MergedParts:
    """Return the content of a merge-included ``model`` rewritten for its parent, with the proxy frame."""
    proxy = merged_proxy_name(model.name)
    canonical = canonical_link_name(model) or ""
    transform = model.pose.transform
    if model.placement_frame:
        transform = pose_in_model_with_placement(model, model.pose.transform)
    relative_to = model.pose.relative_to or ("__model__" if parent_scope else "world")
    frame = SdfFrame(proxy, canonical, PoseSpec(transform, relative_to, model.pose.where), model.where)

    def to_proxy(name: str, if_empty: bool) -> str:
        return proxy if name == "__model__" or (if_empty and not name) else name

    links = tuple(
        replace(link, pose=replace(link.pose, relative_to=to_proxy(link.pose.relative_to, True)))
        for link in model.links
    )
    frames = tuple(
        replace(
            f,
            attached_to=to_proxy(f.attached_to, True),
            pose=replace(f.pose, relative_to=to_proxy(f.pose.relative_to, False)),
        )
        for f in model.frames
    )

    def axis(a: SdfAxis | None) -> SdfAxis | None:
        return None if a is None else replace(a, expressed_in=to_proxy(a.expressed_in, False))

    joints = tuple(
        replace(
            j,
            parent=to_proxy(j.parent, False),
            child=to_proxy(j.child, False),
            pose=replace(j.pose, relative_to=to_proxy(j.pose.relative_to, False)),
            axis=axis(j.axis),
            axis2=axis(j.axis2),
        )
        for j in model.joints
    )
    models = tuple(
        _rescope(replace(m, pose=replace(m.pose, relative_to=to_proxy(m.pose.relative_to, True))), parent_scope)
        for m in model.models
    )
    return MergedParts(links, joints, (frame, *frames), models, model.plugins)
