"""Helpers that test modules of several folders share: the test cluster and its waits and
reports (cluster, olm_run, recorder), the e2e story steps (stories, subscriptions,
catalog_server, widgets, chart, registry, pod_network), the fuzz corpus, the repo paths.

Invariants: test modules import helpers from here or from their own package's helper module
(tests/unit/<package>/world.py, plans.py, objects.py), never from a conftest.py or from
another test module; a support module defines no test and no fixture (fixtures live in the
conftest.py of the folder that uses them, so pytest registers each once).
"""
