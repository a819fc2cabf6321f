"""Execution of a map's chunks on Dask (``dask.distributed``), or in this process.

Every chunk is one task: a function ``fn(robot, *args)`` of the robot and the chunk's arguments
(one batched call, or a continuation along the chunk), independent of the others.  The robot is
not sent with the tasks: a :class:`RobotSpec` (the description text, gravity, solver options,
payload) is, once, as a worker plugin (:class:`RobotPlugin`), and every worker process builds the
robot from it when it starts (the kernels come from the numba cache on disk: the robot's load,
not a compilation).  A worker that dies mid-run is replaced and its chunks run again (Dask
reschedules the tasks of a lost worker; ``retries`` covers a task that raised); the results are
gathered in chunk order, so a map is the same for any number of workers.

Where the chunks run (:func:`map_chunks`): ``client`` (a ``distributed.Client`` of the caller's),
else ``scheduler`` (the address of a running scheduler, ``tcp://host:8786``), else a
``LocalCluster`` of ``workers`` processes (default: one per core, one thread each) made for the
call and closed after it; ``workers=0`` runs the chunks in this process (Dask's synchronous
scheduler), with the caller's robot.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from ..core.description.payload import Payload, robot_with_payload
from ..core.description.robot_description import parse_description
from ..core.interface import SolverOptions
from ..core.robot import robot_from_description

#: seconds to wait for a scheduler to answer before the map is refused
SCHEDULER_TIMEOUT = 10.0
#: times a chunk that raised is run again before the map fails
RETRIES = 2


class ExecutionError(RuntimeError):
    """The chunks could not run: a scheduler that does not answer, a chunk that keeps failing."""


@dataclass(frozen=True)
class RobotSpec:
    """What a worker builds its robot from: ``description`` (the URDF text with its extension),
    ``gravity`` (3,), ``options`` (:class:`~pkm_dynamics.core.SolverOptions`) and ``payload``
    (a :class:`~pkm_dynamics.core.description.payload.Payload` or None)."""

    description: str
    gravity: tuple
    options: SolverOptions
    payload: Payload | None = None

    @classmethod
    def of(cls, robot, payload: Payload | None = None) -> "RobotSpec":
        """The spec of ``robot`` (built from a description: its text, gravity and options)."""
        desc = robot.description
        return cls(desc.xml, tuple(float(g) for g in desc.tree.gravity), robot.options, payload)

    def build(self):
        """The robot of this spec (with its payload)."""
        robot = robot_from_description(parse_description(self.description, self.gravity, files=False), self.options)
        return robot if self.payload is None or self.payload.empty else robot_with_payload(robot, self.payload)

    @property
    def key(self) -> str:
        """A name of this spec (a digest of its contents): the worker plugin's name."""
        text = repr((self.description, self.gravity, self.options, self.payload and
                     (self.payload.mass, self.payload.com.tolist(), self.payload.inertia.tolist())))
        return "pkm_dynamics-robot-" + hashlib.sha1(text.encode()).hexdigest()[:16]


def _worker_plugin_base():
    from distributed import WorkerPlugin
    return WorkerPlugin


class RobotPlugin(_worker_plugin_base()):
    """The robot of a :class:`RobotSpec` in every worker process: built in :meth:`setup` (when
    the plugin is registered, and on every worker that joins later, e.g. one that replaces a
    dead worker); tasks read it as ``get_worker().plugins[spec.key].robot``."""

    def __init__(self, spec: RobotSpec):
        self.spec = spec
        self.robot = None

    def setup(self, worker):
        self.robot = self.spec.build()


def run_on_worker(key: str, fn, *args):
    """One chunk in a worker: ``fn(robot, *args)`` with the worker's robot of plugin ``key``."""
    from distributed import get_worker
    return fn(get_worker().plugins[key].robot, *args)


def connect(client=None, scheduler: str | None = None, workers: int | None = None,
            timeout: float = SCHEDULER_TIMEOUT) -> tuple:
    """``(client, owned)``: the caller's ``client``, a client of ``scheduler`` (an address;
    :class:`ExecutionError` when it does not answer within ``timeout`` seconds) or of a new
    ``LocalCluster`` of ``workers`` processes (default ``os.cpu_count()``); ``owned``: the
    client (and its cluster) are this call's, to close."""
    from distributed import Client, LocalCluster
    if client is not None:
        return client, False
    if scheduler is not None:
        try:
            return Client(scheduler, timeout=timeout), True
        except (OSError, TimeoutError) as exc:
            raise ExecutionError(f"the Dask scheduler at {scheduler} did not answer within {timeout:g} s "
                                 f"({type(exc).__name__}: {exc}); is it running and reachable?") from None
    n = (os.cpu_count() or 1) if workers is None else int(workers)
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), True


def map_chunks(robot, spec: RobotSpec, fn, chunk_args: list, *, client=None, scheduler: str | None = None,
               workers: int | None = None, progress: bool = True, name: str = "chunk") -> list:
    """``[fn(robot, *args) for args in chunk_args]`` in chunk order, each one task (module
    docstring for where they run); ``robot`` is used in this process (``workers=0``), ``spec``
    on workers; ``progress``: Dask's progress bar on the terminal.  Raises
    :class:`ExecutionError` for a scheduler that does not answer or a chunk that fails on every
    try (the chunk's error chained)."""
    if client is None and scheduler is None and workers == 0:
        return _in_process(robot, fn, chunk_args, progress)
    if workers is not None and workers < 0:
        raise ExecutionError(f"workers {workers} must be 0 (this process) or more")
    from distributed import progress as progress_bar
    client, owned = connect(client, scheduler, workers)
    try:
        client.register_plugin(RobotPlugin(spec), name=spec.key)
        futures = [client.submit(run_on_worker, spec.key, fn, *args, key=f"{name}-{spec.key[-8:]}-{i}",
                                 retries=RETRIES, pure=False) for i, args in enumerate(chunk_args)]
        if progress:
            progress_bar(futures)
        try:
            return client.gather(futures)
        except Exception as exc:
            raise ExecutionError(f"a chunk of the map failed on every try: {type(exc).__name__}: {exc}") from exc
    finally:
        if owned:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()


def _in_process(robot, fn, chunk_args: list, progress: bool) -> list:
    """The chunks in this process, in order, through Dask's synchronous scheduler (its progress
    bar)."""
    import dask
    from dask.diagnostics import ProgressBar
    tasks = [dask.delayed(fn, pure=False)(robot, *args) for args in chunk_args]
    if not progress:
        return list(dask.compute(*tasks, scheduler="synchronous"))
    with ProgressBar():
        return list(dask.compute(*tasks, scheduler="synchronous"))
