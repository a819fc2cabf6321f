"""The robot description: the URDF spanning tree's extension for loops, actuators, platform and
SEA (:mod:`.robot_description`), what a description may contain (:mod:`.validation`), a
run-time payload (:mod:`.payload`) and generated example descriptions (:mod:`.examples`)."""
