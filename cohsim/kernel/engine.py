"""The launch simulation's clock (cohsim.kernel.launch): simpy's scheduling, with processes
that are bare generators and timeouts that are bare integers.

A mesh prediction's replicate (100 x 50) had about 275,000 events on simpy, two thirds of
them a process waiting a fixed time. simpy builds a Timeout event for each (an object, its
callback list, its `Process._resume` callback) and wraps each process in a Process event that
is scheduled once more when the generator returns. Here:

- a process yields an `int`, a number of ns, to wait that long: the heap gets the entry simpy's
  Timeout would have put there, `(now + delay, NORMAL, id, generator)`, with the id drawn at
  the same moment (simpy draws it when the Timeout is made, which is where the process yields
  it), and popping it resumes the generator directly;
- a process yields an event to wait for it, as in simpy (the generator itself is put in the
  event's callbacks; an event already processed resumes it at once);
- `process(generator)` schedules the generator's start as simpy's Initialize event does
  (URGENT, an id), and nothing when it returns: nobody waits on a process here, and an event
  without callbacks does nothing when it is processed, so leaving it out moves no other
  event's order (ids only break ties, and the others' ids keep their order);
- `advance(delay)`: a process about to wait `delay` when nothing else is due before then
  moves the clock and goes on without a heap entry at all (the entry would have been the next
  one popped). A mount_lock hold is such a wait 97 % of the time, a call's path walk half.

Heap entries are ordered by (time, priority, id) as simpy orders them, and the ids are drawn
from one counter in the same order: the same seed gives the same simulation, event for event
(tests/kernel/test_engine.py runs a whole launch on simpy's own Environment through an adapter
and compares). Plain simpy events (`event()`, `timeout()`, conditions) work as in simpy.

The clock is the attribute `now` (simpy's is a property: a function call per read, a million
reads a replicate).
"""

from __future__ import annotations

from collections.abc import Generator
from heapq import heappop, heappush
from typing import Any, TypeAlias

import simpy
from simpy.core import EmptySchedule
from simpy.events import NORMAL, PENDING, URGENT, EventPriority

#: what a process yields: an event to wait for, or an int, ns to wait
Yield: TypeAlias = "simpy.Event | int"
#: a simulated process: a generator of `Yield`s
Proc: TypeAlias = Generator[Yield, Any, None]

_new_event = simpy.Event.__new__


def trigger(env: simpy.Environment, event: simpy.Event) -> None:
    """`event.succeed()` as simpy does it (the event marked successful with value None and
    scheduled now, NORMAL, with the next id), without a call into simpy's Python: in the
    compiled simulation (setup.py) a million of these a 1,000-container replicate were a
    Python frame each."""
    if not wake(env, event):
        raise RuntimeError(f"{event} has already been triggered")


def wake(env: simpy.Environment, event: simpy.Event) -> bool:
    """`trigger` if nobody has triggered `event` yet (simpy's `if not event.triggered:
    event.succeed()`, one check instead of two); True if this call did."""
    if event._value is not PENDING:
        return False
    event._ok = True
    event._value = None
    heappush(env._queue, (env.now, NORMAL, next(env._eid), event))
    return True


class Environment(simpy.Environment):
    """simpy's Environment with bare-generator processes and integer timeouts (the module
    docstring). `run` accepts None, a time, or an event, as simpy's does."""

    now: int = 0  # type: ignore[assignment]  # a plain attribute, not simpy's property

    def __init__(self, initial_time: int = 0) -> None:
        super().__init__(initial_time)
        self.now = initial_time
        #: (time, priority, id, event or generator), a heap
        self._queue: list[Any] = []  # type: ignore[assignment]
        self._firing = False  #: an event's callbacks other than the last are being called

    @property  # type: ignore[override]
    def _now(self) -> int:  # simpy's own name for the clock, for its code
        return self.now

    @_now.setter
    def _now(self, value: int) -> None:
        self.now = value

    def event(self) -> simpy.Event:  # type: ignore[override]
        """A new untriggered Event (simpy binds its bound classes only for its own class, so a
        subclass would build each through a descriptor)."""
        ev = _new_event(simpy.Event)
        ev.env = self
        ev.callbacks = []
        return ev

    def schedule(
        self, event: simpy.Event, priority: EventPriority = NORMAL, delay: Any = 0
    ) -> None:
        heappush(self._queue, (self.now + delay, priority, next(self._eid), event))

    def process(self, generator: Proc) -> None:  # type: ignore[override]
        """Start `generator` now, after the events already due now (simpy's Initialize)."""
        heappush(self._queue, (self.now, URGENT, next(self._eid), generator))

    def _resume(self, gen: Proc, event: simpy.Event) -> None:
        """Resume `gen`, which waited for `event`, as simpy's Process does."""
        try:
            if event._ok:
                target = gen.send(event._value)
            else:
                event._defused = True  # type: ignore[attr-defined]
                target = gen.throw(event._value)
        except StopIteration:
            return
        if type(target) is int and target >= 0:  # `_wait`'s first case, written out
            heappush(self._queue, (self.now + target, NORMAL, next(self._eid), gen))
        else:
            self._wait(gen, target)

    def _wait(self, gen: Proc, target: Yield) -> None:
        """`gen` yielded `target`: schedule it or make it wait (an event already processed
        resumes it at once, as in simpy)."""
        while True:
            if type(target) is int:
                if target < 0:
                    raise ValueError(f"Negative delay {target}")
                heappush(self._queue, (self.now + target, NORMAL, next(self._eid), gen))
                return
            callbacks = target.callbacks  # type: ignore[union-attr]
            if callbacks is not None:
                callbacks.append(gen)  # type: ignore[arg-type]
                return
            try:
                if target._ok:  # type: ignore[union-attr]
                    target = gen.send(target._value)  # type: ignore[union-attr]
                else:
                    target._defused = True  # type: ignore[union-attr]
                    target = gen.throw(target._value)  # type: ignore[union-attr]
            except StopIteration:
                return

    def advance(self, delay: int) -> bool:
        """Let `delay` ns pass for the running process without a heap entry, when nothing
        else is due before then: True if the clock moved (the caller goes on), False if the
        caller must `yield delay` as usual.

        Exact: a process that yields `delay` gets the entry (now + delay, NORMAL, id) with an
        id above every entry's in the heap; when every entry is due later, that entry is
        the next one popped and the process the next thing run, so going on at once is the
        same simulation (the id it would have drawn only broke ties, and the others keep
        their order). Not while other callbacks of the event being processed are still to
        run (they run at the present time)."""
        queue = self._queue
        if self._firing or (queue and queue[0][0] <= self.now + delay) or delay < 0:
            return False
        self.now += delay
        return True

    def _fire(self, event: simpy.Event) -> None:
        """Process an event: call its callbacks (resume the generators waiting on it)."""
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
        if len(callbacks) > 1:
            self._firing = True  # `advance` waits for the last callback
            try:
                for cb in callbacks[:-1]:
                    if callable(cb):
                        cb(event)
                    else:
                        self._resume(cb, event)
            finally:
                self._firing = False
        if callbacks:
            cb = callbacks[-1]
            if callable(cb):
                cb(event)
            else:
                self._resume(cb, event)
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc

    def step(self) -> None:
        """Process the next heap entry."""
        try:
            self.now, _, _, item = heappop(self._queue)  # type: ignore[assignment]
        except IndexError:
            raise EmptySchedule from None
        if not isinstance(item, simpy.Event):
            try:
                self._wait(item, item.send(None))
            except StopIteration:
                pass
        else:
            self._fire(item)

    def run(self, until: Any = None) -> Any:
        """Step until the queue is empty (`until` None), until time `until`, or until the
        event `until` has been processed (then return its value)."""
        if until is not None and not isinstance(until, simpy.Event):
            at = until if isinstance(until, int) else float(until)
            if at <= self.now:
                raise ValueError(f"until ({at}) must be greater than the current simulation time")
            until = self.event()
            until._ok, until._value = True, None
            self.schedule(until, URGENT, at - self.now)
        if until is not None and until.callbacks is None:
            return until.value
        # as simpy: the callbacks `until` has now run when it is processed, the run stops,
        # and the ones added meanwhile stay for a later run
        stop_at = len(until.callbacks) if until is not None else 0
        queue, eid = self._queue, self._eid
        wait, fire = self._wait, self._fire
        event_type, push, pop = simpy.Event, heappush, heappop
        while queue:
            now, _, _, item = pop(queue)
            self.now = now
            if not isinstance(item, event_type):  # a timeout ends or a process starts: resume it
                try:
                    target = item.send(None)
                except StopIteration:
                    continue
                if type(target) is int and target >= 0:  # the hot path, written out
                    push(queue, (self.now + target, NORMAL, next(eid), item))
                else:
                    wait(item, target)
            elif item is until:
                callbacks = until.callbacks
                until.callbacks = callbacks[:stop_at]
                fire(until)
                until.callbacks = callbacks[stop_at:]
                self.schedule(until, EventPriority(-1))
                return until.value
            else:
                fire(item)
        if until is not None:
            raise RuntimeError(
                f'No scheduled events left but "until" event was not triggered: {until}'
            )
        return None
