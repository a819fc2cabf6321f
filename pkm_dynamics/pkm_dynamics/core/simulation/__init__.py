"""Simulation (``robot.simulate``): the forward dynamics integrated in minimal coordinates.
``simulation`` (the API: :func:`simulate`, :class:`SimulationResult`, the effort sources and the
choice of route), ``reference`` (the Python route: integrators as Python loops over the robot's
forward dynamics, every robot kind and effort source), ``chain_integrator`` and
``simulation_kernels`` (the compiled route of module chains: the whole horizon in one kernel)."""
from .reference import task_coordinate_rates
from .simulation import METHODS, SimulationResult, simulate

__all__ = ["METHODS", "SimulationResult", "simulate", "task_coordinate_rates"]


def __getattr__(name):
    """The names of the flat module this package replaces (deprecated: :mod:`..deprecated_paths`)."""
    from ..deprecated_paths import moved_name
    return moved_name(__name__, name)
