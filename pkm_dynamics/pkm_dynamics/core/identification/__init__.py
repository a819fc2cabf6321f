"""Identification of the inertial parameters (issue 30): the regressor ``u = Y pi + u_0`` of
every robot kind in its own state space (:mod:`.regressor`, from the spanning tree's regressor
:mod:`.tree_regressor` projected through the constraint embedding), the standard parameters
``pi`` (:mod:`.parameters`), the identifiable combinations (:mod:`.base_parameters`), least
squares from recorded motions and the excitation score (:mod:`.least_squares`), and the
estimation of a payload (:mod:`.payload_estimation`); a recorded window's motion, the
accelerations by a Savitzky-Golay derivative (:mod:`.sampled_motion`)."""
from .base_parameters import BaseParameters, base_parameters
from .least_squares import Identification, IdentificationError, excitation_score, identify
from .parameters import (PARAMETER_NAMES, body_parameters, friction_parameter_names, friction_parameters,
                         inertia_of_parameters, parameter_names, robot_parameters)
from .payload_estimation import PayloadEstimate, estimate_payload
from .regressor import Regressor, regressor
from .sampled_motion import sampled_motion
from .tree_regressor import tree_regressor

__all__ = ["BaseParameters", "Identification", "IdentificationError", "PARAMETER_NAMES", "PayloadEstimate",
           "Regressor", "base_parameters", "body_parameters", "estimate_payload", "excitation_score",
           "friction_parameter_names", "friction_parameters", "identify", "inertia_of_parameters", "parameter_names",
           "regressor", "robot_parameters", "sampled_motion", "tree_regressor"]
