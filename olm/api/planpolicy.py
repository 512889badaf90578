"""A plan per Subscription, beyond OLM: olm-py's `olm-py.io/plan-per-subscription` opt-in.

PLAN_PER_SUBSCRIPTION_ANNOTATION ("true") on a namespace or on one of its OperatorGroups makes
olm-py give Subscriptions moved at once a plan each where their dependency closures do not
overlap (olm.subscription.separate). A joint plan then carries SHARED_PLAN_ANNOTATION, saying
which Subscriptions share it and why; their InstallPlanPending condition says the same. OLM
ignores both annotations (one joint plan per resolution).
"""

from __future__ import annotations

PLAN_PER_SUBSCRIPTION_ANNOTATION = "olm-py.io/plan-per-subscription"
SHARED_PLAN_ANNOTATION = "olm-py.io/shared-plan"
