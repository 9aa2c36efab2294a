"""kg.endpoint.admission: who gets the next query worker, on a fake clock (no real sleeps; the end-to-end
checks through kg serve are in test_serve_limits)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from kg.endpoint.admission import Admission, Buffers, Busy, client_of, group_of


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


HELD: list[object] = []  # slots the tests keep (a dropped slot context would be closed, and its slot freed)


def enter(admission: Admission, address: str) -> bool:
    """Try to start a query from `address` at once (wait=0): True if it got a slot, which it keeps."""
    held = admission.slot(address)
    try:
        held.__enter__()
    except Busy:
        return False
    HELD.append(held)
    return True


def query(admission: Admission, clock: Clock, address: str, seconds: float) -> None:
    """One whole query from `address` that runs `seconds` of the fake clock."""
    with admission.slot(address):
        clock.now += seconds


def test_addresses_are_grouped_by_prefix() -> None:
    assert client_of("127.0.1.5") == client_of("127.0.1.200") == "127.0.1.0/24"
    assert client_of("127.0.2.1") != client_of("127.0.1.1")
    assert client_of("2001:db8:1:2::5") == client_of("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert client_of("2001:db8:1:3::5") != client_of("2001:db8:1:2::5")
    assert client_of("::ffff:10.1.2.3") == "10.1.2.0/24"  # an IPv4 client on an IPv6 socket
    assert client_of("fe80::1%eth0") == "fe80::/64"
    assert client_of("?") == "?" and client_of("") == ""
    assert client_of("10.1.2.3", v4=16) == "10.1.0.0/16"
    assert client_of("10.1.2.3", v4=32) == "10.1.2.3/32"
    assert group_of("127.1.7.0/24") == group_of("127.1.9.0/24") == "127.1.0.0/16"
    assert group_of("2001:db8:1:2::/64") == "2001:db8:1::/48" and group_of("?") == "?"


def test_an_attacker_rotating_addresses_in_its_prefix_stays_heavy() -> None:
    """Issue 30 M3: two attackers each spreading runaways over 16 addresses. Once each has hit a
    limit, a query from another address of theirs is held from the last worker."""
    admission = Admission(2, wait=0, limit=10)
    admission.penalize("127.0.1.1")  # each attacker's first runaway hit the time limit
    admission.penalize("127.0.2.1")
    assert enter(admission, "127.0.1.2")  # heavy, but a worker is left for others
    assert not enter(admission, "127.0.2.2")  # the last worker is not for heavy clients
    assert not enter(admission, "127.0.1.3")
    assert enter(admission, "127.0.3.1")  # a legitimate client gets it


def test_many_new_prefixes_hold_all_workers_but_one_while_known_clients_are_about() -> None:
    """The total cap: addresses from prefixes never seen (or heavy) hold at most all workers but
    one while a client known to send quick queries has asked lately; alone they may use all."""
    clock = Clock()
    admission = Admission(3, wait=0, limit=10, clock=clock, recent=30)
    assert enter(admission, "127.1.0.1") and enter(admission, "127.2.0.1") and enter(admission, "127.3.0.1")
    admission = Admission(3, wait=0, limit=10, clock=clock, recent=30)
    query(admission, clock, "10.0.0.1", 0.2)  # a known client: its query was quick
    assert enter(admission, "127.1.0.1") and enter(admission, "127.2.0.1")
    assert not enter(admission, "127.3.0.1")  # a new prefix: the last worker is kept
    assert not enter(admission, "127.4.0.1")
    assert enter(admission, "10.0.0.1")  # the known client gets it
    clock.now += 31  # the known client has not asked for a while: no worker is kept for it
    admission2 = Admission(3, wait=0, limit=10, clock=clock, recent=30)
    query(admission2, clock, "10.0.0.1", 0.2)
    clock.now += 31
    assert enter(admission2, "127.1.0.1") and enter(admission2, "127.2.0.1") and enter(admission2, "127.3.0.1")


def test_a_slow_query_leaves_its_client_unknown_and_a_limit_makes_it_heavy_until_the_penalty_ends() -> None:
    clock = Clock()
    admission = Admission(2, wait=0, limit=10, clock=clock, penalty_seconds=60, ready=lambda: 2)
    query(admission, clock, "10.0.0.1", 0.1)  # known
    query(admission, clock, "10.0.9.1", 6.0)  # over half the time limit: no longer known
    assert enter(admission, "10.0.9.2")
    assert not enter(admission, "10.0.9.3")  # one query at a time, while a known client is about
    admission = Admission(2, wait=0, limit=10, clock=clock, penalty_seconds=60, ready=lambda: 1)
    admission.penalize("10.0.9.1")
    assert not enter(admission, "10.0.9.1")  # heavy: only while another started worker stays idle
    clock.now += 61
    assert enter(admission, "10.0.9.1")  # the penalty is over


def test_a_slow_query_that_finished_leaves_its_client_unknown_but_not_heavy() -> None:
    """Issue 36 M4: on a busy machine a legitimate query ran past half the time limit and its client was heavy for a
    minute, so it waited for a spare worker behind the attackers. A query that finished ended no worker: its client
    is no longer known (capped with the new prefixes) but may start while only one worker is ready; one that hit a
    limit (penalize) makes it heavy."""
    clock = Clock()
    admission = Admission(2, wait=0, limit=10, clock=clock, penalty_seconds=60, ready=lambda: 1)
    query(admission, clock, "10.0.9.1", 6.0)
    assert enter(admission, "10.0.9.1")
    HELD.pop().__exit__(None, None, None)
    admission.penalize("10.0.9.1")
    assert not enter(admission, "10.0.9.1")


def test_a_query_slowed_by_the_load_of_the_graph_does_not_make_its_client_heavy_once_a_minute() -> None:
    """Issue 36 M4 (decision 0058): on a server just started, whose workers answer from the store while one loads the
    graph into memory, a legitimate query ran into the time limit and made its client heavy for a minute. While a
    worker loads, that is excused once a minute per client: not heavy (no longer known); a second one in that minute,
    one that ran out of memory, or one while nothing loads, is heavy as before."""
    clock = Clock()
    loads = [True]
    admission = Admission(2, wait=0, limit=10, clock=clock, penalty_seconds=60, ready=lambda: 1, loading=lambda: loads[0])
    query(admission, clock, "127.0.100.1", 0.5)  # known
    query(admission, clock, "127.0.100.1", 10.0)  # the time limit, while the graph loads
    admission.penalize("127.0.100.1", timed_out=True)
    assert enter(admission, "127.0.100.1")  # not heavy: it may start while only one worker is ready
    HELD.pop().__exit__(None, None, None)
    query(admission, clock, "127.0.100.1", 10.0)  # again within the minute
    admission.penalize("127.0.100.1", timed_out=True)
    assert not enter(admission, "127.0.100.1")
    clock.now += 61
    query(admission, clock, "127.0.101.1", 1.0)
    admission.penalize("127.0.101.1")  # out of memory (or a cut answer) while the graph loads: not the load's doing
    assert not enter(admission, "127.0.101.1")
    loads[0] = False
    query(admission, clock, "127.0.102.1", 10.0)  # nothing loads
    admission.penalize("127.0.102.1", timed_out=True)
    assert not enter(admission, "127.0.102.1")


def test_queries_slowed_by_the_load_of_the_graph_do_not_rank_their_network_behind_an_attackers() -> None:
    """Issue 36 M4 (decision 0058): the eight legitimate clients of the load test share one /16, and their slow first
    answers on a cold server (the label sort from the store beside the load, 5-10 s each) added up to more runaway time
    than an attacker's fresh /16 was charged, so their network waited behind it. Slowed by the load, they are counted
    for new prefixes only; their clients stay known."""
    clock = Clock()
    admission = Admission(1, wait=60, limit=10, clock=clock, loading=lambda: True)
    for k in range(8):
        query(admission, clock, f"127.0.{100 + k}.1", 0.5)  # known
        query(admission, clock, f"127.0.{100 + k}.1", 7.0)  # past half the limit while the graph loads
    query(admission, clock, "127.1.1.1", 10.0)  # an attacker's runaway from a new prefix
    order = served_after(admission, "127.9.0.1", ["127.2.1.1", "127.0.100.1"])
    assert order == ["127.0.100.1", "127.2.1.1"]


def served_after(admission: Admission, holder: str, addresses: list[str]) -> list[str]:
    """The order in which `addresses`, queued in this order while `holder` holds a slot, get one once it is let go."""
    hold = admission.slot(holder)
    hold.__enter__()
    order: list[str] = []
    threads = waiting(admission, addresses, order)
    hold.__exit__(None, None, None)
    for thread in threads:
        thread.join(10)
    return order


def waiting(admission: Admission, addresses: list[str], order: list[str], bounded: tuple[str, ...] = ()) -> list[threading.Thread]:
    """Threads that each wait for a slot for one address, in this order, and record when they get it (those in
    `bounded` for a query that cannot run away)."""
    threads = []
    for address in addresses:
        def go(a: str = address) -> None:
            with admission.slot(a, a in bounded):
                order.append(a)
        thread = threading.Thread(target=go)
        thread.start()
        threads.append(thread)
        queued = len(threads)
        admission.wait_for(lambda: admission.waiting == queued)  # noqa: B023 (called here, at once): queued in this order
    return threads


def test_the_waiting_client_that_used_least_worker_time_goes_first() -> None:
    clock = Clock()
    admission = Admission(1, wait=60, limit=10, clock=clock, half_life=30)
    query(admission, clock, "10.0.1.1", 4.0)  # 4 worker seconds
    query(admission, clock, "10.0.2.1", 1.0)
    clock.now += 30  # one half-life: 2 and 0.5
    query(admission, clock, "10.0.3.1", 3.0)  # 3 now: more than 10.0.1.1's decayed 2
    order = served_after(admission, "10.0.4.1", ["10.0.3.1", "10.0.1.1", "10.0.2.1"])
    assert order == ["10.0.2.1", "10.0.1.1", "10.0.3.1"]


def test_new_prefixes_of_a_network_that_used_the_workers_wait_behind_others() -> None:
    """An attacker spreading over many /24s of one /16: each new /24 has used no worker time, but
    its /16 has, so a client from elsewhere that is waiting too goes first."""
    clock = Clock()
    admission = Admission(1, wait=60, limit=10, clock=clock)
    for k in (1, 2, 3):
        query(admission, clock, f"127.1.{k}.1", 4.0)  # under half the limit: not heavy
    query(admission, clock, "127.0.100.1", 0.5)
    order = served_after(admission, "127.2.0.1", ["127.1.4.1", "127.0.101.1"])
    assert order == ["127.0.101.1", "127.1.4.1"]


def test_a_network_of_many_quick_clients_goes_before_a_network_that_sent_runaways() -> None:
    """Issue 36 M4: eight legitimate clients of one /16 add up more worker time than an attacker's /16 whose
    runaways hold one worker; by worker time alone each new /24 of the attacker went first. Runaway time
    ranks first: the campus's client goes before the attacker's new /24."""
    clock = Clock()
    admission = Admission(1, wait=60, limit=10, clock=clock)
    for k in range(8):
        for _ in range(4):
            query(admission, clock, f"127.0.{100 + k}.1", 0.5)  # 16 quick worker seconds in all
    query(admission, clock, "127.1.1.1", 10.0)  # a runaway (past half the limit)
    order = served_after(admission, "127.9.0.1", ["127.1.2.1", "127.0.100.1"])
    assert order == ["127.0.100.1", "127.1.2.1"]


def test_a_fresh_network_waits_behind_new_prefixes_of_known_networks_while_new_prefixes_send_runaways() -> None:
    """Issue 36 M4: attackers sending each runaway from another /16 (none has used a worker yet). Runaways
    from new prefixes count against every network with no known client, so a new /16 of the attacker waits
    behind a new client of a network whose clients are known, and a known client keeps its place."""
    clock = Clock()
    admission = Admission(1, wait=60, limit=10, clock=clock)
    query(admission, clock, "127.0.100.1", 0.5)  # a known client of 127.0/16
    query(admission, clock, "127.1.1.1", 10.0)  # a runaway from a new prefix of 127.1/16
    order = served_after(admission, "127.9.0.1", ["127.2.1.1", "127.0.101.1", "127.3.1.1", "127.0.100.1"])
    assert order[:2] == ["127.0.101.1", "127.0.100.1"] and set(order[2:]) == {"127.2.1.1", "127.3.1.1"}


@pytest.mark.parametrize("bounded", [False, True])
def test_a_query_that_cannot_run_away_goes_before_new_prefixes_and_makes_its_client_known(bounded: bool) -> None:
    """Issue 36 M4, decision 0052: a server started under attack knows no client, and new prefixes have sent
    runaways; a new legitimate client ties with the attacker's fresh /16s and, its network having used more
    worker time, went last. A named query the query index answers cannot run away: it goes first, runs on
    the workers that hold the graph (not suspect), and, quick, makes its client known."""
    clock = Clock()
    admission = Admission(2, wait=60, limit=10, clock=clock)
    query(admission, clock, "127.0.101.1", 0.5)  # the campus's /16 has used a worker (that client then sent a runaway)
    admission.penalize("127.0.101.1")
    query(admission, clock, "127.1.1.1", 10.0)  # a runaway from a new prefix
    held = [admission.slot(a) for a in ("127.9.0.1", "127.8.0.1")]
    for hold in held:
        hold.__enter__()
    order: list[str] = []
    threads = waiting(admission, ["127.2.1.1", "127.0.100.1"], order, ("127.0.100.1",) if bounded else ())
    clock.now += 10  # the two held were runaways too
    held[0].__exit__(None, None, None)
    admission.wait_for(lambda: len(order) >= 1)
    assert order[0] == ("127.0.100.1" if bounded else "127.2.1.1")
    held[1].__exit__(None, None, None)
    for thread in threads:
        thread.join(10)
    with admission.slot("127.0.100.2") as risky:  # the same /24: known now (its query was quick), off the store workers
        assert not risky


def test_a_request_is_told_busy_after_the_queue_wait() -> None:
    clock = Clock()
    admission = Admission(1, wait=5, limit=10, clock=clock)
    assert enter(admission, "10.0.1.1")
    got: list[BaseException | None] = []
    thread = threading.Thread(target=lambda: got.append(catch(lambda: admission.slot("10.0.2.1").__enter__())))
    thread.start()
    admission.wait_for(lambda: admission.waiting == 1)
    clock.now += 4.9
    admission.wake()
    assert admission.wait_for(lambda: admission.waiting == 0, timeout=0.2) is False  # still waiting
    clock.now += 0.2
    admission.wake()
    thread.join(10)
    refused = got[0]
    assert isinstance(refused, Busy) and refused.status == 503 and "waited 5 s" in str(refused)


def catch(call: Callable[[], object]) -> BaseException | None:
    """The exception `call` raises, or None."""
    try:
        call()
    except BaseException as exc:
        return exc
    return None


def test_a_client_may_have_only_so_many_requests_waiting() -> None:
    admission = Admission(1, wait=60, limit=10, per_client=2)
    assert enter(admission, "10.0.1.1")
    threads = waiting(admission, ["10.0.2.1", "10.0.2.2"], [])
    with pytest.raises(Busy) as refused:
        with admission.slot("10.0.2.3"):  # the same prefix: the third waiting request
            pass
    assert refused.value.status == 429
    HELD.pop().__exit__(None, None, None)  # the slot is given back: both waiting requests run
    for thread in threads:
        thread.join(10)


def test_buffered_response_bytes_are_capped_in_all_and_per_client() -> None:
    """Issue 30 L1: what the server holds for clients still reading their answers is bounded."""
    buffers = Buffers(total=100, per_client=60)
    assert buffers.take("10.0.1.1", 40) is None
    assert buffers.take("10.0.1.2", 20) is None  # the same prefix: 60 held
    refused = buffers.take("10.0.1.3", 1)
    assert refused is not None and refused[0] == 429
    assert buffers.take("10.0.2.1", 40) is None  # 100 in all
    refused = buffers.take("10.0.3.1", 1)
    assert refused is not None and refused[0] == 503
    buffers.give("10.0.1.1", 40)
    assert buffers.take("10.0.3.1", 30) is None
    assert buffers.held == 90
