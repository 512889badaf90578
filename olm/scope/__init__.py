"""Global operators, as OLM v0 runs them: what an OperatorGroup's scope means beyond the
operator's own namespace. Pure decisions only (no kopf, kubernetes, olm.kube or controllers):

- `namespaces`: OLM's namespace-set semantics and the `olm.operatorgroup.uid/<uid>` labels;
- `copies`: the copied CSV in each target namespace, and which copies to write or delete;
- `olmconfig`: the OLMConfig `disableCopiedCSVs` toggle and its status condition;
- `rbac`: the CSV's namespaced permissions granted across the group's scope (Roles lifted to
  ClusterRoles for AllNamespaces, copied into every target namespace otherwise);
- `apiroles`: per-API ClusterRoles and the OperatorGroup aggregation ClusterRoles;
- `conflicts`: TooManyOperatorGroups and the provided-API intersection between groups.

docs/global-operators.md explains OLM's behaviour and the controller wiring.
"""
