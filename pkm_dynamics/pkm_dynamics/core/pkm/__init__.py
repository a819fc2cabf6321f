"""Parallel kinematic manipulators (paper 001 Secs. 3.6-5): the robot object
(:mod:`.parallel_robot`), its inverse kinematics over every limb (:mod:`.pkm_kinematics`, its
results :mod:`.pkm_solution`, working modes and joint limits :mod:`.working_mode`), the
task-space dynamics (:mod:`.pkm_task_dynamics`), the robot-level kernels (:mod:`.robot_kernels`,
:mod:`.robot_dynamics`) and a module chain solved as one limb (:mod:`.limb_chain`)."""


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
