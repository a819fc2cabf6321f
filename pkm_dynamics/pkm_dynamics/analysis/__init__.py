"""Analysis at scale (ROS-free, above the core: it imports the core, the core never imports it):
maps of a robot over a grid of states, run on Dask.

* module chains: :func:`load_chart` (largest payload over reach x height within the actuators'
  force limits, static and with a dynamic factor; reachable region; utilisation under a payload);
* parallel robots: :func:`workspace_map` (reachability, ``kappa(J_IK)``, worst loop
  ``kappa(G_y)``, actuator forces under a wrench or payload, ``lambda_max(M_t)``);
* results as ``xarray.Dataset`` (:func:`save_dataset`: NetCDF or Zarr, written atomically),
  figures (:func:`plot_load_chart`, :func:`plot_workspace`), the console script
  ``pkm_dynamics_analyze`` (:mod:`.cli`).
"""
from .datasets import load_dataset, save_dataset
from .execution import ExecutionError, RobotSpec
from .grids import GridError, parse_axis
from .limits import LimitError, actuator_force_limits
from .maps import LOAD_CHART_CHUNK, WORKSPACE_CHUNK, UnreachableGridError, load_chart, workspace_map
from .plots import PlotError, plot_load_chart, plot_workspace

__all__ = ["load_chart", "workspace_map", "actuator_force_limits", "parse_axis", "save_dataset", "load_dataset",
           "plot_load_chart", "plot_workspace", "RobotSpec", "LOAD_CHART_CHUNK", "WORKSPACE_CHUNK", "GridError",
           "LimitError", "ExecutionError", "UnreachableGridError", "PlotError"]
