"""Simulation (``robot.simulate``): the forward dynamics integrated in minimal coordinates.
``simulation`` (the API: :func:`simulate`, :class:`SimulationResult`, the effort sources and the
choice of route), ``reference`` (the Python route: integrators as Python loops over the robot's
forward dynamics, every robot kind and effort source), ``chain_integrator`` and
``simulation_kernels`` (the compiled route of module chains: the whole horizon in one kernel)."""
from .reference import task_coordinate_rates
from .simulation import METHODS, SimulationResult, simulate

__all__ = ["METHODS", "SimulationResult", "simulate", "task_coordinate_rates"]
