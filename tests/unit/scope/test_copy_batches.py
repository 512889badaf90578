"""A pass over a CSV writes a bounded share of its copies; the rest come with the next pass."""

from __future__ import annotations

from olm.controllers.scope import csvs as scope
from olm.scope.copies import CopyPlan
from olm.scope.decide import ScopePlan
from olm.scope.rbac import ScopeRbacPlan


def plan_with(writes: int) -> ScopePlan:
    return ScopePlan(CopyPlan(writes=[object()] * writes), ScopeRbacPlan())  # type: ignore[list-item]


def test_a_pass_writes_at_most_its_share_of_copies() -> None:
    many = plan_with(scope.COPY_WRITES_PER_PASS * 3 + 1)
    assert scope._bounded(many) is True
    assert len(many.copies.writes) == scope.COPY_WRITES_PER_PASS
    few = plan_with(scope.COPY_WRITES_PER_PASS)
    assert scope._bounded(few) is False
    assert len(few.copies.writes) == scope.COPY_WRITES_PER_PASS
