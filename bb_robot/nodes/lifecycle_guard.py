"""A lifecycle node's ``change_state`` service that answers an impossible transition instead of dying.

rclpy 9 (Kilted) answers a ``change_state`` request for a transition the current state does not
have (``activate`` while unconfigured, an unknown id) with ``success: false`` and logs it. rclpy 7
(Jazzy) lets rcl_lifecycle's error (``Transition is not registered``) escape the service callback,
which ends the node's spin with the exception: one bad request from any client killed the node.
:func:`answer_impossible_transitions` wraps the service's callback so that on every rclpy the
request is answered with ``success: false`` and the node logs why; where rclpy handles it itself
(Kilted), the wrapper never sees the error.
"""

from __future__ import annotations

from typing import Any

from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.lifecycle import LifecycleNode


def answer_impossible_transitions(node: LifecycleNode) -> bool:
    """Wrap ``node``'s ``change_state`` service callback (see the module docstring).

    Args:
        node: a lifecycle node, after ``LifecycleNode.__init__``.

    Returns:
        Whether the service was found and wrapped (it is an attribute rclpy 7 and 9 both have).
    """
    service = getattr(node, "_service_change_state", None)
    handle = getattr(service, "callback", None)
    if service is None or handle is None:
        return False

    def change_state(request: Any, response: Any) -> Any:
        try:
            return handle(request, response)
        except _rclpy.RCLError as error:
            transition = request.transition.label or str(request.transition.id)
            node.get_logger().error(
                f"change_state: transition '{transition}' is not possible from state "
                f"'{node._state_machine.current_state[1]}' ({str(error).split(', at ')[0]})"
            )
            response.success = False
            return response

    service.callback = change_state
    return True
