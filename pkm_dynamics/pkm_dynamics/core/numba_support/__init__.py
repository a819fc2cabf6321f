"""numba support: where the compiled kernels are cached (:mod:`.cache`, imported first by every
kernel module: it configures numba) and their warm-up (:mod:`.warmup`)."""
