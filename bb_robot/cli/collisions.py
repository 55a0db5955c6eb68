"""``bb-robot collisions``: a robot's allowed-collision matrix, computed (MoveIt's categories) or read from an SRDF.

Without ``--srdf`` the matrix is computed (``--samples`` random configurations, ``--seed``) and,
with at least the default 10,000 samples, stored in the cache the driver reads
(:mod:`bb_robot.collision.cache`).  ``--write-srdf`` writes it as an SRDF.  The report lists each
disabled pair with its reason, and the pairs left checked.
"""

from __future__ import annotations

import argparse
import sys

from bb_robot.cli import common
from bb_robot.collision.cache import store
from bb_robot.collision.matrix import DEFAULT_SAMPLES, CollisionMatrix, compute_matrix
from bb_robot.collision.model import LinkPair
from bb_robot.collision.sources import collision_model
from bb_robot.collision.srdf import read_srdf, write_srdf

JSON_SHAPE = (
    '{"robot": name, "origin": "computed|srdf", "samples": n, "seed": s, '
    '"disabled": [{"link1", "link2", "reason", "fraction"}], "checked": [[link1, link2], ...], '
    '"srdf_written": path|null, "cached": path|null}'
)


def checked_pairs(links: tuple[str, ...], matrix: CollisionMatrix) -> list[LinkPair]:
    """Every pair of links with geometry that the matrix leaves checked, sorted."""
    pairs = {(a, b) if a < b else (b, a) for i, a in enumerate(links) for b in links[i + 1 :]}
    return sorted(p for p in pairs if p not in matrix.disabled)


def run(args: argparse.Namespace) -> int:
    if args.samples < 0:
        raise common.UsageError(f"--samples must be >= 0, got {args.samples}")
    loaded = common.load_from_args(args)
    for warning in loaded.warnings:
        common.warn(warning)
    model = collision_model(loaded, args.resource_path)
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
        write_srdf(matrix, args.write_srdf)
    checked = checked_pairs(model.links_with_geometry, matrix)
    if args.json:
        common.print_json(
            {
                "robot": loaded.robot.name,
                "origin": origin,
                "samples": matrix.samples,
                "seed": matrix.seed,
                "disabled": [
                    {"link1": a, "link2": b, "reason": reason, "fraction": matrix.fractions.get((a, b))}
                    for (a, b), reason in matrix.disabled.items()
                ],
                "checked": [list(p) for p in checked],
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
        [a, b, reason, "" if (a, b) not in matrix.fractions else f"{matrix.fractions[(a, b)]:.3f}"]
        for (a, b), reason in matrix.disabled.items()
    ]
    rows += [
        [a, b, "checked", f"{matrix.fractions[(a, b)]:.3f}" if (a, b) in matrix.fractions else ""] for a, b in checked
    ]
    print(common.table(["link1", "link2", "reason", "in contact"], rows))
    if args.write_srdf:
        print(f"\nwrote {args.write_srdf}")
    if cached:
        print(f"cached as {cached}")
    return common.EXIT_OK


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
