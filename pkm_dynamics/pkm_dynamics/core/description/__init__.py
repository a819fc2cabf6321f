"""The robot description: the URDF spanning tree's extension for loops, actuators, platform and
SEA (:mod:`.robot_description`), what a description may contain (:mod:`.validation`), a
run-time payload (:mod:`.payload`) and generated example descriptions (:mod:`.examples`)."""


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
