"""The web console (`olm console`, docs/console.md): OperatorHub-style pages over the API
objects users see (PackageManifests, CSVs, Subscriptions, InstallPlans, Events).

Layout: pure modules decide what a page shows (catalog, install, operands, operators, security,
markdown, views); `read` is the thin I/O of the API (with the user's own token); `server`
(routes, sign-in, guards), `context` (what handlers share) and `pages` (the handlers) are the
aiohttp layer; `cli` adds the `olm console` command.

Invariants: every API call is made with the signed-in user's bearer token, never with olm-py's
own credentials; no page shows an action that SelfSubjectAccessReview refuses; every POST
carries the session's CSRF token; HTML from catalogs is sanitised before it is shown.
"""
