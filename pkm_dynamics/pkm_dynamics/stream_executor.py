"""A lean executor for the streaming topics: one wait set of the companion node's
subscriptions, guard conditions and event handlers, each ready subscription's message taken
and handed to its callback directly.

rclpy's :class:`~rclpy.executors.SingleThreadedExecutor` builds a new wait set at every wake-up
and runs each callback through a generator, a handler task and a coroutine, and gathers every
timer, client, service and waitable of its nodes first: ~0.1-0.25 ms of Python per wake-up,
as much as the whole feedforward of a crane reference. The companion node has nothing but
subscriptions (references, measured actuator states), the guard conditions that wake it and
the subscriptions' QoS event handlers (incompatible QoS warnings), so this executor waits on
exactly those, with one ``_rclpy.WaitSet`` kept while the node's entities stay the same (it is
rebuilt when a subscription is created or destroyed: the node wakes its executor then).

It offers what :func:`~pkm_dynamics.spinning.spin_until_signal` and rclpy's ``Node`` use of an
executor: ``add_node`` / ``remove_node`` / ``get_nodes``, ``wake``, ``spin_once``,
``shutdown``. Entities are held (``with handle``) while waited on and while taken from, as
rclpy's executors do, so one destroyed meanwhile by another thread (cleanup) is destroyed once
the wait returns, never under it. Callbacks run in the spinning thread; an exception raised by
one propagates out of :meth:`spin_once` (the spinning thread then stops, as with rclpy's)."""
from contextlib import ExitStack

from rclpy.exceptions import InvalidHandle
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy


class StreamExecutor:
    """Spins one node that holds only subscriptions, guard conditions and event handlers (see
    the module doc); ``context``: the node's."""

    def __init__(self, context):
        self._context = context
        self._nodes = []
        self._guard = GuardCondition(None, None, context)     # wake(): rebuild, shutdown
        self._is_shutdown = False
        self._key = None            # the entities the wait set was built for
        self._wait_set = None

    # -- what rclpy's Node and spin_until_signal use -------------------------------------------
    def add_node(self, node):
        if node in self._nodes:
            return False
        self._nodes.append(node)
        node.executor = self
        self.wake()
        return True

    def remove_node(self, node):
        if node in self._nodes:
            self._nodes.remove(node)
            self.wake()

    def get_nodes(self):
        return list(self._nodes)

    def wake(self):
        """Wake the wait (the node calls this when it creates or destroys an entity)."""
        self._guard.trigger()

    def shutdown(self, timeout_sec=None):
        self._is_shutdown = True
        self.wake()
        return True

    # -- spinning ------------------------------------------------------------------------------
    def _entities(self):
        subscriptions, guards, events = [], [self._guard], []
        for node in self._nodes:
            subscriptions.extend(node.subscriptions)
            guards.extend(node.guards)
            events.extend(node.waitables)
        return subscriptions, guards, events

    def spin_once(self, timeout_sec=None):
        """Wait (``timeout_sec``; None: until something is ready) and run the callback of each
        ready subscription with the message taken, in the order of the node's subscriptions;
        an event handler (e.g. incompatible QoS) that is ready runs its callback too."""
        if self._is_shutdown:
            return
        timeout_ns = -1 if timeout_sec is None else int(timeout_sec * 1e9)
        subscriptions, guards, events = self._entities()
        with ExitStack() as held:
            subs = [s for s in subscriptions if _hold(held, s.handle)]
            gcs = [g for g in guards if _hold(held, g.handle)]
            evs = [e for e in events if _hold(held, e)]
            held.enter_context(self._context.handle)
            key = (tuple(subs), tuple(gcs), tuple(evs))
            if key != self._key:
                self._wait_set = _rclpy.WaitSet(len(subs), len(gcs), 0, 0, 0, len(evs),
                                                self._context.handle)
                self._key = key
            wait_set = self._wait_set
            wait_set.clear_entities()
            for s in subs:
                wait_set.add_subscription(s.handle)
            for g in gcs:
                wait_set.add_guard_condition(g.handle)
            for e in evs:
                e.add_to_wait_set(wait_set)
            wait_set.wait(timeout_ns)
            if self._is_shutdown or not self._context.ok():
                return
            ready = wait_set.get_ready_entities('subscription')
            ready_events = [e for e in evs if e.is_ready(wait_set)]
        for e in ready_events:
            _run(e.execute(e.take_data()))
        for s in subs:
            if s.handle.pointer in ready:
                taken = _take(s)
                if taken is not None:
                    s.callback(taken)


def _hold(stack, handle):
    """Enter ``handle`` on ``stack`` (it is not destroyed while held); False if it has been
    destroyed already."""
    try:
        stack.enter_context(handle)
    except InvalidHandle:
        return False
    return True


def _take(subscription):
    """The next message of ``subscription`` (None: nothing, or destroyed meanwhile)."""
    try:
        with subscription.handle:
            taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
    except InvalidHandle:
        return None
    return None if taken is None else taken[0]


def _run(coroutine):
    """Run a coroutine that does not suspend (an event handler's ``execute``) to its end."""
    try:
        coroutine.send(None)
    except StopIteration:
        pass
    else:
        coroutine.close()
