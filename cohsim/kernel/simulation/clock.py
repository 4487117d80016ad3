"""The launch simulation's clock (cohsim.kernel.simulation.launch): simpy's scheduling, written for
mypyc, with processes that are bare generators and timeouts that are bare integers.

simpy's Environment is a Python class: compiled by mypyc (setup.py), a subclass of it is not
a native class, and every read of the clock, of the heap or of an event's state was a lookup
in an instance's dict, a million a replicate. Here the clock and its events are native classes
of their own (no simpy at all) with typed attributes:

- `Environment`: `now` (int ns), the heap, the id counter (an int), `run`, `process`,
  `event`, `timeout` and `advance`;
- `Event`: `succeed(value)`, `triggered`, `value`, `|` and `&` (a `Condition`'s
  event, as simpy's: any or all of its events processed) - what the simulation and its tests
  use of simpy's events. Events only succeed (nothing here fails an event). A started
  process is an Event too (its generator in `gen`): it is its own heap entry while it waits
  a fixed time, so a timeout allocates nothing, and the heap holds one final class.

What a process does:

- it yields an `int`, a number of ns, to wait that long: its heap entry is the one simpy's
  Timeout would have had, (now + delay, NORMAL, id), with the id drawn at the same moment
  (simpy draws it when the Timeout is made, which is where the process yields it), and
  popping it resumes the generator directly (through its own C slot when compiled);
- it yields an event to wait for it, as in simpy (the process is put in the event's
  callbacks; an event already processed resumes it at once);
- `process(generator)` schedules the generator's start as simpy's Initialize event does
  (URGENT, an id), and nothing when it returns: nobody waits on a process here, and an event
  without callbacks does nothing when it is processed, so leaving it out moves no other
  event's order (ids only break ties, and the others' ids keep their order);
- `advance(delay)`: a process about to wait `delay` when nothing else is due before then
  moves the clock and goes on without a heap entry at all (the entry would have been the next
  one popped). A mount_lock hold is such a wait 97 % of the time, a call's path walk half.

Heap entries are ordered by (time, priority, id) as simpy orders them (the priority and the id
in one int, `rank`), and the ids are drawn from one counter in the same order: the same seed
gives the same simulation, event for event (tests/kernel/simulation/test_clock.py runs a whole
launch on simpy's own Environment, every wait a Timeout, through an adapter and compares). The heap
is a binary heap of the entries themselves, sifted here (native comparisons of two ints, no tuple
per entry); any heap pops entries of distinct keys in the same order.

`iround` is round() for the waits the simulation works out (mypyc has no native round()).
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any, Final, TypeAlias, final

#: simpy's priorities: a process's start comes before the other events due at the same time
URGENT: Final = 0
NORMAL: Final = 1
#: `rank` = id, + RANK_SPAN for NORMAL: (priority, id) in one int while ids stay below it
RANK_SPAN: Final = 1 << 48

#: what a process yields: an event to wait for, or an int, ns to wait
Yield: TypeAlias = "Event | int"
#: a simulated process: a generator of `Yield`s
Proc: TypeAlias = Generator[Yield, Any, None]


@final
class Event:
    """An event that processes wait for (simpy's Event, succeeding only). `succeed` schedules
    it now; when it is processed, the processes waiting on it are resumed in the order they
    came (and the conditions it is part of are checked).

    A started process is an Event too, one that nobody waits on: its generator is `gen`, and
    it is its own heap entry while it waits a fixed time (a timeout allocates nothing). One
    final class for everything in the heap: compiled, reading an entry off the heap checks
    its type with one comparison (a subclass needed a walk of the class's bases)."""

    def __init__(self, env: Environment, gen: Proc | None = None) -> None:
        self.env = env
        #: the processes (and conditions) waiting; None once processed
        self.callbacks: list[object] | None = []
        self.triggered = False  #: succeeded (scheduled or processed)
        self._value: object = None
        self.gen = gen  #: a process's generator; None for an event
        self.cond: Condition | None = None  #: the condition this is the event of
        self.time = 0  #: in the heap: due then (ns)
        self.rank = 0  #: ... and ordered by this among those due then

    @property
    def ok(self) -> bool:
        return self.triggered

    @property
    def value(self) -> object:
        if not self.triggered:
            raise AttributeError(f"Value of {self!r} is not yet available")
        return self._value

    def succeed(self, value: object = None) -> Event:
        """Trigger the event: scheduled now (NORMAL, the next id), as simpy's succeed."""
        if self.triggered:
            raise RuntimeError(f"{self!r} has already been triggered")
        self.triggered = True
        self._value = value
        env = self.env
        env.schedule(self, NORMAL, env.now)
        return self

    def __or__(self, other: Event) -> Event:
        return Condition(self.env, False, [self, other]).event

    def __and__(self, other: Event) -> Event:
        return Condition(self.env, True, [self, other]).event


@final
class Condition:
    """simpy's Condition: its `event` succeeds when any (or all) of `events` have been
    processed, with the value {event: value} of those processed. As in simpy, it waits in each
    event's callbacks (where it is checked when the event is processed) and leaves them when
    its event is processed."""

    def __init__(self, env: Environment, all_of: bool, events: list[Event]) -> None:
        self.event = Event(env)
        self.event.cond = self
        self.events = events
        self.all_of = all_of
        self.count = 0
        for event in events:
            if event.env is not env:
                raise ValueError("It is not allowed to mix events from different environments")
        for event in events:
            callbacks = event.callbacks
            if callbacks is None:
                self.check()
            else:
                callbacks.append(self)

    def check(self) -> None:
        """One of the events was processed."""
        if self.event.triggered:
            return
        self.count += 1
        if not self.all_of or self.count == len(self.events):
            self.event.succeed()

    def build_value(self) -> None:
        """The event is processed: leave the events' callbacks; the value is the events
        processed."""
        self.remove_checks()
        value: dict[Event, object] = {}
        self.populate(value)
        self.event._value = value

    def remove_checks(self) -> None:
        for event in self.events:
            callbacks = event.callbacks
            if callbacks and self in callbacks:
                callbacks.remove(self)
            if event.cond is not None:
                event.cond.remove_checks()

    def populate(self, value: dict[Event, object]) -> None:
        for event in self.events:
            if event.cond is not None:
                event.cond.populate(value)
            elif event.callbacks is None:
                value[event] = event._value


def iround(x: float) -> int:
    """`round(x)` (to the nearest int, halves to even), as native code where this module is
    compiled: mypyc calls the builtin round through Python (a lookup, a call, a float and an
    int object), and the simulation rounds every wait it works out to whole ns."""
    f = math.floor(x)
    d = x - f  # exact for x >= 0 (the waits); round(x)'s result for any finite x either way
    if d > 0.5 or (d == 0.5 and f & 1):
        return f + 1
    return f


@final
class Environment:
    """The clock and its heap (the module docstring). `run` accepts None, a time or an event,
    as simpy's does."""

    def __init__(self, initial_time: int = 0) -> None:
        self.now = initial_time  #: ns
        self.queue: list[Event] = []  #: a binary heap by (time, rank)
        self.eid = 0  #: the next id
        self.firing = False  #: an event's callbacks other than the last are being called

    def event(self) -> Event:
        """A new untriggered event."""
        return Event(self)

    def timeout(self, delay: int, value: object = None) -> Event:
        """An event that succeeds `delay` ns from now (simpy's Timeout)."""
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        ev = Event(self)
        ev.triggered = True
        ev._value = value
        self.schedule(ev, NORMAL, self.now + delay)
        return ev

    def process(self, generator: Proc) -> None:
        """Start `generator` now, after the events already due now (simpy's Initialize)."""
        self.schedule(Event(self, generator), URGENT, self.now)

    def schedule(self, entry: Event, priority: int, at: int) -> None:
        """Put `entry` in the heap, due at `at`, with the next id."""
        rank = self.eid if priority == URGENT else RANK_SPAN + self.eid
        self.eid += 1
        entry.time = at
        entry.rank = rank
        heap = self.queue
        pos = len(heap)
        heap.append(entry)
        while pos > 0:  # sift up
            up = (pos - 1) >> 1
            parent = heap[up]
            if at < parent.time or (at == parent.time and rank < parent.rank):
                heap[pos] = parent
                pos = up
            else:
                break
        heap[pos] = entry

    def pop(self) -> Event:
        """Take the heap's first entry out."""
        heap = self.queue
        last = heap.pop()
        n = len(heap)
        if not n:
            return last
        first = heap[0]
        t, r = last.time, last.rank
        pos, child = 0, 1
        while child < n:  # sift `last` down from the top
            c = heap[child]
            if child + 1 < n:
                right = heap[child + 1]
                if right.time < c.time or (right.time == c.time and right.rank < c.rank):
                    child += 1
                    c = right
            if t < c.time or (t == c.time and r < c.rank):
                break
            heap[pos] = c
            pos = child
            child = 2 * pos + 1
        heap[pos] = last
        return first

    def resume(self, proc: Event, value: object) -> None:
        """Resume the process `proc` with `value` (what it waited for) and schedule or park it
        where it next waits (an event already processed resumes it at once, as in simpy)."""
        gen = proc.gen
        if gen is None:
            raise TypeError(f"{proc!r} is not a process")
        while True:
            if value is None:
                # one step, as next(gen) (compiled, the generator's own C slot; next() and
                # send() would be calls through Python)
                for target in gen:  # noqa: B007 (one step: `target` is used below)
                    break
                else:
                    return
            else:
                try:
                    target = gen.send(value)
                except StopIteration:
                    return
            if isinstance(target, int):
                if target < 0:
                    raise ValueError(f"Negative delay {target}")
                self.schedule(proc, NORMAL, self.now + target)
                return
            if not isinstance(target, Event):
                raise TypeError(f"a process yielded {target!r}, not an event or an int")
            callbacks = target.callbacks
            if callbacks is not None:
                callbacks.append(proc)
                return
            value = target._value

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
        if self.firing or delay < 0:
            return False
        at = self.now + delay
        queue = self.queue
        if queue and queue[0].time <= at:
            return False
        self.now = at
        return True

    def fire(self, event: Event) -> None:
        """Process an event: resume the processes waiting on it, check its conditions."""
        callbacks = event.callbacks
        event.callbacks = None
        if event.cond is not None:
            event.cond.build_value()
        if not callbacks:
            return
        last = len(callbacks) - 1
        if last:
            self.firing = True  # `advance` waits for the last callback
            try:
                for i in range(last):
                    self._call(callbacks[i], event)
            finally:
                self.firing = False
        self._call(callbacks[last], event)

    def _call(self, callback: object, event: Event) -> None:
        if isinstance(callback, Event):  # a process
            self.resume(callback, event._value)
        elif isinstance(callback, Condition):
            callback.check()
        else:
            raise TypeError(f"not a callback here: {callback!r}")

    def run(self, until: Event | int | None = None) -> object:
        """Process events until the heap is empty (`until` None), until time `until`, or until
        the event `until` has been processed (then return its value; as in simpy, the
        callbacks it had when the run began have run, and those added since never run)."""
        stop: Event | None = None
        if isinstance(until, Event):
            if until.callbacks is None:
                return until._value
            stop = until
        elif until is not None:
            if until <= self.now:
                raise ValueError(
                    f"until ({until}) must be greater than the current simulation time"
                )
            stop = Event(self)
            stop.triggered = True
            self.schedule(stop, URGENT, until)
        stop_at = len(stop.callbacks or []) if stop is not None else 0
        queue = self.queue
        while queue:
            item = self.pop()
            self.now = item.time
            if item.gen is not None:  # a wait ends or a process starts: resume it
                self.resume(item, None)
            elif item is stop:
                stop.callbacks = (stop.callbacks or [])[:stop_at]
                self.fire(stop)
                return stop._value
            else:
                self.fire(item)
        if stop is not None:
            raise RuntimeError(
                f'No scheduled events left but "until" event was not triggered: {stop}'
            )
        return None
