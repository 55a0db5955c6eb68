# shellcheck shell=bash
# Puts the ROS 2 environment of the venv made by scripts/setup into the current shell:
#
#   source scripts/env.sh
#
# The venv root is the ament prefix (share/<pkg>, lib/*.so), so AMENT_PREFIX_PATH names it alone.
# ROS traffic stays on this machine and ROS logs go to <repo>/log/ros unless ROS_LOG_DIR or
# ROS_AUTOMATIC_DISCOVERY_RANGE are already set. Not for a shell that sourced a real ROS 2 install.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "scripts/env.sh is meant to be sourced: source ${BASH_SOURCE[0]}" >&2
  exit 1
fi
BB_ROBOT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BB_ROBOT_VENV=${BB_ROBOT_VENV:-$BB_ROBOT_ROOT/.venv}
export BB_ROBOT_ROOT BB_ROBOT_VENV
export VIRTUAL_ENV=$BB_ROBOT_VENV
export AMENT_PREFIX_PATH=$BB_ROBOT_VENV
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
export ROS_LOG_DIR=${ROS_LOG_DIR:-$BB_ROBOT_ROOT/log/ros}
case ":$PATH:" in
  *":$BB_ROBOT_VENV/bin:"*) ;;
  *) export PATH=$BB_ROBOT_VENV/bin:$PATH ;;
esac
unset PYTHONHOME
