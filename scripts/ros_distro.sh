# shellcheck shell=bash
# Which ROS 2 distribution scripts/setup, scripts/env.sh, scripts/test and the scripts they call work
# on, chosen by ROS_DISTRO (sourced by them; not a command):
#
#   ROS_DISTRO unset or kilted   <repo>/.venv         requirements/runtime.txt, build.txt, constraints.txt
#   ROS_DISTRO=jazzy             <repo>/.venv-jazzy   requirements/jazzy/runtime.txt, build.txt, constraints.txt
#
# Both venvs take requirements/dev.txt (and, through runtime.txt, requirements/python.txt).
# bb_robot_select_distro ROOT sets BB_ROBOT_ROS_DISTRO (kilted or jazzy), BB_ROBOT_DISTRO_VENV (the
# venv of that distribution), BB_ROBOT_DISTRO_REQUIREMENTS (its requirements folder, relative to
# ROOT) and BB_ROBOT_SELECTED_VENV: the venv to use, which is BB_ROBOT_DISTRO_VENV unless
# BB_ROBOT_VENV names another one. A BB_ROBOT_VENV that scripts/env.sh set itself
# (_BB_ROBOT_ENV_VENV) does not count: in a shell that sourced env.sh for Kilted,
# `ROS_DISTRO=jazzy scripts/<any>` works on .venv-jazzy. For any other ROS_DISTRO it says which
# ones there are and returns 1.

bb_robot_select_distro() {
  local root=$1 distro=${ROS_DISTRO:-kilted}
  case $distro in
    kilted)
      BB_ROBOT_DISTRO_VENV=$root/.venv
      BB_ROBOT_DISTRO_REQUIREMENTS=requirements
      ;;
    jazzy)
      BB_ROBOT_DISTRO_VENV=$root/.venv-jazzy
      BB_ROBOT_DISTRO_REQUIREMENTS=requirements/jazzy
      ;;
    *)
      echo "ROS_DISTRO=$distro: bb_robot's venvs are for ROS 2 kilted (the default) and jazzy;" \
        "for another distribution source its install and build with colcon (docs/distributions.md)" >&2
      return 1
      ;;
  esac
  BB_ROBOT_ROS_DISTRO=$distro
  BB_ROBOT_SELECTED_VENV=$BB_ROBOT_DISTRO_VENV
  if [[ -n ${BB_ROBOT_VENV:-} && $BB_ROBOT_VENV != "${_BB_ROBOT_ENV_VENV:-}" ]]; then
    BB_ROBOT_SELECTED_VENV=$BB_ROBOT_VENV
  fi
}
