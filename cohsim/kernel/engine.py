"""The launch simulation's clock (cohsim.kernel.launch): simpy's Environment with its
hottest paths written out.

A mesh prediction's replicate steps about 275,000 events, most of them timeouts. simpy builds
a timeout through a bound class (a method object, the Timeout's `__init__`, then `schedule`)
and steps each event through `run` -> `step`; here `timeout` and `event` build the same
events with the same fields, `timeout` pushes the same (time, priority, id, event) entry, and
`run` pops and calls back in its own loop. The events, their ids and so their order are
simpy's own: the same seed gives the same simulation, event for event.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, EventPriority, Timeout

_new_timeout = Timeout.__new__
_new_event = simpy.Event.__new__


class Environment(simpy.Environment):
    """simpy's Environment, with a cheaper `timeout` and `run(until=event)` (the only form
    the launch simulation uses)."""

    def event(self) -> simpy.Event:  # type: ignore[override]
        """A new untriggered Event (simpy binds its bound classes only for its own class, so a
        subclass would build each through a descriptor)."""
        ev = _new_event(simpy.Event)
        ev.env = self
        ev.callbacks = []
        return ev

    def timeout(self, delay: int = 0, value: Any | None = None) -> Timeout:  # type: ignore[override]
        """A Timeout `delay` ns from now, scheduled as simpy schedules one."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        ev = _new_timeout(Timeout)
        ev.env = self
        ev.callbacks = []
        ev._value = value
        ev._delay = delay
        ev._ok = True
        heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), ev))
        return ev

    def run(self, until: Any = None) -> Any:
        """Step events until the event `until` has been processed; return its value."""
        if not isinstance(until, simpy.Event):
            return super().run(until)
        if until.callbacks is None:
            return until.value
        until.callbacks.append(StopSimulation.callback)
        queue = self._queue
        try:
            while True:
                try:
                    self._now, _, _, event = heappop(queue)
                except IndexError:
                    raise EmptySchedule from None
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                try:
                    for callback in callbacks:
                        callback(event)
                except StopSimulation:  # as simpy: the rest of the callbacks stay scheduled
                    event.callbacks = callbacks[callbacks.index(callback) + 1 :]
                    self.schedule(event, EventPriority(-1))
                    raise
                if not event._ok and not hasattr(event, "_defused"):
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
        except StopSimulation as stop:
            return stop.args[0]
        except EmptySchedule:
            raise RuntimeError(
                f'No scheduled events left but "until" event was not triggered: {until}'
            ) from None
