"""Why a CSV's Deployment is not ready yet, in OLM v0.38's words (install/deployment.go and its
status viewer): corpus ncn-operator's CSV said "installing: waiting for deployment X to become
ready: deployment "X" not available: ..." under OLM and a shorter sentence under olm-py."""

from __future__ import annotations

from typing import Any

import pytest

from olm.install.deployments import rollout_status

NAME = "socmmd-controller-manager"


def deployment(generation: int = 1, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": NAME, "generation": generation}, "status": status}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            deployment(2, observedGeneration=1),
            (f'waiting for spec update of deployment "{NAME}" to be observed...', False),
        ),
        (
            deployment(
                observedGeneration=1,
                conditions=[{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}],
            ),
            (f'deployment "{NAME}" exceeded its progress deadline', True),
        ),
        (
            deployment(observedGeneration=1, replicas=3, updatedReplicas=1),
            (f'deployment "{NAME}" waiting for 2 outdated replica(s) to be terminated', False),
        ),
        (
            deployment(
                observedGeneration=1,
                conditions=[
                    {
                        "type": "Available",
                        "status": "False",
                        "message": "Deployment does not have minimum availability.",
                    }
                ],
            ),
            (
                f'deployment "{NAME}" not available: Deployment does not have minimum availability.',
                False,
            ),
        ),
        (
            deployment(observedGeneration=1),
            (f'deployment "{NAME}" not available: missing condition "Available"', False),
        ),
        (
            deployment(observedGeneration=1, conditions=[{"type": "Available", "status": "True"}]),
            ("", False),
        ),
    ],
)
def test_rollout_status_says_what_olm_says(
    given: dict[str, Any], expected: tuple[str, bool]
) -> None:
    assert rollout_status(NAME, given) == expected
