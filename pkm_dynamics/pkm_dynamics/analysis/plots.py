"""Figures a person reads at a glance (matplotlib, the Agg backend: files, no display): the load
chart as crane makers draw it (payload contours over reach and height, the reachable region
shaded) and the workspace / singularity heat maps of a parallel robot (two grid axes)."""
from __future__ import annotations

from pathlib import Path

import numpy as np


class PlotError(ValueError):
    """A map that cannot be drawn as asked: the message says why."""


def _figure(ncols: int, width: float = 5.2, height: float = 4.4):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False, constrained_layout=True)
    return plt, fig, axs[0]


def _save(plt, fig, path) -> Path:
    path = Path(path)
    if not path.parent.is_dir():
        raise PlotError(f"plot '{path}': the directory '{path.parent}' does not exist")
    tmp = path.with_name(f".{path.name}.part{path.suffix}")
    try:
        fig.savefig(tmp, dpi=120)
        tmp.replace(path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path


def plot_load_chart(ds, path, levels: int = 12) -> Path:
    """The load chart of ``ds`` (:func:`.maps.load_chart`) to ``path`` (png, pdf, svg): filled
    payload contours (kg) over reach (x) and height (y) with labelled lines, the region no
    configuration reaches left white; beside it the chart with the dynamic factor."""
    plt, fig, axs = _figure(2)
    R, H = np.meshgrid(ds["reach"].values, ds["height"].values, indexing="ij")
    top = np.nanmax(ds["payload"].values) if np.isfinite(ds["payload"].values).any() else 1.0
    bounds = np.linspace(0.0, top, levels + 1)
    for ax, name in zip(axs, ("payload", "payload_dynamic")):
        m = np.ma.masked_invalid(ds[name].values)
        ax.contourf(R, H, ~ds["reachable"].values, levels=[0.5, 1.5], colors=["0.92"])
        if m.count() and top > 0:
            cf = ax.contourf(R, H, m, levels=bounds, cmap="viridis_r", extend="neither")
            cs = ax.contour(R, H, m, levels=bounds[1:-1:2], colors="k", linewidths=0.6)
            ax.clabel(cs, fmt="%.0f kg", fontsize=7)
            fig.colorbar(cf, ax=ax, label="payload [kg]")
        ax.set_xlabel("reach [m]")
        ax.set_ylabel("height [m]")
        ax.set_aspect("equal")
        ax.set_title(f"{ds.attrs['robot']}: {ds[name].attrs['long_name']}", fontsize=9)
    return _save(plt, fig, path)


def plot_workspace(ds, path) -> Path:
    """The workspace map of ``ds`` (:func:`.maps.workspace_map`) to ``path``: heat maps of
    ``log10 kappa(J_IK)``, ``log10 kappa(G_y)`` and ``lambda_max(M_t)`` over the two grid axes of
    more than one point (unreachable points white).  :class:`PlotError` unless exactly two axes
    vary."""
    dims = [d for d in ds["reachable"].dims if ds.sizes[d] > 1]
    if len(dims) != 2:
        raise PlotError(f"a workspace plot needs exactly two grid axes of more than one point, the map has "
                        f"{len(dims)} ({', '.join(dims) or 'none'}): hold the others at one value")
    sub = ds.isel({d: 0 for d in ds["reachable"].dims if ds.sizes[d] == 1})
    a, b = dims
    plt, fig, axs = _figure(3, width=4.6)
    for ax, (name, label, log) in zip(axs, (("kappa_J", "log10 kappa(J_IK)", True),
                                            ("kappa_G", "log10 worst loop kappa(G_y)", True),
                                            ("mass_max", "lambda_max(M_t)", False))):
        v = sub[name].transpose(a, b).values.astype(float)
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.log10(v)
        v = np.ma.masked_invalid(np.where(sub["reachable"].transpose(a, b).values, v, np.nan))
        pm = ax.pcolormesh(sub[a].values, sub[b].values, v.T, shading="nearest", cmap="magma_r" if log else "viridis")
        fig.colorbar(pm, ax=ax, label=label)
        ax.set_xlabel(f"{a} [{sub[a].attrs.get('units', '')}]")
        ax.set_ylabel(f"{b} [{sub[b].attrs.get('units', '')}]")
        ax.set_title(f"{ds.attrs['robot']}: {label}", fontsize=9)
    return _save(plt, fig, path)
