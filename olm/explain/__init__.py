"""`olm explain <kind>/<name> -n NS`: the chain of reasons from what a user sees on an OLM
object to the cause, with the command that fixes it (docs/explain.md).

`model` (the snapshot and the chain), `commands` (the kubectl commands it proposes), the
per-kind explainers (`catalog`, `groups`, `csv`, `installplan`, `subscription`), `chain`
(the entry point) and `render` are pure; `read` gathers the snapshot; `cli` is the command.
"""
