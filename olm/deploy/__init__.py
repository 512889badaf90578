"""`olm install` / `olm uninstall` / `olm status`: olm-py into the current kubeconfig's cluster.

What is installed is the Helm chart `charts/olm-py` with its default values, without Helm: the
chart's CRDs are olm-py's shipped CRDs (`olm.data.CRDS`, the chart's `crds/` is a symlink to
them) and `olm-py.yaml` here is `helm template olm-py charts/olm-py --set
image.repository=unset.invalid/olm-py` committed as package data (tests/unit/deploy/test_chart.py
fails when it drifts from the chart). The chart names no image (nothing publishes one), so
`olm install` always puts in the image it is given, or the one already installed.

`plan` decides (pure, plain dicts); `install` does the I/O through `olm.kube`.
"""
