"""The scope controllers over the in-memory gateway: copies, lifted and copied RBAC, per-API
and per-group ClusterRoles, namespace labels and the OLMConfig toggle are written once, follow
the group and the namespaces, and a second pass over the written state writes nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.controllers.queue import WorkQueue
from olm.controllers.scope import (
    OlmConfigController,
    ScopeController,
    ScopeGroupController,
    ScopeNamespaceController,
    ScopeState,
    trim,
)
from olm.controllers.store import Store, StoreKind
from olm.controllers.wake.scope import resync_scope_keys, scope_keys
from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway, Write
from olm.scope.copies import status_edited

COPIED_CSV = StoreKind.COPIED_CSV
OPS = "operators"
NAME = "wol.v1"
CSV_API = "operators.coreos.com/v1alpha1"
OG_API = "operators.coreos.com/v1"
RBAC = "rbac.authorization.k8s.io/v1"
CRD = "wolconfigs.wol.example.org"
ROLE = "wol.v1-wol-abc"
STORE_KINDS = {
    "Namespace": "namespace",
    "OperatorGroup": "operatorgroup",
    "Role": "role",
    "RoleBinding": "rolebinding",
    "ClusterRole": "clusterrole",
    "ClusterRoleBinding": "clusterrolebinding",
    "CustomResourceDefinition": "crd",
    "OLMConfig": "olmconfig",
}
RULES = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]


def store_kind(obj: dict[str, Any]) -> str | None:
    if obj["kind"] == "ClusterServiceVersion":
        copied = "olm.copiedFrom" in (obj["metadata"].get("labels") or {})
        return COPIED_CSV if copied else "csv"
    return STORE_KINDS.get(obj["kind"])


def sync(store: Store, fake: FakeGateway) -> None:
    """What the watch would bring: the store holds exactly what the fake holds now."""
    wanted: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for obj in fake.objects.values():
        kind = store_kind(obj)
        if kind is not None:
            meta = obj["metadata"]
            wanted.setdefault(kind, {})[(meta.get("namespace") or "", meta["name"])] = obj
    for kind in {*STORE_KINDS.values(), "csv", COPIED_CSV}:
        store.retain(kind, store.snapshot(kind), set(wanted.get(kind, {})))
        for obj in wanted.get(kind, {}).values():
            store.upsert(kind, trim(kind, copy.deepcopy(obj)))


def namespace(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": labels},
        "status": {"phase": "Active"},
    }


def group(targets: list[str], name: str = "og", ns: str = OPS) -> dict[str, Any]:
    spec = {"targetNamespaces": targets} if targets != [""] else {}
    return {
        "apiVersion": OG_API,
        "kind": "OperatorGroup",
        "metadata": {"name": name, "namespace": ns, "uid": f"{name}-uid"},
        "spec": spec,
        "status": {"namespaces": targets, "lastUpdated": "2026-01-01T00:00:00Z"},
    }


def original(
    targets: list[str], phase: str = "Succeeded", group_name: str = "og"
) -> dict[str, Any]:
    return {
        "apiVersion": CSV_API,
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": NAME,
            "namespace": OPS,
            "uid": "csv-uid",
            "labels": {"operators.coreos.com/wol.operators": ""},
            "annotations": {
                "olm.operatorGroup": group_name,
                "olm.operatorNamespace": OPS,
                "olm.targetNamespaces": ",".join(sorted(targets)),
                "alm-examples": "[]",
            },
        },
        "spec": {
            "displayName": "WoL",
            "version": "1.0.0",
            "customresourcedefinitions": {
                "owned": [{"name": CRD, "version": "v1", "kind": "WolConfig"}]
            },
            "install": {
                "strategy": "deployment",
                "spec": {
                    "permissions": [{"serviceAccountName": "wol", "rules": RULES}],
                    "deployments": [],
                },
            },
        },
        "status": {"phase": phase, "reason": "InstallSucceeded", "message": "done"},
    }


def owned_rbac() -> list[dict[str, Any]]:
    labels = {
        "olm.owner": NAME,
        "olm.owner.namespace": OPS,
        "olm.owner.kind": "ClusterServiceVersion",
    }
    owner = [
        {
            "apiVersion": CSV_API,
            "kind": "ClusterServiceVersion",
            "name": NAME,
            "uid": "csv-uid",
            "controller": False,
            "blockOwnerDeletion": False,
        }
    ]
    meta = {"name": ROLE, "namespace": OPS, "labels": labels, "ownerReferences": owner}
    return [
        {"apiVersion": RBAC, "kind": "Role", "metadata": meta, "rules": RULES},
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE},
            "subjects": [{"kind": "ServiceAccount", "name": "wol", "namespace": OPS}],
        },
    ]


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {"group": "wol.example.org", "names": {"plural": "wolconfigs"}},
    }


class World:
    def __init__(self, targets: list[str], namespaces: list[str], **csv: Any) -> None:
        self.fake = FakeGateway()
        for name in [OPS, *namespaces]:
            self.fake.put(namespace(name))
        for obj in [group(targets), original(targets, **csv), *owned_rbac(), crd()]:
            self.fake.put(obj)
        self.store, self.queue = Store(), WorkQueue()
        sync(self.store, self.fake)
        self.state = ScopeState(self.store, self.fake, self.queue)
        self.scope = ScopeController(self.state)
        self.namespaces = ScopeNamespaceController(self.state)
        self.groups = ScopeGroupController(self.state)
        self.olm_config = OlmConfigController(self.state)

    def sync(self) -> None:
        sync(self.store, self.fake)

    def writes(self) -> list[Write]:
        return self.fake.take_writes()

    def copies(self) -> dict[str, dict[str, Any]]:
        return {
            k[2]: o
            for k, o in self.fake.objects.items()
            if k[1] == "ClusterServiceVersion" and k[2] != OPS
        }

    def get(self, api: str, kind: str, ns: str | None, name: str) -> dict[str, Any]:
        return self.fake.get(api, kind, ns, name)

    def put(self, obj: dict[str, Any]) -> None:
        self.fake.put(obj)
        self.sync()


def verbs(writes: list[Write]) -> list[tuple[str, str, str, str]]:
    return [(w.verb, w.kind, w.namespace, w.name) for w in writes]


# ----- AllNamespaces ------------------------------------------------------------------------


def test_an_all_namespaces_csv_is_copied_lifted_and_given_api_roles_once() -> None:
    world = World([""], ["a", "b"])
    assert world.scope.reconcile(OPS, NAME) is None
    writes = verbs(world.writes())
    for ns in ("a", "b"):
        assert [w for w in writes if w[1] == "ClusterServiceVersion" and w[2] == ns] == [
            ("apply", "ClusterServiceVersion", ns, NAME),
            ("patch_status", "ClusterServiceVersion", ns, NAME),
        ], "a copy is created with both hashes, then given its status: two requests"
    copy_a = world.copies()["a"]
    assert copy_a["metadata"]["labels"] == {"olm.copiedFrom": OPS}
    assert copy_a["metadata"]["annotations"]["olm.operatorNamespace"] == OPS
    assert "olm.targetNamespaces" not in copy_a["metadata"]["annotations"]
    assert copy_a["status"]["phase"] == "Succeeded"
    assert copy_a["status"]["reason"] == "Copied"
    assert copy_a["spec"] == world.get(CSV_API, "ClusterServiceVersion", OPS, NAME)["spec"]

    lifted = world.get(RBAC, "ClusterRole", None, ROLE)
    assert lifted["rules"][:1] == RULES
    assert lifted["rules"][-1]["resources"] == ["namespaces"]
    binding = world.get(RBAC, "ClusterRoleBinding", None, ROLE)
    assert binding["roleRef"]["kind"] == "ClusterRole"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "wol", "namespace": OPS}]
    for suffix in ("admin", "edit", "view", "crdview"):
        role = world.get(RBAC, "ClusterRole", None, f"{CRD}-v1-{suffix}")
        level = "view" if suffix == "crdview" else suffix
        assert role["metadata"]["labels"][f"rbac.authorization.k8s.io/aggregate-to-{level}"]

    # The watch brings it all back: a second pass writes nothing.
    world.sync()
    world.scope.reconcile(OPS, NAME)
    assert world.writes() == []
    # Nor does a pass over the namespaces.
    for ns in (OPS, "a", "b"):
        world.namespaces.reconcile("", ns)
    assert world.writes() == []


def test_many_copies_are_written_at_once_and_all_land() -> None:
    spaces = [f"t{i:02d}" for i in range(30)]
    world = World([""], spaces)
    assert world.scope.reconcile(OPS, NAME) is None
    writes = verbs(world.writes())
    for ns in spaces:
        assert [w[0] for w in writes if w[1] == "ClusterServiceVersion" and w[2] == ns] == [
            "apply",
            "patch_status",
        ], "one copy's requests stay in order"
    assert sorted(world.copies()) == spaces
    for ns in spaces:  # every response written through: the cache knows every copy in step
        entry = world.store.get(COPIED_CSV, ns, NAME)
        assert entry is not None and not status_edited(entry)
    world.sync()
    assert world.scope.reconcile(OPS, NAME) is None
    assert world.writes() == []


def test_a_copy_whose_status_write_failed_gets_its_status_on_the_next_pass() -> None:
    world = World([""], ["a"])
    world.fake.fail("patch_status", GatewayError("boom", 500), "ClusterServiceVersion")
    with pytest.raises(GatewayError):
        world.scope.reconcile(OPS, NAME)
    assert "status" not in world.copies()["a"] or not world.copies()["a"]["status"]
    world.writes()
    world.scope.reconcile(OPS, NAME)
    assert verbs(world.writes())[0] == ("patch_status", "ClusterServiceVersion", "a", NAME)
    assert world.copies()["a"]["status"]["reason"] == "Copied"


def test_a_stale_event_of_a_copy_olm_py_just_wrote_wakes_nothing() -> None:
    world = World([""], ["a"])
    world.scope.reconcile(OPS, NAME)
    cached = world.store.get(COPIED_CSV, "a", NAME)
    assert cached is not None
    stale = copy.deepcopy(world.copies()["a"])  # the create's event: no status yet
    stale.pop("status", None)
    stale["metadata"]["resourceVersion"] = str(int(cached["metadata"]["resourceVersion"]) - 1)
    assert scope_keys(COPIED_CSV, stale, world.store, cached) == []


def test_a_new_namespace_gets_its_copy_from_its_own_cheap_reconcile() -> None:
    world = World([""], ["a"])
    world.scope.reconcile(OPS, NAME)
    world.sync()
    world.writes()
    world.put(namespace("late"))
    world.namespaces.reconcile("", "late")
    assert verbs(world.writes()) == [
        ("apply", "ClusterServiceVersion", "late", NAME),
        ("patch_status", "ClusterServiceVersion", "late", NAME),
    ], "only the new namespace's copy; the lifted RBAC already covers it"
    world.sync()
    world.namespaces.reconcile("", "late")
    world.scope.reconcile(OPS, NAME)
    assert world.writes() == []


def test_a_status_change_of_the_original_updates_only_the_copies_status() -> None:
    world = World([""], ["a"])
    world.scope.reconcile(OPS, NAME)
    world.sync()
    world.writes()
    csv = world.get(CSV_API, "ClusterServiceVersion", OPS, NAME)
    csv["status"] = {"phase": "Failed", "reason": "ComponentUnhealthy", "message": "down"}
    world.put(csv)
    before = world.store.get(COPIED_CSV, "a", NAME)
    world.scope.reconcile(OPS, NAME)
    # The copy's status written before its annotation says so is olm-py's own: no wake.
    assert before is not None
    midway = copy.deepcopy(world.copies()["a"])
    midway["metadata"]["annotations"] = before["metadata"]["annotations"]
    assert scope_keys(COPIED_CSV, midway, world.store, before) == []
    assert verbs(world.writes()) == [
        ("patch_status", "ClusterServiceVersion", "a", NAME),
        ("apply", "ClusterServiceVersion", "a", NAME),
    ]
    assert world.copies()["a"]["status"]["phase"] == "Failed"
    assert world.copies()["a"]["status"]["reason"] == "Copied"


def test_a_copy_whose_status_someone_edits_is_put_back_in_step() -> None:
    """OLM's e2e "copied CSV ... is synchronized with the original csv"."""
    world = World([""], ["a"])
    world.scope.reconcile(OPS, NAME)
    world.sync()
    world.writes()
    wanted = copy.deepcopy(world.copies()["a"]["status"])
    edited = copy.deepcopy(world.copies()["a"])
    edited["status"]["lastUpdateTime"] = "1970-01-01T00:00:01Z"
    old = world.store.get(COPIED_CSV, "a", NAME)
    world.put(edited)
    assert scope_keys(COPIED_CSV, edited, world.store, old) == [("scope-namespace", "", "a")]
    world.namespaces.reconcile("", "a")
    assert ("patch_status", "ClusterServiceVersion", "a", NAME) in verbs(world.writes())
    assert world.copies()["a"]["status"] == wanted
    world.sync()
    world.namespaces.reconcile("", "a")
    assert world.writes() == [], "once in step, nothing more"


def test_copies_of_a_deleted_original_go_and_dangling_copies_are_collected() -> None:
    world = World([""], ["a", "b"])
    world.scope.reconcile(OPS, NAME)
    world.sync()
    world.writes()
    world.fake.remove(CSV_API, "ClusterServiceVersion", OPS, NAME)
    world.sync()
    world.namespaces.reconcile("", "a")
    assert verbs(world.writes()) == [("delete", "ClusterServiceVersion", "a", NAME)]
    world.scope.reconcile(OPS, NAME)
    assert verbs(world.writes()) == [("delete", "ClusterServiceVersion", "b", NAME)]
    assert world.copies() == {}


def test_a_namespace_with_a_real_csv_of_that_name_is_skipped_with_a_warning() -> None:
    world = World([""], ["a", "b"])
    mine = original(["b"], group_name="own")
    mine["metadata"].update(namespace="b", uid="other")
    world.put(mine)
    world.scope.reconcile(OPS, NAME)
    writes = world.writes()
    assert not [w for w in writes if w.kind == "ClusterServiceVersion" and w.namespace == "b"]
    events = [e for e in world.fake.events() if e[2] == "CopiedCSVBlocked"]
    assert len(events) == 1 and "also installed in namespace b" in events[0][3]
    world.sync()
    world.scope.reconcile(OPS, NAME)
    assert world.writes() == [], "said once"


# ----- Single/MultiNamespace ----------------------------------------------------------------


def tenant_objects(world: World) -> list[tuple[str, str]]:
    return sorted(
        (k[1], k[2])
        for k, o in world.fake.objects.items()
        if k[1] in ("Role", "RoleBinding") and "olm.copiedFrom" in o["metadata"]["labels"]
    )


def test_the_roles_pass_writes_a_csvs_rbac_and_api_roles_but_no_copies() -> None:
    """("scope-roles", ns, csv), in the install lane: a CSV's lifted RBAC and per-API
    ClusterRoles come with its install, not behind other operators' copies (corpus run: up to
    two minutes late with 8 installs at once; OLM writes them with the install)."""
    from olm.controllers.scope import ScopeRolesController

    world = World([""], ["a", "b"])
    assert ScopeRolesController(world.state).reconcile(OPS, NAME) is None
    writes = verbs(world.writes())
    assert not [w for w in writes if w[1] == "ClusterServiceVersion"], "no copies"
    assert world.get(RBAC, "ClusterRole", None, ROLE)["rules"][:1] == RULES
    for suffix in ("admin", "edit", "view", "crdview"):
        assert world.get(RBAC, "ClusterRole", None, f"{CRD}-v1-{suffix}")
    # The scope pass then writes the copies, and no RBAC again.
    world.sync()
    world.scope.reconcile(OPS, NAME)
    assert {w[1] for w in verbs(world.writes())} == {"ClusterServiceVersion"}
    assert sorted(world.copies()) == ["a", "b"]


def test_a_multi_namespace_group_copies_roles_into_each_target_and_follows_its_changes() -> None:
    world = World([OPS, "t1", "t2"], ["t1", "t2", "t3"])
    world.scope.reconcile(OPS, NAME)
    assert sorted(world.copies()) == ["t1", "t2"]
    assert tenant_objects(world) == [
        ("Role", "t1"),
        ("Role", "t2"),
        ("RoleBinding", "t1"),
        ("RoleBinding", "t2"),
    ]
    role = world.get(RBAC, "Role", "t1", ROLE)
    copy_uid = world.copies()["t1"]["metadata"]["uid"]
    assert [o["uid"] for o in role["metadata"]["ownerReferences"]] == [copy_uid]
    assert role["metadata"]["labels"]["olm.owner.namespace"] == "t1"
    assert role["rules"] == RULES
    assert not [k for k in world.fake.objects if k[1] == "ClusterRoleBinding"], "nothing lifted"
    for ns in ("t1", "t2", "t3", OPS):
        world.namespaces.reconcile("", ns)
    labelled = {
        k[3]
        for k, o in world.fake.objects.items()
        if k[1] == "Namespace" and "olm.operatorgroup.uid/og-uid" in o["metadata"]["labels"]
    }
    assert labelled == {OPS, "t1", "t2"}
    world.sync()
    world.writes()
    world.scope.reconcile(OPS, NAME)
    for ns in ("t1", "t2", "t3", OPS):
        world.namespaces.reconcile("", ns)
    assert world.writes() == []

    # The group now targets t1 and t3: t2 loses its copy and roles, t3 gains them.
    world.put(group([OPS, "t1", "t3"]))
    csv = world.get(CSV_API, "ClusterServiceVersion", OPS, NAME)
    csv["metadata"]["annotations"]["olm.targetNamespaces"] = ",".join(sorted([OPS, "t1", "t3"]))
    world.put(csv)
    world.scope.reconcile(OPS, NAME)
    for ns in ("t2", "t3"):
        world.namespaces.reconcile("", ns)
    assert sorted(world.copies()) == ["t1", "t3"]
    assert tenant_objects(world) == [
        ("Role", "t1"),
        ("Role", "t3"),
        ("RoleBinding", "t1"),
        ("RoleBinding", "t3"),
    ]
    t2 = world.get("v1", "Namespace", None, "t2")
    assert "olm.operatorgroup.uid/og-uid" not in t2["metadata"]["labels"]
    world.sync()
    world.writes()
    world.scope.reconcile(OPS, NAME)
    assert world.writes() == []


def test_a_namespace_created_after_its_group_named_it_gets_copy_and_roles() -> None:
    world = World([OPS, "later"], [])
    world.scope.reconcile(OPS, NAME)
    assert world.copies() == {}
    world.sync()
    world.writes()
    world.put(namespace("later"))
    world.namespaces.reconcile("", "later")
    kinds = [(w.verb, w.kind) for w in world.writes()]
    assert kinds == [
        ("patch", "Namespace"),
        ("apply", "ClusterServiceVersion"),
        ("patch_status", "ClusterServiceVersion"),
        ("apply", "Role"),
        ("apply", "RoleBinding"),
    ]


# ----- per-group roles ----------------------------------------------------------------------


def test_a_group_gets_three_aggregation_roles_that_go_with_it() -> None:
    world = World([""], [])
    world.groups.reconcile(OPS, "og")
    roles = {
        k[3]: o
        for k, o in world.fake.objects.items()
        if k[1] == "ClusterRole" and o["metadata"]["labels"].get("olm.owner.kind")
    }
    assert sorted(n.split("-")[0] for n in roles) == [
        "olm.og.og.admin",
        "olm.og.og.edit",
        "olm.og.og.view",
    ]
    for role in roles.values():
        selectors = role["aggregationRule"]["clusterRoleSelectors"]
        assert len(selectors) == 1 and "rules" not in role
    world.sync()
    world.writes()
    world.groups.reconcile(OPS, "og")
    assert world.writes() == []
    world.fake.remove(OG_API, "OperatorGroup", OPS, "og")
    world.sync()
    world.groups.reconcile(OPS, "og")
    assert sorted(w.name for w in world.writes() if w.verb == "delete") == sorted(roles)


# ----- OLMConfig ------------------------------------------------------------------------------


def olm_config(disabled: bool) -> dict[str, Any]:
    return {
        "apiVersion": OG_API,
        "kind": "OLMConfig",
        "metadata": {"name": "cluster"},
        "spec": {"features": {"disableCopiedCSVs": disabled}},
    }


def test_disabling_copied_csvs_removes_them_and_enabling_brings_them_back() -> None:
    world = World([""], ["a", "b"])
    world.scope.reconcile(OPS, NAME)
    world.sync()
    world.writes()
    world.put(olm_config(True))
    world.scope.reconcile(OPS, NAME)
    assert world.copies() == {}
    warnings = [e for e in world.fake.events() if e[2] == "DisabledCopiedCSVs"]
    assert warnings == [
        (NAME, "Warning", "DisabledCopiedCSVs", f"CSV copying disabled for {OPS}/{NAME}")
    ]
    world.sync()
    world.writes()
    world.olm_config.reconcile("", "cluster")
    condition = world.get(OG_API, "OLMConfig", None, "cluster")["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("True", "CopiedCSVsDisabled")
    world.sync()
    world.writes()
    world.scope.reconcile(OPS, NAME)
    world.olm_config.reconcile("", "cluster")
    world.namespaces.reconcile("", "a")
    assert world.writes() == [], "disabled stays quiet"

    world.put(olm_config(False))
    world.scope.reconcile(OPS, NAME)
    assert sorted(world.copies()) == ["a", "b"]
    assert not [e for e in world.fake.events() if e[2] == "DisabledCopiedCSVs"]
    world.sync()
    world.olm_config.reconcile("", "cluster")
    condition = world.get(OG_API, "OLMConfig", None, "cluster")["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("False", "CopiedCSVsEnabled")
    assert condition["message"] == "Copied CSVs are enabled and present across the cluster"


# ----- wake-ups -------------------------------------------------------------------------------


@pytest.fixture
def woken_store() -> Store:
    world = World([""], ["a"])
    world.scope.reconcile(OPS, NAME)
    world.sync()
    return world.store


def test_a_namespace_event_wakes_only_that_namespace_and_only_when_it_matters(
    woken_store: Store,
) -> None:
    store = woken_store
    new = namespace("n")
    assert scope_keys("namespace", new, store) == [("scope-namespace", "", "n")]
    status_only = copy.deepcopy(new)
    status_only["metadata"]["annotations"] = {"x": "y"}
    assert scope_keys("namespace", status_only, store, new) == []
    relabelled = namespace("n", team="x")
    assert scope_keys("namespace", relabelled, store, new) == [("scope-namespace", "", "n")]
    assert scope_keys("namespace", new, store, new, deleted=True) == []


def test_a_deleted_copy_is_put_back_unless_its_namespace_is_going(woken_store: Store) -> None:
    store = woken_store
    copied = store.get(COPIED_CSV, "a", NAME)
    assert copied is not None and "spec" not in copied, "copies are cached as metadata only"
    assert scope_keys(COPIED_CSV, copied, store, copied, deleted=True) == [
        ("scope-namespace", "", "a")
    ]
    assert scope_keys(COPIED_CSV, copied, store, None) == [], "our own writes wake nothing"
    assert scope_keys(COPIED_CSV, copied, store, copied) == [], "nor an event of the same"
    assert "status" not in copied and copied["statusDigest"], "its status only as a digest"
    # Someone else changed its olm.operatorNamespace (OLM's e2e "cleanup csvs with bad
    # namespace annotation"): its namespace's copies are looked at again at once.
    edited = copy.deepcopy(copied)
    edited["metadata"].setdefault("annotations", {})["olm.operatorNamespace"] = "elsewhere"
    assert scope_keys(COPIED_CSV, edited, store, copied) == [("scope-namespace", "", "a")]
    going = namespace("a")
    going["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    store.upsert("namespace", going)
    assert scope_keys(COPIED_CSV, copied, store, copied, deleted=True) == []


def test_a_csv_status_change_wakes_its_scope_not_its_group_roles(woken_store: Store) -> None:
    store = woken_store
    csv = store.get("csv", OPS, NAME)
    assert csv is not None
    changed = copy.deepcopy(csv)
    changed["status"] = {"phase": "Failed"}
    # A phase change also asks for its RBAC at once, in the install lane (scope-roles).
    assert scope_keys("csv", changed, store, csv) == [
        ("scope", OPS, NAME),
        ("scope-roles", OPS, NAME),
    ]
    written = copy.deepcopy(changed)
    written["status"]["message"] = "another status write, the same phase"
    assert scope_keys("csv", written, store, changed) == [("scope", OPS, NAME)]
    assert ("scope-group", OPS, "og") in scope_keys("csv", changed, store, None)


def test_a_group_target_change_relabels_the_namespaces_it_touches(woken_store: Store) -> None:
    before, after = group([OPS, "x", "y"]), group([OPS, "y", "z"])
    keys = scope_keys("operatorgroup", after, woken_store, before)
    assert {k for k in keys if k[0] == "scope-namespace"} == {
        ("scope-namespace", "", "x"),
        ("scope-namespace", "", "z"),
    }
    assert ("scope", OPS, NAME) in keys and ("scope-group", OPS, "og") in keys


def test_resync_wakes_each_csv_group_and_namespace(woken_store: Store) -> None:
    keys = resync_scope_keys(woken_store)
    assert ("scope", OPS, NAME) in keys and ("scope-group", OPS, "og") in keys
    assert ("scope-namespace", "", "a") in keys
    assert not [k for k in keys if k[0] == "scope" and k[1] == "a"], "copies are not CSVs"
    orphan = {
        "metadata": {
            "name": "olm.og.gone.admin-x",
            "labels": {
                "olm.owner": "gone",
                "olm.owner.namespace": "old",
                "olm.owner.kind": "OperatorGroup",
            },
        }
    }
    woken_store.upsert("clusterrole", orphan)
    assert ("scope-group", "old", "gone") in resync_scope_keys(woken_store), (
        "the roles of a group deleted while olm-py was down are looked at"
    )


# ----- cost -----------------------------------------------------------------------------------


class CountingStore(Store):
    """A store that records every cluster-wide read (kind, namespace=None)."""

    def __init__(self) -> None:
        super().__init__()
        self.wide_reads: list[str] = []

    def items(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        if namespace is None:
            self.wide_reads.append(kind)
        return super().items(kind, namespace)


def test_a_namespace_event_reads_neither_every_namespace_nor_every_copy() -> None:
    world = World([""], [f"n{i}" for i in range(50)])
    world.scope.reconcile(OPS, NAME)
    store = CountingStore()
    sync(store, world.fake)
    state = ScopeState(store, world.fake, world.queue)
    world.put(namespace("late"))
    sync(store, world.fake)
    world.writes()
    store.wide_reads.clear()
    ScopeNamespaceController(state).reconcile("", "late")
    assert len(world.writes()) == 2, "the new namespace's copy: create (both hashes), status"
    assert store.wide_reads == ["operatorgroup"], "only the groups are read cluster-wide"
    store.wide_reads.clear()
    ScopeNamespaceController(state).reconcile("", "n7")
    assert world.writes() == [] and store.wide_reads == ["operatorgroup"]


def test_the_store_keeps_no_managed_fields() -> None:
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "a", "labels": {"x": "y"}, "managedFields": [{"manager": "kubectl"}]},
        "status": {"phase": "Active"},
    }
    kept = trim("namespace", namespace)
    assert "managedFields" not in kept["metadata"]
    assert kept["metadata"]["labels"] == {"x": "y"} and kept["status"] == namespace["status"]
    assert "managedFields" in namespace["metadata"], "the input is not modified"
