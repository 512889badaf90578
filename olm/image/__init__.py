"""Container images read and written in-process: an OCI distribution client (pull and push),
with no container runtime, no registry pod and no unpack Job (issue 12).

Pure parts: `reference` (image references), `manifest` (manifests, indexes, platform choice),
`layers` (layer application with whiteouts), `cache` (which blobs to evict), `auth` (docker
config and challenges), `build` (FROM-scratch images). HTTP I/O: `client` (one registry),
`pull` and `push` (whole images).
"""
