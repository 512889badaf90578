"""OLM v0's `Operator` objects and component labels, as pure decisions (no kopf, kubernetes,
olm.kube or controllers):

- `names`: the Operator name of a Subscription, its `operators.coreos.com/<name>` label key
  (cut as OLM cuts it), and whether the API server would take them;
- `objects`: what OLM's caches let its controllers see, and ownership by a CSV;
- `adoption`: which components get (or lose) the label (OLM's adoption controller);
- `status`: whether to create an Operator and its `status.components` (OLM's Operator
  controller).

docs/operators.md says what OLM v0.38 does, with its sources, and how olm-py wires this.
"""
