"""pkm_dynamics: dynamics of closed-loop robots as a ROS 2 node.

`pkm_dynamics.core` holds the math and never imports ROS; the node modules beside it
(`dynamics_node` with `model`, `node_parameters`, `services`, `streaming`, `spinning`;
`conversions`, `state_messages`, `diagnostics`) convert messages to arrays and back.
"""
