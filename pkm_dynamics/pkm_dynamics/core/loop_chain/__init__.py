"""Serial chains of loops served in actuator space (paper 001, constraint embedding): a robot
without platform whose spanning tree is a chain of loops and joints, each degree of freedom
driven by one actuator anywhere in its loops (a cylinder in a 4-bar, a cylinder driving a
bucket through a rocker and a coupler, a slider-crank).  The checks that name what such a
description lacks (:mod:`.loop_chain_checks`), the robot object on the limb route
(:mod:`.loop_chain_robot`), its inverse kinematics (:mod:`.loop_chain_ik`) and its exact
first derivatives by forward-mode jets (:mod:`.loop_chain_derivatives`)."""
