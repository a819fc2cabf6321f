"""Joint and actuator friction: the smooth Coulomb-viscous-Stribeck law
(:mod:`.friction_kernels`), its parameters per tree joint read from the description
(:mod:`.friction_model`: URDF ``<dynamics damping friction>`` and the ``<friction>`` extension
element), and the map of joint friction torques into a robot's minimal coordinates
(paper 001 eqs. 37, 44)."""
from .friction_model import JointFriction, friction_torques, parse_friction

__all__ = ["JointFriction", "friction_torques", "parse_friction"]
