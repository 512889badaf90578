"""The work queue's lanes: installs before bulk work, bulk work never starved, a worker left
for installs, FIFO within a lane."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from olm.controllers.lanes import LanePolicy, Lanes
from olm.controllers.queue import LANE_OF_KIND, Lane, WorkKind, WorkQueue, lane_of


def test_every_work_kind_has_a_lane() -> None:
    assert set(LANE_OF_KIND) == set(WorkKind)


def test_installs_are_urgent_and_fan_out_is_bulk() -> None:
    assert lane_of((WorkKind.CSV, "ns", "a")) is Lane.INSTALL
    assert lane_of((WorkKind.INSTALL_PLAN, "ns", "p")) is Lane.INSTALL
    assert lane_of((WorkKind.SCOPE, "ns", "a")) is Lane.BULK
    assert lane_of(("scope-namespace", "", "ns")) is Lane.BULK
    assert lane_of("anything else") is Lane.INSTALL


def test_a_csv_added_behind_many_copy_passes_comes_out_first() -> None:
    queue = WorkQueue()
    for i in range(5):
        queue.add((WorkKind.SCOPE, "operators", f"global-{i}"))
    queue.add((WorkKind.CSV, "operators", "global-0"))
    assert queue.get(timeout=0) == (WorkKind.CSV, "operators", "global-0")
    assert queue.get(timeout=0) == (WorkKind.SCOPE, "operators", "global-0")


def test_operator_objects_labels_and_group_roles_do_not_wait_behind_copies() -> None:
    """Corpus run, 8 installs at once: an Operator object, its components' labels and the
    group's aggregated ClusterRoles came up to two minutes after the install, behind copy
    passes; OLM writes them with it."""
    queue = WorkQueue(bulk_limit=1)
    for i in range(50):
        queue.add((WorkKind.SCOPE_NAMESPACE, "", f"ns-{i}"))
    queue.add((WorkKind.OPERATOR, "", "kubevirt-wol.pc-kubevirt-wol"))
    queue.add((WorkKind.ADOPTION, "", "pc-kubevirt-wol"))
    queue.add((WorkKind.SCOPE_GROUP, "pc-kubevirt-wol", "og"))
    taken = [queue.get(timeout=0) for _ in range(3)]
    assert taken == [
        (WorkKind.OPERATOR, "", "kubevirt-wol.pc-kubevirt-wol"),
        (WorkKind.ADOPTION, "", "pc-kubevirt-wol"),
        (WorkKind.SCOPE_GROUP, "pc-kubevirt-wol", "og"),
    ]


def test_bulk_limit_leaves_a_worker_for_installs() -> None:
    queue = WorkQueue(bulk_limit=2)
    for i in range(4):
        queue.add((WorkKind.SCOPE, "operators", f"g{i}"))
    taken = [queue.get(timeout=0), queue.get(timeout=0)]
    assert queue.get(timeout=0) is None, "two bulk keys in flight: the third waits"
    queue.add((WorkKind.CSV, "operators", "g0"))
    assert queue.get(timeout=0) == (WorkKind.CSV, "operators", "g0")
    queue.done(taken[0])
    assert queue.get(timeout=0) == (WorkKind.SCOPE, "operators", "g2")


def test_a_key_re_added_while_processing_keeps_its_lane_accounting() -> None:
    queue = WorkQueue(bulk_limit=1)
    key = (WorkKind.SCOPE, "operators", "g")
    queue.add(key)
    assert queue.get(timeout=0) == key
    queue.add(key)  # dirty: comes back after done
    queue.done(key)
    assert queue.get(timeout=0) == key, "the limit counts keys in flight, not keys ever taken"


def test_bulk_work_is_not_starved_by_a_stream_of_installs() -> None:
    queue = WorkQueue(burst=3)
    queue.add((WorkKind.SCOPE, "operators", "g"))
    taken = []
    for i in range(5):
        queue.add((WorkKind.CSV, "ns", f"c{i}"))
    for _ in range(5):
        key = queue.get(timeout=0)
        taken.append(key)
        assert key is not None
        queue.done(key)
    assert (WorkKind.SCOPE, "operators", "g") in taken[:4]


# ----- the pure lanes, by property ---------------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.integers(0, 2)),
        st.tuples(st.just("pop"), st.just(0)),
        st.tuples(st.just("finish"), st.integers(0, 2)),
    ),
    max_size=80,
)


@given(
    ops,
    st.lists(st.one_of(st.none(), st.integers(1, 3)), min_size=3, max_size=3),
    st.integers(1, 5),
)
def test_lanes_keep_their_invariants(
    steps: list[tuple[str, int]], limits: list[int | None], burst: int
) -> None:
    lanes = Lanes(LanePolicy(limits=tuple(limits), burst=burst))
    pushed: list[list[int]] = [[], [], []]
    popped: list[list[int]] = [[], [], []]
    skipped = [0, 0, 0]  # pops while a lane could have been taken but was not
    counter = 0
    for op, lane in steps:
        if op == "push":
            lanes.push(lane, counter)
            pushed[lane].append(counter)
            counter += 1
        elif op == "finish":
            if lanes.in_flight(lane):
                lanes.finished(lane)
        else:
            takeable = [
                lane_
                for lane_ in range(3)
                if lanes.waiting(lane_)
                and (limits[lane_] is None or lanes.in_flight(lane_) < limits[lane_])
            ]
            picked = lanes.pop()
            if not takeable:
                assert picked is None
                continue
            assert picked is not None
            chosen, key = picked
            assert chosen in takeable
            assert limits[chosen] is None or lanes.in_flight(chosen) <= limits[chosen]
            popped[chosen].append(int(str(key)))
            for lane_ in takeable:
                skipped[lane_] = 0 if lane_ == chosen else skipped[lane_] + 1
                assert skipped[lane_] <= burst + 1, "a takeable lane waited too long"
    for lane in range(3):
        assert popped[lane] == pushed[lane][: len(popped[lane])], "FIFO within a lane"
    assert len(lanes) == sum(len(pushed[i]) - len(popped[i]) for i in range(3))
