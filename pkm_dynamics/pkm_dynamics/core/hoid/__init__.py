"""Higher-order inverse dynamics (paper 002): the public call (:mod:`.higher_order`), PKMs with
simple limbs (:mod:`.simple_limb`) and the recursion of Secs. IV-V (:mod:`.hoid_recursion`;
compiled: :mod:`.hoid_kinematics`, :mod:`.hoid_kernels`, :mod:`.hoid_model`), the general Taylor
route (:mod:`.jet_dynamics`), series-elastic feedforward (:mod:`.sea`) and the paper's example
motions (:mod:`.hoid_motions`)."""
