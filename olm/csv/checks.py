"""The checks the CSV phase machine makes on its `World` besides the requirements: who owns
the Deployments and APIServices this CSV would install, whether the owned APIServices are
installed as rendered, and whether the Subscription's `spec.config` can be used.

Invariants: pure; each check returns None when all is well, else one sentence naming the
object and the fix.
"""

from __future__ import annotations

from olm.api.views import Strategy
from olm.csv.plan import World
from olm.csv.replacement import deployment_owner_problem
from olm.install.apiservices import adoption_problem, resource_issue
from olm.install.certs import ServingMaterial
from olm.install.overrides import config_problem


def deployment_conflict(world: World, strategy: Strategy) -> str | None:
    return deployment_owner_problem(
        world.csv, world.csvs, [d.name for d in strategy.deployments], world.deployments
    )


def apiservice_conflict(world: World) -> str | None:
    if world.webhooks is None:
        return None
    return adoption_problem(world.csv, world.webhooks.apiservices, world.csvs)


def apiservice_issue(world: World, materials: dict[str, ServingMaterial]) -> str | None:
    if world.webhooks is None:
        return None
    return resource_issue(world.csv, world.webhooks.apiservices, materials)


def subscription_config_problem(world: World) -> str | None:
    problem = config_problem(world.subscription_config)
    if problem is None:
        return None
    return (
        f"Subscription {world.subscription}: {problem}. Fix spec.config in "
        f"Subscription {world.subscription}."
    )
