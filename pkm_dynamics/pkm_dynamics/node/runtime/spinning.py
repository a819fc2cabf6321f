"""Spinning the node's executors in threads of their own until a signal or the lifecycle
shutdown, then stopping them cleanly (no thread inside rcl when the nodes are destroyed)."""
import threading


#: [s] how often the main thread looks for a signal while the executors spin
SIGNAL_CHECK_PERIOD = 0.2


def spin_until_signal(executors, signalled, finished=lambda: False):
    """Spin each of ``executors`` (a dict: thread name -> executor) in a thread of its own
    until ``signalled`` (the list of signals received, see :func:`main`) is not empty, until
    ``finished()`` (e.g. the lifecycle shutdown transition happened) or until one of them
    stops by itself (its exception is raised here once every thread is
    joined); then stop the others and join every thread, so that no thread is inside rcl any
    more when the caller destroys the nodes and shuts the context down.

    rclpy's own signal handler is not used: it shuts the context down from a thread of its own
    the moment the signal arrives, while these threads are still waiting, taking or publishing
    in rcl on that context (tracebacks, and now and then a segfault at exit). The main thread
    looks for a signal every ``SIGNAL_CHECK_PERIOD``: one the kernel delivers to another
    thread does not interrupt the main thread's wait. Each executor's ``shutdown`` wakes its
    wait (:class:`~pkm_dynamics.node.runtime.lean_executor.LeanExecutor`) and makes its ``spin_once``
    return at once; a callback under way finishes first."""
    stopping = threading.Event()
    failures = []

    def spin(executor):
        try:
            while not stopping.is_set():
                executor.spin_once()
        except Exception as exc:
            failures.append(exc)
        finally:
            stopping.set()

    threads = [threading.Thread(target=spin, args=(executor,), name=name)
               for name, executor in executors.items()]
    try:
        for thread in threads:
            thread.start()
        while not signalled and not finished() and not stopping.is_set():
            stopping.wait(SIGNAL_CHECK_PERIOD)
    finally:
        stopping.set()
        for executor in executors.values():
            executor.shutdown()
        for thread in threads:
            if thread.ident is not None:   # started
                thread.join()
    if failures:
        raise failures[0]
