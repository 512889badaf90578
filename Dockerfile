# olm-py's container image: a venv installed from wheels built on the host, run as a non-root
# user with `olm run` (in-cluster config when run in a pod).
#
# Build anywhere:   pip wheel --wheel-dir wheels . && podman build -t olm-py .   (or docker)
# Build here:       make image   (offline: `olm dev image`, see docs/image.md)
#
# Only `python3` on PATH is assumed of the base, so both the official
# python:3.11-slim-bookworm and the Debian-made stand-in `olm dev image` tags with that name
# work. No `# syntax=` line: BuildKit would try to pull a frontend image.

FROM docker.io/library/python:3.11-slim-bookworm AS build

# The wheels are installed without an index (the build needs no network). The venv has no pip:
# the base's pip installs into it from outside, and stays out of the final image.
COPY wheels/ /wheels/
RUN python3 -m venv --without-pip /opt/venv \
    && python3 -m pip --python /opt/venv/bin/python3 install \
        --no-index --find-links /wheels --no-cache-dir \
        --disable-pip-version-check --root-user-action=ignore \
        olm-py

FROM docker.io/library/python:3.11-slim-bookworm

ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="olm-py" \
      org.opencontainers.image.description="The Operator Lifecycle Manager (OLM v0) rebuilt in Python" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim-bookworm"

COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# A numeric non-root user, so Kubernetes can check runAsNonRoot (PodSecurity "restricted").
USER 65532:65532
ENTRYPOINT ["olm"]
CMD ["run"]
