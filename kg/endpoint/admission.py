"""Who gets the next free query worker of `kg serve`, and how many answer bytes it holds for slow readers.

A worker pool alone serves whoever asks first, so two clients sending runaway queries back to
back keep every worker busy and everyone else waits out the time limit. A *client* is an address
prefix (`client_of`: an IPv4 /24, an IPv6 /64; kg.core.defaults), not one address, since one machine
or network can send from many. `Admission` hands out worker slots by these rules:

- a client runs one query at a time while another client waits; alone it may use every worker;
- a client whose query recently hit a limit (time, memory, response size) is *heavy* for
  `penalty_seconds`: heavy clients together hold at most all workers but one, and start a query
  only while another started worker stays idle, so one worker stays free for everyone else (also
  while a killed worker is being replaced); a query that ran past half the time limit and finished
  makes its client no longer known (below), and counts as a runaway in the order, but ended no
  worker: on a busy machine a legitimate query of 6 s held its client as heavy for a minute;
- the total cap: clients not known to send quick queries (new, or heavy; a client becomes known
  when a query of its finishes in under half the time limit, and is no longer once it is heavy)
  together hold at most all workers but one while a known client has asked in the last `recent`
  seconds, so a flood of new prefixes cannot take every worker from the clients already served;
- among waiting clients the one whose wider network (`group_of`: IPv4 /16, IPv6 /48) spent the least
  worker time on runaways lately (queries that hit a limit or ran past half the time limit) goes
  first; a network with no known client counts the runaway time of all new prefixes too (`NEWCOMERS`),
  so an attacker sending each runaway from a fresh /16 waits behind the networks of known clients and
  their new prefixes. Then the network that used the least worker time in all, then the client that used
  the least itself (usage decays with a half-life), then first come first served: new prefixes of a
  network that sent runaways wait behind clients from elsewhere, and a network of many legitimate
  clients (a campus), whose worker time adds up, is not ranked behind one that sent runaways;
- a query that ran past half the time limit, or into it, while a worker of the server was loading the graph into
  memory (`loading`; its queries answered from the store meanwhile, beside the load) is *excused*, once per
  `penalty_seconds` per client: it counts for new prefixes (`NEWCOMERS`) as before, but not against its network,
  and its client is not made heavy (a legitimate query of a cold server's first minute held all eight clients of its
  /16 behind an attacker's fresh /16s, and its own client off the workers for a minute; decision 0058);
- nobody waits longer than `wait` seconds (shorter than the time limit: a client is told the
  server is busy instead of hanging), and a client may have at most `per_client` requests waiting.

`Buffers` counts the bytes of answers the server process holds until their clients have read
them: a client that reads slowly (or not at all) keeps its answer in memory for as long as the
socket's time limit, and many of them grew the server without bound.

Time comes from `clock` (time.monotonic), so the rules can be tested on a fake clock.
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kg.core.defaults import SERVE_BUFFERED, SERVE_BUFFERED_PER_CLIENT, SERVE_GROUP_V4, SERVE_GROUP_V6, SERVE_PREFIX_V4, SERVE_PREFIX_V6


def client_of(address: str, v4: int = SERVE_PREFIX_V4, v6: int = SERVE_PREFIX_V6) -> str:
    """The client an address belongs to: its network of `v4` (IPv4) or `v6` (IPv6) prefix bits, e.g.
    `127.0.1.0/24`; an IPv4 address mapped into IPv6 counts as IPv4; anything else is its own client."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = v4 if ip.version == 4 else v6
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))


def group_of(client: str, v4: int = SERVE_GROUP_V4, v6: int = SERVE_GROUP_V6) -> str:
    """The wider network a client (`client_of`) belongs to, e.g. `127.0.0.0/16`; a client that is no network is its own group."""
    try:
        net = ipaddress.ip_network(client)
    except ValueError:
        return client
    bits = v4 if net.version == 4 else v6
    return str(net.supernet(new_prefix=bits)) if net.prefixlen > bits else str(net)


NEWCOMERS = "new prefixes"  # the runaway time of all clients that were new when they sent it (Admission._runaway)


class Busy(Exception):
    """No slot within the wait; `status` 503 (server busy) or 429 (this client has too many waiting)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Client:
    running: int = 0
    waiting: int = 0
    usage: float = 0.0  # worker seconds, decayed
    stamp: float = 0.0  # when usage was last decayed
    heavy_until: float = 0.0
    known: bool = False  # a query of this client finished in under half the time limit (and none was heavy since)
    seen: float = -math.inf  # when it last asked
    last: tuple[float, bool, bool] = (0.0, False, False)  # its last query: worker seconds, whether it was new (not known, not
    # heavy) then, and whether it was excused (ran long while the graph was loading)
    excused_until: float = 0.0  # no other query of this client is excused before then


class Admission:
    """Slots for `slots` workers, shared fairly between clients (address prefixes)."""

    def __init__(self, slots: int, *, wait: float, limit: float, per_client: int = 8,
                 half_life: float = 30.0, penalty_seconds: float = 60.0, ready: Callable[[], int] | None = None,
                 recent: float = 30.0, clock: Callable[[], float] = time.monotonic,
                 prefixes: tuple[int, int] = (SERVE_PREFIX_V4, SERVE_PREFIX_V6), loading: Callable[[], bool] | None = None) -> None:
        """`ready`: how many idle workers are started and ready; a heavy client waits unless one would be
        left for others (a worker killed for a heavy query takes a while to replace). `prefixes`: the
        IPv4 and IPv6 prefix lengths that make one client. `loading`: is a worker loading the graph now (a
        long query that ran meanwhile is excused)."""
        self.slots, self.wait, self.limit, self.per_client = slots, wait, limit, per_client
        self.ready, self.recent, self.clock, self.prefixes, self.loading = ready, recent, clock, prefixes, loading
        self.half_life, self.penalty_seconds = half_life, penalty_seconds
        self._cond = threading.Condition()
        self._clients: dict[str, _Client] = {}
        self._groups: dict[str, _Client] = {}  # worker time by group_of(client)
        self._runaway: dict[str, _Client] = {}  # worker time of runaways by group_of(client), and of NEWCOMERS
        self._queue: dict[int, str] = {}  # ticket -> client, in arrival order
        self._bounded: set[int] = set()  # tickets of queries that cannot run away (`slot`)
        self._tickets = itertools.count()
        self._running = 0
        self._heavy_running = 0
        self._suspect_running = 0  # slots held by clients not known, or heavy, when they started

    @contextmanager
    def slot(self, address: str, bounded: bool = False) -> Iterator[bool]:
        """Hold a worker slot for the client of `address` (raises Busy); the time held counts as its usage. Gives
        whether its query is better kept off the workers that hold the graph: the client is heavy, or new while
        new prefixes have sent runaways lately (`NEWCOMERS`). `bounded`: the query cannot run away (a named query
        the query index answers, each under 0.5 s at 100,000 papers): from a client not heavy it is not suspect,
        waits before runaway-ranked ones, and, quick, makes its client known (decision 0052)."""
        client = client_of(address, *self.prefixes)
        heavy, suspect = self._enter(client, bounded)
        with self._cond:
            risky = heavy or (suspect and self._state(NEWCOMERS, self._runaway).usage >= 1.0)
        started = self.clock()
        slowed = self.loading is not None and self.loading()
        try:
            yield risky
        finally:
            slowed = slowed or (self.loading is not None and self.loading())
            self._leave(client, heavy, suspect, self.clock() - started, slowed)

    def penalize(self, address: str, timed_out: bool = False) -> None:
        """A query from `address` hit a limit: its client is heavy for a while (not for the time limit of an excused
        query: it is only no longer known)."""
        with self._cond:
            client = client_of(address, *self.prefixes)
            state = self._state(client)
            state.known = False
            seconds, new, excused = state.last
            if timed_out and excused:
                return
            state.heavy_until = self.clock() + self.penalty_seconds
            if seconds <= self.limit / 2:  # a longer one was counted as a runaway when it ended
                self._ran_away(client, seconds, new)

    @property
    def waiting(self) -> int:
        """How many requests wait for a slot."""
        with self._cond:
            return len(self._queue)

    @property
    def running(self) -> int:
        """How many slots are held."""
        with self._cond:
            return self._running

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until `predicate` (read under the lock) holds, as slots are taken and given back; False after `timeout` s."""
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def wake(self) -> None:
        """Make waiting requests look at the clock again (a fake clock moved by a test)."""
        with self._cond:
            self._cond.notify_all()

    def _state(self, client: str, table: dict[str, _Client] | None = None) -> _Client:
        now = self.clock()
        state = (self._clients if table is None else table).setdefault(client, _Client(stamp=now))
        state.usage *= math.pow(0.5, (now - state.stamp) / self.half_life)
        state.stamp = now
        return state

    def _heavy(self, state: _Client) -> bool:
        return state.heavy_until > self.clock()

    def _known_about(self) -> bool:
        """Has a known client (not heavy) asked in the last `recent` seconds?"""
        since = self.clock() - self.recent
        return any(st.known and not self._heavy(st) and (st.seen >= since or st.waiting or st.running)
                   for st in self._clients.values())

    def _eligible(self, client: str, known_about: bool, bounded: bool = False) -> bool:
        """Could this client's ticket take a free slot, ignoring the order of the queue?"""
        state = self._state(client)
        heavy = self._heavy(state)
        if self.slots > 1:
            if heavy and (self._heavy_running >= self.slots - 1 or (self.ready is not None and self.ready() < 2)):
                return False
            if (heavy or not (state.known or bounded)) and self._suspect_running >= self.slots - 1 and known_about:
                return False
        return not state.running or all(c == client for c in self._queue.values())

    def _ran_away(self, client: str, seconds: float, new: bool, network: bool = True) -> None:
        """Count `seconds` of a runaway against the client's network (unless not `network`), and against NEWCOMERS if
        the client was `new`."""
        if network:
            self._state(group_of(client), self._runaway).usage += seconds
        if new:
            self._state(NEWCOMERS, self._runaway).usage += seconds

    def _may_go(self, ticket: int, client: str) -> bool:
        if self._running >= self.slots:
            return False
        known_about = self._known_about()
        if not self._eligible(client, known_about, ticket in self._bounded):
            return False
        vouched = {group_of(c) for c, st in self._clients.items() if st.known and not self._heavy(st)}
        newcomers = self._state(NEWCOMERS, self._runaway).usage

        def rank(t: int, c: str) -> tuple[float, float, float, int]:
            group = group_of(c)
            runaway = self._state(group, self._runaway).usage
            first = 0.0 if t in self._bounded and not self._heavy(self._state(c)) else runaway if group in vouched else max(runaway, newcomers)
            return (first, self._state(group, self._groups).usage, self._state(c).usage, t)

        ranked = min(rank(t, c) for t, c in self._queue.items() if self._eligible(c, known_about, t in self._bounded))
        return ranked[3] == ticket

    def _enter(self, client: str, bounded: bool = False) -> tuple[bool, bool]:
        deadline = self.clock() + self.wait
        with self._cond:
            state = self._state(client)
            state.seen = self.clock()
            if state.waiting >= self.per_client:
                raise Busy(429, f"{state.waiting} queries of this client are waiting already; send the next when one is answered")
            ticket = next(self._tickets)
            self._queue[ticket] = client
            if bounded:
                self._bounded.add(ticket)
            state.waiting += 1
            self._cond.notify_all()  # for whoever watches the queue (wait_for)
            try:
                while not self._may_go(ticket, client):
                    left = deadline - self.clock()
                    if left <= 0:
                        raise Busy(503, f"all query workers are busy (waited {self.wait:g} s); try again shortly")
                    self._cond.wait(min(left, 0.5))
            finally:
                del self._queue[ticket]
                self._bounded.discard(ticket)
                state.waiting -= 1
                self._cond.notify_all()
            heavy = self._heavy(state)
            suspect = heavy or not (state.known or bounded)
            state.running += 1
            self._running += 1
            self._heavy_running += heavy
            self._suspect_running += suspect
            return heavy, suspect

    def _leave(self, client: str, heavy: bool, suspect: bool, seconds: float, slowed: bool = False) -> None:
        with self._cond:
            state = self._state(client)
            state.running -= 1
            state.usage += seconds
            self._state(group_of(client), self._groups).usage += seconds
            state.seen = self.clock()
            long = seconds > self.limit / 2
            excused = long and slowed and not heavy and state.excused_until <= state.seen
            state.last = (seconds, suspect and not heavy, excused)
            if excused:  # slowed by the load: counted for new prefixes only; known as it was (penalize: not heavy)
                state.excused_until = state.seen + self.penalty_seconds
                self._ran_away(client, seconds, suspect, network=False)
            elif long:  # not known (any more), but not heavy: it ended no worker (penalize: one that did)
                state.known = False
                self._ran_away(client, seconds, suspect and not heavy)
            elif not self._heavy(state):
                state.known = True
            self._running -= 1
            self._heavy_running -= heavy
            self._suspect_running -= suspect
            if len(self._clients) > 1000:  # forget idle clients whose history no longer matters
                now = self.clock()
                for name in [c for c, st in self._clients.items()
                             if not st.running and not st.waiting and st.heavy_until < now and self._state(c).usage < 0.01]:
                    del self._clients[name]
                for table in (self._groups, self._runaway):
                    for name in [g for g in table if self._state(g, table).usage < 0.01]:
                        del table[name]
            self._cond.notify_all()


class Buffers:
    """Bytes of answers the server process holds for clients still reading them: at most `total` in all
    and `per_client` for one client (an address prefix, as for Admission)."""

    def __init__(self, total: int = SERVE_BUFFERED, per_client: int = SERVE_BUFFERED_PER_CLIENT,
                 prefixes: tuple[int, int] = (SERVE_PREFIX_V4, SERVE_PREFIX_V6)) -> None:
        self.total, self.per_client, self.prefixes = total, per_client, prefixes
        self.held = 0
        self._by_client: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, address: str, size: int) -> tuple[int, str] | None:
        """Hold `size` bytes for the client of `address`: None, or why not (an HTTP status and a message)."""
        client = client_of(address, *self.prefixes)
        with self._lock:
            mine = self._by_client.get(client, 0)
            if mine + size > self.per_client:
                return 429, (f"this client has {mine / 1e6:.0f} MB of answers it has not read yet "
                             f"(limit {self.per_client / 1e6:.0f} MB); read them, then ask again")
            if self.held + size > self.total:
                return 503, (f"the server holds {self.held / 1e6:.0f} MB of answers clients are still reading "
                             f"(limit {self.total / 1e6:.0f} MB); try again shortly")
            self.held += size
            self._by_client[client] = mine + size
            return None

    def give(self, address: str, size: int) -> None:
        """`size` bytes held for the client of `address` were sent (or dropped)."""
        client = client_of(address, *self.prefixes)
        with self._lock:
            self.held -= size
            left = self._by_client.get(client, 0) - size
            if left > 0:
                self._by_client[client] = left
            else:
                self._by_client.pop(client, None)


class Held(Iterable[bytes]):
    """An answer's body as a WSGI server sends it: its bytes count as held (Buffers) until the server
    closes it, which it does once the client has read it all, or on an error or timeout."""

    def __init__(self, body: bytes, release: Callable[[], None] | None) -> None:
        self._body, self._release = body, release

    def __iter__(self) -> Iterator[bytes]:
        return iter([self._body])

    def close(self) -> None:
        """Give the bytes back (once)."""
        release, self._release, self._body = self._release, None, b""
        if release is not None:
            release()
