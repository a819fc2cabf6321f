"""Exceptions of the core.  Each message names the culprit (element, joint, module, value)."""


class PkmDynamicsError(ValueError):
    """Base class of every error the core raises on bad input."""


class DescriptionError(PkmDynamicsError):
    """The robot description (URDF or its extension) is invalid or unsupported."""


class StateError(PkmDynamicsError):
    """A state or request is malformed: wrong shape, NaN/Inf, unknown joint, limit violated."""


class SingularityError(StateError):
    """The configuration is singular or infeasible for the requested computation."""


class ConvergenceError(StateError):
    """An iterative solver (inverse kinematics, loop closure) did not converge."""
