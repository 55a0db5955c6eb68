"""The subcommands of the ``bb-robot`` command line, one module each.

Each module has ``register(subparsers)``, which adds its parser with ``handler=run``;
:mod:`bb_robot.cli` puts them together.  :mod:`bb_robot.commands.common` holds what they share:
loading any description (URDF, xacro, SDF model or world), options, JSON and table output.
"""
