"""The dev tooling: the local, real Kubernetes control plane used by `make demo`, tests and
benchmarks, and the builds of the pinned tools, the image and the reference OLM.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok run as plain processes
on 127.0.0.1. Their binaries are built once from the Go module proxy into a versioned cache
outside the repo (`olm.devcluster.build`), and a cluster's state (certificates, kubeconfig,
data, logs, PIDs) lives in one state directory (`olm.devcluster.cluster`). Every build caches
its output in a verified cache (`olm.devcluster.verifiedcache`); `make tools` builds the
pinned tools (`olm.devcluster.tools`).

Apart from the product: nothing in `olm` imports this package but the `olm` command
(`olm dev ...`) and `make demo` (an import-linter contract); what both sides need, the
progress printer, is `olm.progress`.
"""
