# shellcheck shell=bash
# Puts the ROS 2 environment of the venv made by scripts/setup into the current shell:
#
#   source scripts/env.sh                      # ROS 2 Kilted: <repo>/.venv
#   ROS_DISTRO=jazzy source scripts/env.sh     # ROS 2 Jazzy: <repo>/.venv-jazzy
#
# ROS_DISTRO picks the venv (scripts/ros_distro.sh) and is exported, as a ROS install's setup.bash
# does. BB_ROBOT_VENV names another venv instead; the value this file set itself does not count, so
# sourcing it again with another ROS_DISTRO switches venvs (and takes the old one off PATH).
# The venv root is the ament prefix (share/<pkg>, lib/*.so), so AMENT_PREFIX_PATH names it alone.
# ROS traffic stays on this machine and ROS logs go to <repo>/log/ros unless ROS_LOG_DIR or
# ROS_AUTOMATIC_DISCOVERY_RANGE are already set. Not for a shell that sourced a real ROS 2 install.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "scripts/env.sh is meant to be sourced: source ${BASH_SOURCE[0]}" >&2
  exit 1
fi
BB_ROBOT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/ros_distro.sh
source "$BB_ROBOT_ROOT/scripts/ros_distro.sh"
if bb_robot_select_distro "$BB_ROBOT_ROOT"; then
  if [[ -n ${_BB_ROBOT_ENV_VENV:-} && $_BB_ROBOT_ENV_VENV != "$BB_ROBOT_SELECTED_VENV" ]]; then
    PATH=:$PATH:  # take the venv this file put on PATH before off it
    PATH=${PATH//":$_BB_ROBOT_ENV_VENV/bin:"/:}
    PATH=${PATH#:}
    PATH=${PATH%:}
  fi
  BB_ROBOT_VENV=$BB_ROBOT_SELECTED_VENV
  _BB_ROBOT_ENV_VENV=$BB_ROBOT_VENV
  if [[ -f $BB_ROBOT_VENV/.bb_robot-ros-distro && $(<"$BB_ROBOT_VENV/.bb_robot-ros-distro") != "$BB_ROBOT_ROS_DISTRO" ]]; then
    echo "scripts/env.sh: $BB_ROBOT_VENV holds ROS 2 $(<"$BB_ROBOT_VENV/.bb_robot-ros-distro"), not $BB_ROBOT_ROS_DISTRO" >&2
  fi
  ROS_DISTRO=$BB_ROBOT_ROS_DISTRO
  export BB_ROBOT_ROOT BB_ROBOT_VENV _BB_ROBOT_ENV_VENV ROS_DISTRO
  export VIRTUAL_ENV=$BB_ROBOT_VENV
  export AMENT_PREFIX_PATH=$BB_ROBOT_VENV
  export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
  export ROS_LOG_DIR=${ROS_LOG_DIR:-$BB_ROBOT_ROOT/log/ros}
  case ":$PATH:" in
    *":$BB_ROBOT_VENV/bin:"*) ;;
    *) export PATH=$BB_ROBOT_VENV/bin:$PATH ;;
  esac
  unset PYTHONHOME
else
  false
fi
