"""Functions a lower layer calls and a higher layer provides.

Layers never import upwards (``errors`` → ``model/`` → ``urdf/``, ``sdf/`` → ``loading/`` → ...).
A few documented calls of a lower layer need a higher one:
``SerialManipulator.from_urdf`` (``model/``) reads a file, which is :mod:`bb_robot.loading`'s
job; ``SdfLoadResult.to_urdf`` (``sdf/``) writes URDF, which needs the URDF writer.  The lower
layer declares a :class:`Hook` and calls it; the higher layer registers the function
(:meth:`Hook.register`) when it is imported.  So that the documented call works whatever the
caller imported first, the package root (``bb_robot/__init__.py``, part of no layer) names the
module that registers each hook (:func:`provide`), and the first call imports it.  The lower
layer names no higher module, not even as a string.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Generic, TypeVar

from bb_robot.errors import BbRobotError

F = TypeVar("F", bound=Callable[..., object])

_PROVIDERS: dict[str, str] = {}


class HookError(BbRobotError):
    """A hook was called but nothing registers it (the message names the hook)."""


def provide(name: str, module: str) -> None:
    """Say that importing ``module`` registers the hook called ``name``.

    Args:
        name: the hook's name (:attr:`Hook.name`).
        module: the dotted name of the module whose import registers it.
    """
    _PROVIDERS[name] = module


class Hook(Generic[F]):
    """A function of type ``F`` that a higher layer registers.

    Args:
        name: the hook's name, as the provider and :func:`provide` spell it.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._function: F | None = None

    def register(self, function: F) -> None:
        """Make ``function`` the hook's implementation (the last registration wins)."""
        self._function = function

    @property
    def function(self) -> F:
        """The registered function; imports the providing module on first use.

        Raises:
            HookError: no function is registered and no module is named to provide one.
        """
        if self._function is None:
            module = _PROVIDERS.get(self.name)
            if module is not None:
                importlib.import_module(module)
        if self._function is None:
            raise HookError(f"hook '{self.name}': no function is registered (import the package that provides it)")
        return self._function
