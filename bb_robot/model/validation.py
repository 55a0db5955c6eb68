"""Checks that a set of links and joints forms exactly one kinematic tree.

:func:`find_problems` collects every offence (not just the first) so a user
fixes a broken description in one pass; :func:`resolve_root` returns the
single root link.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from bb_robot.model.errors import TreeProblem


def find_problems(
    link_names: Sequence[str],
    joint_edges: Sequence[tuple[str, str, str]],
    mimics: Mapping[str, str],
    fixed_joints: frozenset[str] = frozenset(),
) -> tuple[list[TreeProblem], list[str]]:
    """Return ``(problems, warnings)`` for a candidate tree.

    ``joint_edges`` holds ``(joint, parent_link, child_link)`` in declaration
    order; ``mimics`` maps each mimic joint to the joint it follows;
    ``fixed_joints`` names joints that cannot be mimicked or mimic.  Problems
    make the robot invalid; warnings (a joint sharing a link's name) do not.
    """
    problems: list[TreeProblem] = []
    warnings: list[str] = []
    links = set(link_names)
    for name, count in Counter(link_names).items():
        if count > 1:
            problems.append(TreeProblem("duplicate_link", (name,), f"link '{name}' is defined {count} times"))
    joint_names = [j for j, _, _ in joint_edges]
    for name, count in Counter(joint_names).items():
        if count > 1:
            problems.append(TreeProblem("duplicate_joint", (name,), f"joint '{name}' is defined {count} times"))
    for name in sorted(links.intersection(joint_names)):
        warnings.append(
            f"joint '{name}' shares its name with a link; lookups and paths keep them apart "
            "by kind, but frame ids in TF name links only"
        )

    parents: dict[str, list[str]] = {}
    for joint, parent, child in joint_edges:
        for role, link in (("parent", parent), ("child", child)):
            if link not in links:
                problems.append(
                    TreeProblem(
                        "undefined_link",
                        (joint, link),
                        f"joint '{joint}' names {role} link '{link}', which is not defined",
                    )
                )
        parents.setdefault(child, []).append(joint)
    for child, joints in parents.items():
        if len(joints) > 1 and child in links:
            problems.append(
                TreeProblem(
                    "multiple_parents",
                    (child, *joints),
                    f"link '{child}' has {len(joints)} parent joints "
                    f"({', '.join(repr(j) for j in joints)}); a tree allows one",
                )
            )

    roots = [link for link in dict.fromkeys(link_names) if link not in parents]
    if not links:
        problems.append(
            TreeProblem(
                "no_root",
                (),
                "the robot has no links, so there is no root link: define at least one link",
            )
        )
    elif not roots:
        hanging = list(dict.fromkeys(p for _, p, _ in joint_edges if p not in links))
        reason = (
            f"the tree hangs from undefined link(s) {', '.join(repr(h) for h in hanging)}"
            if hanging
            else "the joints form a loop"
        )
        problems.append(TreeProblem("no_root", (), f"every link has a parent joint, so there is no root: {reason}"))
    elif len(roots) > 1:
        problems.append(
            TreeProblem(
                "multiple_roots",
                tuple(roots),
                f"{len(roots)} links have no parent joint ({', '.join(repr(r) for r in roots)}): "
                "connect them so exactly one root remains",
            )
        )
    problems.extend(_cycles(joint_edges, links))
    problems.extend(_mimic_problems(set(joint_names), mimics, fixed_joints))
    return problems, warnings


def _cycles(joint_edges: Sequence[tuple[str, str, str]], links: set[str]) -> list[TreeProblem]:
    """Return one problem per kinematic loop, naming the links around it in order."""
    parent_of = {child: parent for _, parent, child in joint_edges if child in links}
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = done
    found: list[TreeProblem] = []
    for start in parent_of:
        walk: list[str] = []
        link: str | None = start
        while link is not None and state.get(link, 0) == 0:
            state[link] = 1
            walk.append(link)
            link = parent_of.get(link)
        if link is not None and state.get(link) == 1:
            loop = walk[walk.index(link) :]
            loop.reverse()
            found.append(
                TreeProblem(
                    "cycle",
                    tuple(loop),
                    "the joints form a kinematic loop through links " + " -> ".join(f"'{x}'" for x in [*loop, loop[0]]),
                )
            )
        for visited in walk:
            state[visited] = 2
    return found


def _mimic_problems(joints: set[str], mimics: Mapping[str, str], fixed_joints: frozenset[str]) -> list[TreeProblem]:
    """Return problems with mimic references: unknown sources, fixed joints and loops."""
    problems: list[TreeProblem] = []
    for follower, source in mimics.items():
        if source not in joints:
            problems.append(
                TreeProblem(
                    "unknown_mimic_source",
                    (follower, source),
                    f"joint '{follower}' mimics '{source}', which is not a joint of this robot",
                )
            )
        elif source in fixed_joints or follower in fixed_joints:
            problems.append(
                TreeProblem(
                    "invalid_mimic",
                    (follower, source),
                    f"joint '{follower}' mimics '{source}', but a fixed joint can neither mimic nor be mimicked",
                )
            )
    reported: set[str] = set()
    for start in mimics:
        seen: list[str] = []
        joint: str | None = start
        while joint is not None and joint in mimics and joint not in seen:
            seen.append(joint)
            joint = mimics[joint]
        if joint is not None and joint in seen and joint not in reported:
            loop = seen[seen.index(joint) :]
            reported.update(loop)
            problems.append(
                TreeProblem(
                    "mimic_cycle",
                    tuple(loop),
                    "mimic joints follow each other in a loop: " + " -> ".join(f"'{x}'" for x in [*loop, loop[0]]),
                )
            )
    return problems
