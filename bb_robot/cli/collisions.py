"""``bb-robot collisions``: a robot's allowed-collision matrix, computed (MoveIt's categories) or read from an SRDF.

Without ``--srdf`` the matrix is computed (``--samples`` random configurations per pair, ``--seed``)
and, with at least the default 10,000 samples, stored in the cache the driver reads
(:mod:`bb_robot.collision.cache`).  ``--write-srdf`` writes it as an SRDF.  The report lists each
disabled pair with its reason (``Never`` pairs with their margin), and the pairs left checked
(those the closest-approach search found in contact with their witness and depth).

``--srdf IN --verify`` checks the pairs the SRDF disables instead (:mod:`bb_robot.collision.verify`):
each that can touch with a witness and its depth; exit 1 when any can.
"""

from __future__ import annotations

import argparse
import sys

from bb_robot.cli import common
from bb_robot.collision.cache import store
from bb_robot.collision.matrix import DEFAULT_SAMPLES, CollisionMatrix, compute_matrix
from bb_robot.collision.model import CollisionModel, LinkPair
from bb_robot.collision.sources import collision_model
from bb_robot.collision.srdf import read_srdf, write_srdf
from bb_robot.collision.verify import JUSTIFIED, TOUCHES, PairCheck, summary, verify_srdf

JSON_SHAPE = (
    '{"robot": name, "origin": "computed|srdf", "samples": n, "seed": s, '
    '"disabled": [{"link1", "link2", "reason", "fraction", "margin"}], "checked": [[link1, link2], ...], '
    '"reached": [{"link1", "link2", "witness": {joint: value}, "depth"}], '
    '"srdf_written": path|null, "cached": path|null}; with --verify: {"robot", "srdf", "origin": '
    '"searched|cache|stamp", "touching": n, "pairs": [{"link1", "link2", "reason", "status": '
    '"justified|apart|touches", "category", "witness", "depth", "margin", "moving"}]}'
)


def checked_pairs(links: tuple[str, ...], matrix: CollisionMatrix) -> list[LinkPair]:
    """Every pair of links with geometry that the matrix leaves checked, sorted."""
    pairs = {(a, b) if a < b else (b, a) for i, a in enumerate(links) for b in links[i + 1 :]}
    return sorted(p for p in pairs if p not in matrix.disabled)


def millimetres(metres: float | None) -> str:
    """``12.3 mm`` (empty for ``None``)."""
    return "" if metres is None else f"{metres * 1000:.1f} mm"


def run(args: argparse.Namespace) -> int:
    if args.samples < 0:
        raise common.UsageError(f"--samples must be >= 0, got {args.samples}")
    if args.verify and not args.srdf:
        raise common.UsageError("--verify checks an SRDF: give it with --srdf IN")
    loaded = common.load_from_args(args)
    for warning in loaded.warnings:
        common.warn(warning)
    model = collision_model(loaded, args.resource_path)
    if args.verify:
        return run_verify(args, loaded.robot.name, model, loaded.description)
    cached = None
    if args.srdf:
        matrix, origin = read_srdf(args.srdf, loaded.robot.links), "srdf"
    else:
        interactive = sys.stderr.isatty() and not args.json

        def progress(done: int, total: int) -> None:
            if interactive:
                print(f"\rsampling: {done}/{total}", end="" if done < total else "\n", file=sys.stderr)

        matrix, origin = compute_matrix(model, samples=args.samples, seed=args.seed, progress=progress), "computed"
        if args.samples >= DEFAULT_SAMPLES:
            cached = str(store(matrix, loaded.description))
    if args.write_srdf:
        write_srdf(matrix, args.write_srdf, loaded.description if origin == "computed" else None)
    names = model.fk.joint_names
    checked = checked_pairs(model.links_with_geometry, matrix)
    if args.json:
        common.print_json(
            {
                "robot": loaded.robot.name,
                "origin": origin,
                "samples": matrix.samples,
                "seed": matrix.seed,
                "disabled": [
                    {
                        "link1": a,
                        "link2": b,
                        "reason": reason,
                        "fraction": matrix.fractions.get((a, b)),
                        "margin": matrix.margins.get((a, b)),
                    }
                    for (a, b), reason in matrix.disabled.items()
                ],
                "checked": [list(p) for p in checked],
                "reached": [
                    {
                        "link1": a,
                        "link2": b,
                        "witness": dict(zip(names, (float(v) for v in found.witness), strict=True)),
                        "depth": found.depth,
                    }
                    for (a, b), found in matrix.reached.items()
                    if found.witness is not None
                ],
                "srdf_written": args.write_srdf,
                "cached": cached,
            }
        )
        return common.EXIT_OK
    links = len(model.links_with_geometry)
    counts: dict[str, int] = {}
    for reason in matrix.disabled.values():
        counts[reason] = counts.get(reason, 0) + 1
    how = (
        f"computed from {matrix.samples} samples, seed {matrix.seed}"
        if origin == "computed"
        else f"read from {args.srdf}"
    )
    print(f"robot '{loaded.robot.name}' ({args.file}): {links} links with collision geometry; matrix {how}")
    print(
        f"{len(matrix.disabled)} pairs disabled ("
        + ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items()))
        + f"), {len(checked)} checked"
    )
    print()
    rows = [
        [
            a,
            b,
            reason,
            "" if (a, b) not in matrix.fractions else f"{matrix.fractions[(a, b)]:.3f}",
            millimetres(matrix.margins.get((a, b))),
        ]
        for (a, b), reason in matrix.disabled.items()
    ]
    rows += [
        [
            a,
            b,
            "checked" if (a, b) not in matrix.reached else "checked (searched)",
            f"{matrix.fractions[(a, b)]:.3f}" if (a, b) in matrix.fractions else "",
            "" if (a, b) not in matrix.reached else f"in contact, depth {millimetres(matrix.reached[(a, b)].depth)}",
        ]
        for a, b in checked
    ]
    print(common.table(["link1", "link2", "reason", "in contact", "margin"], rows))
    if matrix.reached:
        print(
            f"\n{len(matrix.reached)} pairs never in contact in the samples were found in contact by the "
            "closest-approach search, and stay checked (--json gives each one's witness)"
        )
    if args.write_srdf:
        print(f"\nwrote {args.write_srdf}")
    if cached:
        print(f"cached as {cached}")
    return common.EXIT_OK


def run_verify(args: argparse.Namespace, robot: str, model: CollisionModel, description: str) -> int:
    """``--verify``: check the pairs the SRDF disables; exit 1 when any can touch."""
    interactive = sys.stderr.isatty() and not args.json

    def progress(done: int, total: int) -> None:
        if interactive:
            print(f"\rsampling: {done}/{total}", end="" if done < total else "\n", file=sys.stderr)

    verdict = verify_srdf(model, description, args.srdf, progress)
    touching = verdict.touching
    if args.json:
        common.print_json(
            {
                "robot": robot,
                "srdf": args.srdf,
                "origin": verdict.origin,
                "touching": len(touching),
                "pairs": [c.as_json() for c in verdict.checks],
            }
        )
        return common.EXIT_INPUT if touching else common.EXIT_OK
    counts = summary(verdict.checks)
    print(
        f"robot '{robot}' ({args.file}): {args.srdf} disables {len(verdict.checks)} pairs: "
        f"{counts[JUSTIFIED]} justified (our Adjacent, Default or Always), {counts['apart']} apart, "
        f"{counts[TOUCHES]} can touch"
        + (" (the file's own stamp: computed by bb-robot for this description)" if verdict.origin == "stamp" else "")
    )
    print()
    print(
        common.table(["link1", "link2", "SRDF reason", "verdict", "detail"], [_verify_row(c) for c in verdict.checks])
    )
    if touching:
        print(f"\n{len(touching)} disabled pairs can touch: nothing would check them; remove them from the SRDF")
        return common.EXIT_INPUT
    return common.EXIT_OK


def _verify_row(check: PairCheck) -> list[str]:
    if check.status == JUSTIFIED:
        detail = f"our {check.category}" if check.category != "no geometry" else "a link has no collision geometry"
    elif check.status == TOUCHES:
        detail = f"witness {check.witness_text()}"
    else:
        detail = f"margin {millimetres(check.margin)}" if check.margin is not None else ""
    return [check.pair[0], check.pair[1], check.reason, check.status, detail]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "collisions",
        help="compute a robot's allowed-collision matrix (MoveIt's categories), or read and write an SRDF",
        description="The allowed-collision matrix: link pairs that are adjacent, in contact at the default pose, "
        "in contact in more than 95%% of random configurations (Always) or in none (Never) are disabled; the "
        "rest are checked. 'in contact' is the fraction of sampled configurations where the pair touched.",
    )
    common.add_input_options(parser)
    parser.add_argument("--srdf", metavar="IN", help="read the matrix from this SRDF's <disable_collisions> instead")
    parser.add_argument("--write-srdf", metavar="OUT", help="write the matrix as an SRDF file")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="check the pairs the --srdf file disables: print those that can touch with a witness configuration "
        "and the penetration depth; exit 1 when any can",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        metavar="N",
        help=f"random configurations for Always/Never (default {DEFAULT_SAMPLES}; with fewer, no cache entry)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="random seed (default 0): same seed, same matrix"
    )
    common.add_json_option(parser, JSON_SHAPE)
    parser.set_defaults(handler=run)
