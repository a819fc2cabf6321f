"""The ROS 2 node: the lifecycle node ``DynamicsNode`` and its ``main`` (`dynamics_node`), the loaded
robot (`model`), its parameters (`node_parameters`), services (`services`), diagnostics
(`diagnostics`) and the launch file's settings (`launch_settings`); the reference streams are in
`streaming`, the message conversions and CDR reading/writing in `messages`, the executor and the
spin loop in `runtime`. The node turns messages into arrays for :mod:`pkm_dynamics.core` and back;
the core never imports it."""
