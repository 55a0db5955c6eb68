"""The SRDF each bundled model ships (``models/<name>.srdf``): its allowed-collision matrix, computed.

``scripts/generate_models`` runs this after :mod:`bb_robot.authoring.bundled` has written the
models: each bundled URDF (and the arm of ``bb_arm_world.sdf``) gets the matrix of
:func:`~bb_robot.collision.matrix.compute_matrix` with MoveIt's defaults and seed 0, beside it,
where the driver and ``bb-robot check`` look first (:func:`bb_robot.collision.cache.companion_srdf`).
Each is stamped for its model's description (:func:`bb_robot.collision.srdf.srdf_text`): the
verification the driver runs on an SRDF before trusting it is shipped with the file, so it costs
nothing at start-up (:mod:`bb_robot.collision.verify`).
``--check`` writes nothing and fails when a committed file differs (``test/collision`` checks the same).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from bb_robot.authoring.bundled import MODELS, sync_files
from bb_robot.collision.matrix import compute_matrix
from bb_robot.collision.sources import collision_model
from bb_robot.collision.srdf import srdf_text
from bb_robot.loading import load_file

#: The seed of the shipped matrices.
SEED = 0


def srdf_name(model: str) -> str:
    """``bb_arm.urdf`` → ``bb_arm.srdf``."""
    return Path(model).with_suffix(".srdf").name


def bundled_srdf(model_path: Path) -> str:
    """The SRDF text of one bundled model file (10,000 samples, seed :data:`SEED`), stamped for its description."""
    loaded = load_file(str(model_path))
    return srdf_text(compute_matrix(collision_model(loaded), seed=SEED), loaded.description)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="generate_models (SRDF)",
        description="Write the SRDF (allowed-collision matrix) beside each bundled model. Exit status: 0 written "
        "(or up to date with --check), 1 --check found a file that differs.",
    )
    parser.add_argument(
        "--output-dir", type=Path, default=Path(__file__).resolve().parents[2] / "models", help="default: models/"
    )
    parser.add_argument("--check", action="store_true", help="write nothing; fail if a file differs")
    args = parser.parse_args(argv)
    texts = {srdf_name(model): bundled_srdf(args.output_dir / model) for model in MODELS}
    return sync_files(texts, args.output_dir, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
