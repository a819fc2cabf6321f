"""Where numba keeps the compiled kernels, decided before numba compiles anything.

numba's ``cache=True`` writes machine code next to the source (``__pycache__``) or, if that is
not writable, into a per-user directory; when no location is writable it raises ``RuntimeError:
no locator available`` as soon as a kernel is defined, so a read-only install could not even
import the package.  :func:`configure_cache` picks the first writable location of

1. ``NUMBA_CACHE_DIR`` if the user set it;
2. the package itself: numba's own place, the ``__pycache__`` beside each kernel source
   (``core/<concept>/__pycache__``).  numba finds a cached kernel there
   by its file name beside the source and checks it against a hash of the source's content,
   so the cache is valid wherever the package is copied: the build (``setup.py``, see
   :mod:`~pkm_dynamics.core.precompile`) compiles into the build tree and the wheel, ``pip install``,
   ``setup.py install`` and colcon carry the cache to the installed package;
3. ``$XDG_CACHE_HOME/pkm_dynamics/numba`` (default ``~/.cache/pkm_dynamics/numba``);

and points numba there (``NUMBA_CACHE_DIR``, unset for location 2); when none is writable the
kernels are compiled without a cache (``CACHING`` is False: every process compiles them again
when its first robot is built, tens of seconds).

numba checks a cached kernel only against its own source file, not against the files of the
functions it inlined: a kernel cached before an edit of :mod:`..spatial.se3_kernels` (or of the
scalar functions of :mod:`..spatial.scalar_forms` it compiles) would keep the old helpers.  So location 3
gets a subdirectory named after a hash of every kernel source (:func:`source_hash`),
and location 2 records that hash beside its cache (:data:`SOURCES_FILE`): a cache of other
sources (or another numba) is removed before any kernel is defined (:func:`drop_stale_cache`).
Any edit then starts a fresh cache.  A ``NUMBA_CACHE_DIR`` the user set is used as it is
(processes started from this one inherit the chosen directory).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CORE_DIR = os.path.dirname(_PACKAGE_DIR)
#: the directories of the sources numba compiles kernels from (every folder of the core: the
#: kernels of each concept sit in its folder): their ``__pycache__`` is location 2
KERNEL_SOURCE_DIRS = tuple(sorted(d for d, _, _ in os.walk(_CORE_DIR)
                                  if os.path.basename(d) != "__pycache__"))
#: the import line of a module whose functions this module compiles
_KERNEL_IMPORT = re.compile(rb"numba_support\.cache import [^\n]*kernel")
#: the file, in location 2, naming the sources (:func:`source_hash`) its kernels were compiled from
SOURCES_FILE = os.path.join(_PACKAGE_DIR, "__pycache__", "pkm_dynamics_kernel_sources")


def _writable_dir(path: str) -> bool:
    """True if ``path`` is (or can be made) a directory where this process can create files."""
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
        return True
    except OSError:
        return False


def source_hash() -> str:
    """Short hash of the kernel sources (every module of the core that compiles with this module's
    decorators -- its import of them names it -- every ``*.py`` beside this file,
    ``core/bounds.py`` and ``core/status.py`` whose constants the kernels check against and
    return, ``core/spatial/scalar_forms.py`` whose scalar functions they compile,
    ``core/limb/limb_layout.py`` whose index constants they compile in) and of the numba
    version."""
    import numba
    h = hashlib.sha1(numba.__version__.encode())
    extra = {os.path.join("..", n) for n in ("bounds.py", "status.py", os.path.join("spatial", "scalar_forms.py"),
                                             os.path.join("limb", "limb_layout.py"))}
    names = sorted(os.path.relpath(os.path.join(d, n), _PACKAGE_DIR)
                   for d in KERNEL_SOURCE_DIRS for n in os.listdir(d) if n.endswith(".py"))
    for name in names:
        with open(os.path.join(_PACKAGE_DIR, name), "rb") as f:
            text = f.read()
        if os.sep not in name or name in extra or _KERNEL_IMPORT.search(text):
            h.update(name.encode() + b"\0" + text)
    return h.hexdigest()[:16]


def in_package() -> str:
    """Location 2: the ``__pycache__`` of the kernel sources (the first names it)."""
    return os.path.dirname(SOURCES_FILE)


def cache_candidates() -> list:
    """The cache locations in the order of the module docstring."""
    out = []
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        out.append(user)
    out.append(in_package())
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    out.append(os.path.join(xdg, "pkm_dynamics", "numba", source_hash()))
    return out


def drop_stale_cache() -> None:
    """Remove the kernels cached in the package (location 2) unless :data:`SOURCES_FILE` names
    the present sources (:func:`source_hash`), then name them there: numba would otherwise
    load a kernel whose inlined helpers have changed since."""
    tag = source_hash()
    try:
        with open(SOURCES_FILE) as f:
            if f.read().strip() == tag:
                return
    except OSError:
        pass
    for directory in KERNEL_SOURCE_DIRS:
        cache = os.path.join(directory, "__pycache__")
        for name in os.listdir(cache) if os.path.isdir(cache) else ():
            if name.endswith((".nbi", ".nbc")):
                with contextlib.suppress(FileNotFoundError):    # another process was first
                    os.remove(os.path.join(cache, name))
    with open(SOURCES_FILE, "w") as f:
        f.write(tag + "\n")


def configure_cache() -> str | None:
    """Choose the cache location (see the module docstring) and tell numba; returns the
    directory, or None when nothing is writable."""
    import numba
    for path in cache_candidates():
        if path == in_package():
            if all(_writable_dir(os.path.join(d, "__pycache__")) for d in KERNEL_SOURCE_DIRS):
                drop_stale_cache()
                os.environ.pop("NUMBA_CACHE_DIR", None)     # numba's own place, beside the sources
                numba.config.CACHE_DIR = ""
                return path
        elif _writable_dir(path):
            os.environ["NUMBA_CACHE_DIR"] = path
            numba.config.CACHE_DIR = path
            return path
    os.environ.pop("NUMBA_CACHE_DIR", None)
    numba.config.CACHE_DIR = ""
    return None


#: the chosen location (see :func:`configure_cache`); None: kernels are not cached
CACHE_DIR = configure_cache()
#: whether the kernels are cached on disk
CACHING = CACHE_DIR is not None


def kernel(fn):
    """``numba.njit`` with the cache setting of this process: every compiled function of the
    core is defined through this decorator.  ``error_model='numpy'``: a division by zero gives
    inf/NaN (which the kernels report as a status) instead of a Python exception, and spares
    the zero test before every division."""
    import numba
    return numba.njit(cache=CACHING, error_model="numpy")(fn)


def scratch_kernel(fn):
    """:func:`kernel` for a function that allocates nothing (it works in the caller's scratch
    and output arrays), compiled without numba's reference-counted memory manager (NRT,
    ``_nrt=False``): an array argument passed from Python is not wrapped in an NRT record
    (about 40 ns per array at every call; the chain kernels take 13) and a view taken inside
    (``W[0]``, ``A[k]``) carries no reference count.  Such a function cannot create an array;
    it may call any :func:`kernel`."""
    import numba
    return numba.njit(cache=CACHING, error_model="numpy", _nrt=False)(fn)


def inline_kernel(fn):
    """A compiled function inlined into each compiled caller (numba's ``inline='always'``, at the
    level of numba's IR), hence compiled in that caller's setting, with or without the NRT of
    :func:`scratch_kernel`: for the views of a flat buffer
    (:func:`..module_chain.chain_layout.model_arrays`), which a function compiled without NRT
    returns uncounted (a :func:`kernel` receiving them from a separately compiled
    :func:`scratch_kernel` would release a reference it never held)."""
    import numba
    return numba.njit(cache=CACHING, error_model="numpy", inline="always")(fn)


def typed_kernel(signature):
    """:func:`kernel` compiled for the one argument ``signature`` (a tuple of numba types) when it
    is defined (loaded from the cache where there is one): for an entry point whose argument
    types must be exactly these, e.g. a first-class function type (``types.FunctionType``) that
    takes any compiled function of that signature without compiling the entry again for each."""
    import numba
    return numba.njit(signature, cache=CACHING, error_model="numpy")

