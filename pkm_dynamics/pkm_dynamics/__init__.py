"""pkm_dynamics: dynamics of closed-loop robots as a ROS 2 node.

`pkm_dynamics.core` holds the math and never imports ROS; `pkm_dynamics.node` (the lifecycle
node `node.dynamics_node` with `model`, `node_parameters`, `services`, `diagnostics`;
`node.streaming`, `node.messages`, `node.runtime`) converts messages to arrays and back.
`pkm_dynamics.testing` is test and demo support (runs the installed node on loopback), not the
runtime.
"""
