"""Map results as ``xarray.Dataset`` (coordinates, units and the robot's name in ``attrs``) and
their files: NetCDF (``.nc``: NetCDF-4 through the h5netcdf engine where its ``h5py`` is installed,
else NetCDF-3 through scipy's engine; :func:`netcdf_engine`) or Zarr (``.zarr``, when the ``zarr`` package
is installed), written to a temporary name beside the target and renamed onto it only when
complete, so a failed map never leaves a half-written file.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


class OutputError(ValueError):
    """An output path that cannot be written: the message names the path and the reason."""


def output_format(path) -> str:
    """``"netcdf"`` for ``.nc`` / ``.nc4`` / ``.h5``, ``"zarr"`` for ``.zarr``; :class:`OutputError`
    otherwise, or for Zarr without the package, or for a directory that does not exist."""
    p = Path(path)
    if not p.parent.is_dir():
        raise OutputError(f"output '{path}': the directory '{p.parent}' does not exist")
    suffix = p.suffix.lower()
    if suffix in (".nc", ".nc4", ".h5"):
        return "netcdf"
    if suffix == ".zarr":
        import importlib.util
        if importlib.util.find_spec("zarr") is None:
            raise OutputError(f"output '{path}': Zarr needs the 'zarr' package, which is not installed "
                              "(write a .nc file instead)")
        return "zarr"
    raise OutputError(f"output '{path}': unknown format '{suffix}' (use .nc for NetCDF or .zarr for Zarr)")


def netcdf_engine() -> str:
    """``"h5netcdf"`` (NetCDF-4) where ``h5py`` is importable, else ``"scipy"`` (NetCDF-3, 64-bit
    offsets): both read back with :func:`load_dataset`."""
    import importlib.util
    return "h5netcdf" if importlib.util.find_spec("h5py") is not None else "scipy"


def save_dataset(ds, path) -> Path:
    """Write ``ds`` to ``path`` (:func:`output_format`) through a temporary file in the same
    directory, renamed onto ``path`` when written (an existing file is replaced only then)."""
    path = Path(path)
    fmt = output_format(path)
    tmp = tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        part = Path(tmp) / path.name
        if fmt == "netcdf":
            ds.to_netcdf(part, engine=netcdf_engine())
            os.replace(part, path)
        else:
            ds.to_zarr(part, mode="w")
            if path.exists():
                shutil.rmtree(path)
            os.replace(part, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def load_dataset(path):
    """A map written by :func:`save_dataset`, loaded into memory."""
    import xarray as xr
    if output_format(path) == "zarr":
        return xr.open_zarr(path).load()
    with xr.open_dataset(path, engine=netcdf_engine()) as ds:
        return ds.load()
