#!/bin/bash
# A copy of the project tools' container smoke runner (podman + runc, a debootstrapped base image);
# scripts/container-test.sh drives it.
# Build a Dockerfile and smoke-test the image on a machine with no Docker engine and no registry
# access (only Debian's package mirror): podman + runc, base image made with debootstrap.
# Works as root on Debian bookworm. Seen working: podman 4.3.1, runc 1.1.5.
#
# Usage: container-smoke.sh CONTEXT_DIR [IMAGE_TAG] [PORT]
#   Without PORT the image's default command runs in the foreground.
#   With PORT the container runs detached on the host network until PORT accepts connections;
#   then SMOKE_CMD (if set) runs on the host, e.g. a client that talks to 127.0.0.1:PORT; then SIGTERM,
#   and the container must exit 0 within STOP_TIMEOUT s (default 30: a drain), or the run fails.
# Environment: W (work folder, default /tmp/container-smoke), DOCKERFILE (default CONTEXT_DIR/Dockerfile),
#   STOP_TIMEOUT (seconds between SIGTERM and SIGKILL, default 30).
#
# Host quirks handled here:
#   - crun refuses this host's cgroup v1/v2 hybrid -> runtime runc;
#   - rlimits cannot be raised above the host's hard limit -> explicit ulimits;
#   - no registry -> debian:bookworm-slim is built locally and --pull=never.
set -euo pipefail
CTX=${1:?usage: container-smoke.sh CONTEXT_DIR [IMAGE_TAG] [PORT]}
TAG=${2:-localhost/app:ci}
PORT=${3:-}
W=${W:-/tmp/container-smoke}
mkdir -p "$W/tmp"

cat >"$W/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
netns = "host"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
cat >"$W/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$W/storage"
runroot = "$W/run"
CONF
export CONTAINERS_CONF=$W/containers.conf CONTAINERS_STORAGE_CONF=$W/storage.conf TMPDIR=$W/tmp

# 1. tools
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc debootstrap
fi

# 2. base image debian:bookworm-slim from the host's own package mirror (tarball cached in $W)
if ! podman image exists docker.io/library/debian:bookworm-slim; then
  if [ ! -f "$W/bookworm-minbase.tar" ]; then
    MIRROR=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$MIRROR" ] || MIRROR=$(awk '$1=="deb"{print $2; exit}' /etc/apt/sources.list)
    rm -rf "$W/rootfs"
    debootstrap --variant=minbase bookworm "$W/rootfs" "$MIRROR" >"$W/debootstrap.log" 2>&1
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      cp /etc/apt/sources.list.d/debian.sources "$W/rootfs/etc/apt/sources.list.d/"
      rm -f "$W/rootfs/etc/apt/sources.list"
    fi
    rm -rf "$W/rootfs"/var/cache/apt/archives/*.deb "$W/rootfs"/var/lib/apt/lists/*
    tar -C "$W/rootfs" -cf "$W/bookworm-minbase.tar" . && rm -rf "$W/rootfs"
  fi
  podman import --change 'CMD ["bash"]' "$W/bookworm-minbase.tar" localhost/debian:bookworm-slim
  podman tag localhost/debian:bookworm-slim docker.io/library/debian:bookworm-slim
fi

# 3. build: never touch a registry; host network so RUN apt-get reaches the mirror
# Docker format keeps HEALTHCHECK (the OCI format drops it).
podman build --format docker --pull=never --network=host -t "$TAG" ${DOCKERFILE:+-f "$DOCKERFILE"} "$CTX"

# 4. smoke test
if [ -z "$PORT" ]; then
  podman run --rm --network=host "$TAG"
  exit 0
fi
podman rm -f -t 0 smoke >/dev/null 2>&1 || true
podman run -d --name smoke --network=host "$TAG"
ok=
for _ in $(seq 1 120); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then ok=1; break; fi
  sleep 0.5
done
if [ -z "$ok" ]; then
  podman logs smoke || true
  podman rm -f -t 0 smoke >/dev/null
  echo "container-smoke: port $PORT never opened" >&2
  exit 1
fi
status=0
if [ -n "${SMOKE_CMD:-}" ]; then bash -c "$SMOKE_CMD" || status=$?; fi
podman logs smoke >"$W/container.log" 2>&1 || true
podman stop -t "${STOP_TIMEOUT:-30}" smoke >/dev/null || status=1   # SIGTERM first: the server should drain and exit
code=$(podman inspect -f '{{.State.ExitCode}}' smoke 2>/dev/null || echo '?')
if [ "$code" != 0 ]; then
  echo "container-smoke: the container exited $code after SIGTERM (137: it ignored SIGTERM and was killed)" >&2
  status=1
fi
podman rm -f smoke >/dev/null
exit $status
