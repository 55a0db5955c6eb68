"""The ``bb-robot`` command line: :func:`main` and one module per subcommand.

Each subcommand module has ``register(subparsers)``, which adds its parser with ``handler=run``;
:mod:`bb_robot.cli.main` puts them together.  :mod:`bb_robot.cli.common` holds what they share:
options, JSON and table output, exit codes.
"""

from bb_robot.cli.main import EXIT_INPUT, EXIT_OK, EXIT_USAGE, build_parser, default_tip, format_tree, main

__all__ = ["EXIT_INPUT", "EXIT_OK", "EXIT_USAGE", "build_parser", "default_tip", "format_tree", "main"]
