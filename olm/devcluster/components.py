"""The control plane's components: their command lines, start order and health checks.

Pure: given ports and paths, return argv lists. Invariants: everything listens on 127.0.0.1
only; the order is etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, and
the pod runner (each depends on the ones before it); stopping goes in reverse.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from olm.devcluster.network import ClusterNetwork
from olm.devcluster.pki import FRONT_PROXY_NAME
from olm.devcluster.ports import LOOPBACK

ETCD = "etcd"
APISERVER = "kube-apiserver"
CONTROLLER_MANAGER = "kube-controller-manager"
SCHEDULER = "kube-scheduler"
KWOK = "kwok"
POD_RUNNER = "pod-runner"

START_ORDER: tuple[str, ...] = (ETCD, APISERVER, CONTROLLER_MANAGER, SCHEDULER, KWOK, POD_RUNNER)

FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"
SERVICE_CIDR = "10.0.0.0/24"
POD_CIDR = "10.244.0.0/16"
NODE_IP = "10.0.0.1"


@dataclass(frozen=True)
class Ports:
    """The TCP ports one cluster listens on, all on 127.0.0.1."""

    etcd_client: int
    etcd_peer: int
    apiserver: int
    controller_manager: int
    scheduler: int

    def by_component(self) -> dict[str, list[int]]:
        return {
            ETCD: [self.etcd_client, self.etcd_peer],
            APISERVER: [self.apiserver],
            CONTROLLER_MANAGER: [self.controller_manager],
            SCHEDULER: [self.scheduler],
            KWOK: [],
            POD_RUNNER: [],
        }


@dataclass(frozen=True)
class Layout:
    """Where one cluster keeps its files."""

    state_dir: Path
    bin_dir: Path
    stages: Path

    @property
    def pki_dir(self) -> Path:
        return self.state_dir / "pki"

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def etcd_data(self) -> Path:
        return self.state_dir / "etcd-data"

    @property
    def kubeconfig(self) -> Path:
        return self.state_dir / "kubeconfig"

    @property
    def record(self) -> Path:
        return self.state_dir / "cluster.json"

    def log(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"

    def binary(self, name: str) -> Path:
        return self.bin_dir / name


@dataclass(frozen=True)
class Plan:
    """Everything needed to start one cluster."""

    layout: Layout
    ports: Ports
    extra_args: dict[str, list[str]] = field(default_factory=dict)
    # The cluster's block of the pod network (olm/devcluster/network.py), None without one.
    network: ClusterNetwork | None = None

    @property
    def service_cidr(self) -> str:
        return self.network.service_cidr if self.network else SERVICE_CIDR

    @property
    def pod_cidr(self) -> str:
        return self.network.pod_cidr if self.network else POD_CIDR

    @property
    def node_ip(self) -> str:
        return self.network.node_ip if self.network else NODE_IP

    @property
    def api_url(self) -> str:
        return f"https://{LOOPBACK}:{self.ports.apiserver}"

    def argv(self, component: str) -> list[str]:
        builders = {
            ETCD: self._etcd,
            APISERVER: self._apiserver,
            CONTROLLER_MANAGER: self._controller_manager,
            SCHEDULER: self._scheduler,
            KWOK: self._kwok,
            POD_RUNNER: self._pod_runner,
        }
        return [*builders[component](), *self.extra_args.get(component, [])]

    def _etcd(self) -> list[str]:
        client = f"http://{LOOPBACK}:{self.ports.etcd_client}"
        peer = f"http://{LOOPBACK}:{self.ports.etcd_peer}"
        return [
            str(self.layout.binary(ETCD)),
            "--name=olm-py-dev",
            f"--data-dir={self.layout.etcd_data}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=olm-py-dev={peer}",
            # Throw-away data: skipping fsync makes every write far cheaper on small disks.
            "--unsafe-no-fsync",
            "--auto-compaction-retention=1",
            "--quota-backend-bytes=4294967296",
            "--log-level=warn",
        ]

    def _apiserver(self) -> list[str]:
        pki = self.layout.pki_dir
        return [
            str(self.layout.binary(APISERVER)),
            f"--etcd-servers=http://{LOOPBACK}:{self.ports.etcd_client}",
            f"--bind-address={LOOPBACK}",
            f"--advertise-address={LOOPBACK}",
            f"--secure-port={self.ports.apiserver}",
            f"--cert-dir={self.layout.state_dir / 'apiserver-certs'}",
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--requestheader-client-ca-file={pki / 'ca.crt'}",
            f"--requestheader-allowed-names={FRONT_PROXY_NAME}",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki / 'front-proxy.crt'}",
            f"--proxy-client-key-file={pki / 'front-proxy.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={self.service_cidr}",
            "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            # On 2 cores, request fairness only adds latency for a single-user cluster.
            "--enable-priority-and-fairness=false",
            "--max-requests-inflight=0",
            "--max-mutating-requests-inflight=0",
            "--profiling=false",
            # Nothing can reach 127.0.0.1 as the `kubernetes` Service; don't try to publish it.
            "--endpoint-reconciler-type=none",
            # Webhooks, conversion webhooks and APIServices are called at their Service's
            # endpoints (pod IPs on the pod network), not at a ClusterIP: there is no kube-proxy.
            "--enable-aggregator-routing=true",
            "--v=1",
        ]

    def _client_common(self, component: str, port: int) -> list[str]:
        kubeconfig = self.layout.kubeconfig
        return [
            str(self.layout.binary(component)),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            f"--bind-address={LOOPBACK}",
            f"--secure-port={port}",
            f"--cert-dir={self.layout.state_dir / (component + '-certs')}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--kube-api-qps=200",
            "--kube-api-burst=400",
            "--v=1",
        ]

    def _controller_manager(self) -> list[str]:
        pki = self.layout.pki_dir
        return [
            *self._client_common(CONTROLLER_MANAGER, self.ports.controller_manager),
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={pki / 'ca.key'}",
            f"--service-cluster-ip-range={self.service_cidr}",
            "--use-service-account-credentials=false",
            "--controllers=*",
            # Faster reaction to fake nodes becoming Ready (the not-ready taint goes sooner).
            "--node-monitor-period=2s",
        ]

    def _scheduler(self) -> list[str]:
        return self._client_common(SCHEDULER, self.ports.scheduler)

    def _pod_runner(self) -> list[str]:
        return _pod_runner_argv(self)

    def _kwok(self) -> list[str]:
        return [
            str(self.layout.binary(KWOK)),
            f"--kubeconfig={self.layout.kubeconfig}",
            f"--config={self.layout.stages}",
            "--manage-all-nodes=false",
            f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake",
            "--node-lease-duration-seconds=40",
            f"--cidr={self.pod_cidr}",
            f"--node-ip={self.node_ip}",
        ]


def _pod_runner_argv(plan: Plan) -> list[str]:
    return [
        sys.executable,
        "-m",
        "olm.devcluster.podrunner",
        f"--kubeconfig={plan.layout.kubeconfig}",
        f"--state-dir={plan.layout.state_dir}",
    ]


def fake_node(name: str) -> dict[str, object]:
    """A Node that kwok manages: schedulable, no taints of its own, generous capacity."""
    capacity = {"cpu": "32", "memory": "256Gi", "pods": "250"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {FAKE_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name,
                "node-role.kubernetes.io/agent": "",
                "type": "kwok",
            },
        },
        "spec": {},
        "status": {"allocatable": capacity, "capacity": capacity},
    }


def kubeconfig(
    api_url: str, ca_cert: Path, client_cert: Path, client_key: Path
) -> dict[str, object]:
    """An admin kubeconfig using the cluster's own CA and admin client certificate."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "olm-py-dev",
                "cluster": {"server": api_url, "certificate-authority": str(ca_cert)},
            }
        ],
        "users": [
            {
                "name": "olm-py-admin",
                "user": {"client-certificate": str(client_cert), "client-key": str(client_key)},
            }
        ],
        "contexts": [
            {"name": "olm-py-dev", "context": {"cluster": "olm-py-dev", "user": "olm-py-admin"}}
        ],
        "current-context": "olm-py-dev",
    }
