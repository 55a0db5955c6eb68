"""Helpers shared by bb_robot's tests (importable as ``helpers``: pytest puts ``test/`` on the path)."""
