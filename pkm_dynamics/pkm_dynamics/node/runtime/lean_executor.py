"""A lean executor: one wait set kept while the entities it spins stay the same, each ready
entity taken and its callback run directly in the spinning thread.

rclpy's executors build a new wait set at every wake-up and run each callback through a
generator, a handler task and a coroutine; the multi-threaded one also takes each entity in
a pool thread and triggers its guard condition two or three times per callback, each trigger
waking the spinning thread for another wait-set build. Measured round trips of an empty
service (bench/README.md): the multi-threaded executor adds ~0.2-0.3 ms to the
single-threaded one, and ~20 more services on the node another ~0.1 ms, as much as a crane's
whole one-point inverse dynamics.

The node runs one :class:`LeanExecutor` per callback group, each in a thread of its own
(:func:`~pkm_dynamics.node.runtime.spinning.spin_until_signal`): the callbacks of a group run one after
another, in the order taken, while the other groups go on (a long trajectory or a model build
does not hold up ``~/get_model_info``), and no callback is handed from one thread to another.
An executor made for some callback groups (``groups``) waits on their entities only; the one
of the rest (``exclude``) is the node's executor, woken when the node creates or destroys an
entity, and it wakes the others (``woken_by``). The streaming companion node has two: one of
its subscriptions (the references) and their event handlers, and one of the rest, mostly the
QoS event handlers of its publishers (rclpy makes two or three per publisher and subscription:
rare events that would otherwise be held, added and asked after at every reference, each a
Python call: 20-90 us more per reference with the companion's 14, ``bench/profile_stream.py``).
Callbacks that take a :class:`rclpy.timer.TimerInfo` are not supported (the node's timers take
none).

It offers what :func:`~pkm_dynamics.node.runtime.spinning.spin_until_signal` and rclpy's ``Node`` use of an
executor: ``add_node`` / ``remove_node`` / ``get_nodes``, ``wake``, ``spin_once``, ``shutdown``.
Entities are held (``with handle``) while waited on, taken from and their callbacks run (a
message's wake-up runs straight into its callback), so one destroyed meanwhile by another
thread or a callback (cleanup) is destroyed once the spin's callbacks have run, never under a
wait or a take. An exception raised by a callback propagates out of :meth:`spin_once` (the
spinning thread then stops, as with rclpy's)."""
from contextlib import ExitStack

from rclpy.exceptions import InvalidHandle
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.subscription import Subscription

#: the entity kinds of a node, as (node attribute, wait-set kind, wait-set add method)
_KINDS = (('subscriptions', 'subscription', 'add_subscription'),
          ('guards', 'guard_condition', 'add_guard_condition'),
          ('timers', 'timer', 'add_timer'),
          ('clients', 'client', 'add_client'),
          ('services', 'service', 'add_service'))
#: the entity kinds an executor can be made for (``kinds``): those of a node, and its
#: waitables (rclpy's QoS event handlers of each publisher and subscription; those of a
#: subscription go with the subscriptions, :meth:`LeanExecutor._node_waitables`)
KINDS = tuple(kind for kind, _, _ in _KINDS) + ('waitables',)


class LeanExecutor:
    """Spins nodes with one kept wait set, every callback inline in the spinning thread (see
    the module doc); ``context``: the nodes'. Which entities: ``groups``, only those of these
    callback groups (None: every entity but those of ``exclude``); ``kinds``, only these kinds
    (:data:`KINDS`; None: all). ``woken_by``: another executor of the same nodes whose
    :meth:`wake` wakes this one too. The executor that no other wakes and that is not made for
    some groups is the nodes' executor (``node.executor``: the node wakes it when it creates or
    destroys an entity, and it wakes the executors it leads), so that every executor of a
    node sees its new entities, and one destroyed is let go at once (a handle held in a wait
    is destroyed only when the wait returns: an executor never woken would keep a destroyed
    publisher alive in the middleware). ``prepare``: a callable run in the spinning thread
    before each wait (cheap when it has nothing to do; :meth:`wake` makes it run soon): the node
    warms a new model's per-thread scratch in the thread that will stream it."""

    def __init__(self, context, groups=None, exclude=(), kinds=None, woken_by=None,
                 prepare=None):
        self._context = context
        self._prepare = prepare
        self._groups = None if groups is None else frozenset(groups)
        self._exclude = frozenset(exclude)
        unknown = set(kinds or ()) - set(KINDS)
        if unknown:
            raise ValueError(f'unknown entity kinds {sorted(unknown)}: choose from {KINDS}')
        self._kinds = tuple(k for k in _KINDS if kinds is None or k[0] in kinds)
        self._kind_names = frozenset(KINDS if kinds is None else kinds)
        self._waitables = 'waitables' in self._kind_names
        self._leads_nodes = groups is None and woken_by is None
        self._followers = []
        if woken_by is not None:
            woken_by._followers.append(self)
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
        if self._leads_nodes:
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
        """Wake the wait, and those of the executors this one leads (the node calls this when
        it creates or destroys an entity)."""
        self._guard.trigger()
        for follower in self._followers:
            follower.wake()

    def shutdown(self, timeout_sec=None):
        self._is_shutdown = True
        self._guard.trigger()
        return True

    # -- spinning ------------------------------------------------------------------------------
    def _spins(self, entity):
        group = entity.callback_group
        return group not in self._exclude if self._groups is None else group in self._groups

    def _held_entities(self, held):
        """Every entity of the nodes this executor spins, by kind (and the waitables), each
        entered on ``held`` (skipped if destroyed already)."""
        entities = {kind: [] for kind, _, _ in _KINDS}
        waitables = []
        for node in self._nodes:
            for kind, _, _ in self._kinds:
                entities[kind].extend(e for e in getattr(node, kind)
                                      if self._spins(e) and _hold(held, e.handle))
            waitables.extend(w for w in self._node_waitables(node)
                             if self._spins(w) and _hold(held, w))
        return entities, waitables

    def _node_waitables(self, node):
        """The waitables of ``node`` this executor spins. The event handlers of a subscription
        go with the subscriptions: Fast DDS reports a subscription's event condition as
        triggered while data waits to be taken, so a wait set holding the events without the
        subscription would return at once, again and again, until another thread took the
        data."""
        subscriptions = 'subscriptions' in self._kind_names
        if self._waitables and subscriptions:
            return node.waitables
        of_subscriptions = [h for s in node.subscriptions for h in s.event_handlers]
        if subscriptions:
            return of_subscriptions
        if self._waitables:
            return [w for w in node.waitables if w not in of_subscriptions]
        return []

    def _prepared_wait_set(self, entities, waitables):
        """The kept wait set, rebuilt when the entities changed, with every entity added."""
        key = tuple(tuple(entities[kind]) for kind, _, _ in _KINDS) + (tuple(waitables),)
        if key != self._key:
            count = [len(entities[kind]) for kind, _, _ in _KINDS] + [0]
            count[1] += 1                                   # the executor's own guard
            for w in waitables:
                n = w.get_num_entities()
                for i, field in enumerate(('num_subscriptions', 'num_guard_conditions',
                                           'num_timers', 'num_clients', 'num_services',
                                           'num_events')):
                    count[i] += getattr(n, field)
            self._wait_set = _rclpy.WaitSet(*count, self._context.handle)
            self._key = key
        wait_set = self._wait_set
        wait_set.clear_entities()
        wait_set.add_guard_condition(self._guard.handle)
        for kind, _, add in _KINDS:
            for e in entities[kind]:
                getattr(wait_set, add)(e.handle)
        for w in waitables:
            w.add_to_wait_set(wait_set)
        return wait_set

    def spin_once(self, timeout_sec=None):
        """Wait (``timeout_sec``; None: until something is ready), take every ready entity
        and dispatch its callback at once, in the order of the nodes' entities by kind
        (subscriptions first), then the ready waitables: the wake-up of a message runs
        straight into its callback (the waitables, rare events, are looked at after it, and
        the handles are let go after it)."""
        if self._is_shutdown:
            return
        if self._prepare is not None:
            self._prepare()
        timeout_ns = -1 if timeout_sec is None else int(timeout_sec * 1e9)
        with ExitStack() as held:
            entities, waitables = self._held_entities(held)
            held.enter_context(self._context.handle)
            wait_set = self._prepared_wait_set(entities, waitables)
            wait_set.wait(timeout_ns)
            if self._is_shutdown or not self._context.ok():
                return
            for kind, ready_kind, _ in _KINDS:
                if not entities[kind]:
                    continue
                ready = wait_set.get_ready_entities(ready_kind)
                for e in entities[kind]:
                    if e.handle.pointer in ready:
                        _DISPATCH[kind](e)
            for w in waitables:
                if w.is_ready(wait_set):
                    _run(w.execute(w.take_data()))


def _hold(stack, handle):
    """Enter ``handle`` on ``stack`` (it is not destroyed while held); False if it has been
    destroyed already."""
    try:
        stack.enter_context(handle)
    except InvalidHandle:
        return False
    return True


def _run(coroutine):
    """Run a coroutine that does not suspend (an event handler's ``execute``) to its end."""
    try:
        coroutine.send(None)
    except StopIteration:
        pass
    else:
        coroutine.close()


# -- a ready entity: taken, and its callback run (nothing when there is nothing to take) ------
def _dispatch_subscription(sub):
    taken = sub.handle.take_message(sub.msg_type, sub.raw)
    if taken is None:
        return
    if sub._callback_type is Subscription.CallbackType.MessageOnly:
        sub.callback(taken[0])
    else:
        sub.callback(*taken)


def _dispatch_guard(gc):
    if gc.callback is not None:
        gc.callback()


def _dispatch_timer(timer):
    try:
        timer.handle.call_timer_with_info()
    except Exception:           # cancelled meanwhile (TimerCancelledError): nothing to run
        return
    if timer.callback is not None:
        timer.callback()


def _dispatch_client(client):
    header, response = client.handle.take_response(client.srv_type.Response)
    if header is None:
        return
    try:
        future = client.get_pending_request(header.request_id.sequence_number)
    except KeyError:            # the request was cancelled
        return
    future.set_result(response)


def _dispatch_service(service):
    """Take a request, run the service's callback and send its response (the service may
    have been destroyed meanwhile: then the response is dropped, as rclpy does)."""
    request, header = service.handle.service_take_request(service.srv_type.Request)
    if header is None:
        return
    response = service.callback(request, service.srv_type.Response())
    try:
        service.send_response(response, header)
    except InvalidHandle:
        pass


_DISPATCH = {'subscriptions': _dispatch_subscription, 'guards': _dispatch_guard,
             'timers': _dispatch_timer, 'clients': _dispatch_client,
             'services': _dispatch_service}
