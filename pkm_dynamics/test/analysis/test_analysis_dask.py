"""Execution of the maps on Dask: a 2-worker LocalCluster (processes) gives the maps of in-process
execution exactly; a worker killed mid-run (Dask runs its chunks again on the replacement) too; a
scheduler that does not answer is a clear error with nothing written.  Small grids, one cluster."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import xarray as xr

from pkm_dynamics.analysis import ExecutionError, load_chart, workspace_map
from pkm_dynamics.analysis.execution import connect
from pkm_dynamics.core import load_robot

ROBOTS = os.path.join(os.path.dirname(__file__), "..", "..", "robots")
CRANE_LIMITS = {"lift": 80e3, "tilt": 60e3, "extension": 15e3}


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def crane():
    return load_robot(os.path.join(ROBOTS, "heavy_duty_4dof.urdf"))


def chart(crane, **kw):
    return load_chart(crane, "0:4.5:0.25", "-2:5.5:0.25", samples=16, limits=CRANE_LIMITS, dynamic_factor=1.2,
                      payload=100.0, chunk=256, **kw)


def test_two_workers_give_the_in_process_maps(client, crane):
    xr.testing.assert_identical(chart(crane, client=client), chart(crane, workers=0))
    irsbot = load_robot(os.path.join(ROBOTS, "irsbot2.urdf"))
    axes = {"x": "-0.04:0.04:0.02", "z": "-0.02:0.02:0.02"}
    xr.testing.assert_identical(workspace_map(irsbot, axes, payload=0.3, chunk=4, client=client),
                                workspace_map(irsbot, axes, payload=0.3, chunk=4, workers=0))


def test_a_worker_killed_mid_run_gives_the_same_map(client, crane):
    expected = chart(crane, workers=0)
    pids = list(client.run(os.getpid).values())
    assert len(pids) == 2

    def done(dask_scheduler):
        return sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items() if "load-chart" in str(key))

    def kill_one():                           # once some chunks are done and others still to run
        t = time.time()
        while client.run_on_scheduler(done) < 20 and time.time() - t < 60:
            time.sleep(0.02)
        os.kill(pids[0], signal.SIGKILL)

    killer = threading.Thread(target=kill_one)
    killer.start()
    got = load_chart(crane, "0:4.5:0.25", "-2:5.5:0.25", samples=16, limits=CRANE_LIMITS, dynamic_factor=1.2,
                     payload=100.0, chunk=8, client=client)
    killer.join()
    assert pids[0] not in client.run(os.getpid).values()      # the killed worker was replaced
    assert (got.attrs.pop("chunk"), expected.attrs.pop("chunk")) == (8, 256)
    xr.testing.assert_identical(got, expected)                  # and another chunk size: the same map


def test_a_scheduler_that_does_not_answer_is_a_clear_error(tmp_path):
    with pytest.raises(ExecutionError, match="did not answer within 1 s"):
        connect(scheduler="tcp://127.0.0.1:9", timeout=1.0)
    from pkm_dynamics.analysis.cli import main
    out = tmp_path / "chart.nc"
    t = time.time()
    code = main(["load-chart", os.path.join(ROBOTS, "heavy_duty_4dof.urdf"), "--reach", "0:1:0.5", "--height",
                 "0:1:0.5", "--samples", "3", "--force-limit", "lift=80000", "--scheduler", "tcp://127.0.0.1:9",
                 "--no-progress", "--out", str(out)])
    assert code == 3 and list(tmp_path.iterdir()) == [] and time.time() - t < 60
