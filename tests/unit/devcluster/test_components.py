"""Command lines, fake nodes and kubeconfig of the local control plane (pure)."""

from __future__ import annotations

from pathlib import Path

from olm.devcluster.components import (
    FAKE_NODE_ANNOTATION,
    START_ORDER,
    Layout,
    Plan,
    Ports,
    fake_node,
    kubeconfig,
)

PORTS = Ports(
    etcd_client=2001, etcd_peer=2002, apiserver=2003, controller_manager=2004, scheduler=2005
)
PLAN = Plan(Layout(Path("/state"), Path("/cache/bin"), Path("/cache/stages.yaml")), PORTS)


def test_every_component_runs_from_the_cache_and_listens_on_loopback_only() -> None:
    for name in START_ORDER:
        argv = PLAN.argv(name)
        if name == "pod-runner":
            assert argv[1:3] == ["-m", "olm.devcluster.podrunner"]
        else:
            assert argv[0] == f"/cache/bin/{name}"
        assert not any(
            flag.endswith(("=0.0.0.0", "//0.0.0.0")) or ":0.0.0.0" in flag for flag in argv
        )
        for flag in argv:
            if flag.startswith(("--bind-address=", "--advertise-address=")):
                assert flag.endswith("127.0.0.1")


def test_each_component_gets_its_own_port() -> None:
    assert "--secure-port=2003" in PLAN.argv("kube-apiserver")
    assert "--secure-port=2004" in PLAN.argv("kube-controller-manager")
    assert "--secure-port=2005" in PLAN.argv("kube-scheduler")
    assert "--listen-client-urls=http://127.0.0.1:2001" in PLAN.argv("etcd")
    assert "--listen-peer-urls=http://127.0.0.1:2002" in PLAN.argv("etcd")
    assert sorted(p for ports in PORTS.by_component().values() for p in ports) == [
        2001,
        2002,
        2003,
        2004,
        2005,
    ]


def test_extra_args_are_appended() -> None:
    plan = Plan(PLAN.layout, PORTS, {"etcd": ["--foo"]})
    assert plan.argv("etcd")[-1] == "--foo"
    assert "--foo" not in plan.argv("kube-apiserver")


def test_fake_nodes_are_kwok_managed_and_untainted() -> None:
    node = fake_node("n1")
    assert node["metadata"]["annotations"][FAKE_NODE_ANNOTATION] == "fake"  # type: ignore[index]
    assert "taints" not in node["spec"]  # type: ignore[operator]
    assert (
        PLAN.argv("kwok").count(
            f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake"
        )
        == 1
    )


def test_kubeconfig_points_at_the_apiserver_with_client_certs() -> None:
    config = kubeconfig(
        "https://127.0.0.1:2003", Path("/p/ca.crt"), Path("/p/a.crt"), Path("/p/a.key")
    )
    assert config["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:2003"  # type: ignore[index]
    assert config["users"][0]["user"]["client-key"] == "/p/a.key"  # type: ignore[index]
    assert config["current-context"] == "olm-py-dev"
