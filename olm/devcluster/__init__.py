"""The local, real Kubernetes control plane used by `make demo`, tests and benchmarks.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok run as plain processes
on 127.0.0.1. Their binaries are built once from the Go module proxy into a versioned cache
outside the repo (`olm.devcluster.build`), and a cluster's state (certificates, kubeconfig,
data, logs, PIDs) lives in one state directory (`olm.devcluster.cluster`).
"""
