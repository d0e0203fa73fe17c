#!/usr/bin/env bash
# Builds the Dockerfile into an image and tests it running, as a user would run it:
#   - the image builds from this checkout alone (podman, no registry: the base image is made from
#     Debian's packages by tests/container/container-smoke.sh, which also starts and stops it);
#   - the container listens on 0.0.0.0:50051 as a non-root user and its health probe says SERVING
#     there and on the plaintext health port 50052 (the image's HEALTHCHECK probes that one);
#   - the Python client's seed tests pass against the container;
#   - SIGTERM: the server drains and the container exits 0 within the 30 s grace period.
# Needs root (podman with runc). `make test` runs it in CI (CI=true); run it by hand any time.
# Prints the image's size and the time taken.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TAG=${TENSORD_IMAGE_TAG:-localhost/tensord:ci}
PORT=50051 HEALTH_PORT=50052
export W=${W:-/tmp/container-smoke}  # the runner's work folder: podman storage, base image
[ -x build/tensord-health ] || { echo "container-test: build first (make build)" >&2; exit 1; }
for p in $PORT $HEALTH_PORT; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "container-test: port $p is taken on this machine; the container needs it" >&2
    exit 1
  fi
done
start=$(date +%s)
smoke="./build/tensord-health --address=127.0.0.1:$PORT"
smoke+=" && ./build/tensord-health --address=127.0.0.1:$HEALTH_PORT"
smoke+=" && TENSORD_EXTERNAL_SERVER=127.0.0.1:$PORT /usr/bin/python3 -m pytest -q -p no:cacheprovider"
smoke+=" tests/python/test_seeds.py"
SMOKE_CMD=$smoke bash tests/container/container-smoke.sh . "$TAG" "$PORT"
export CONTAINERS_CONF=$W/containers.conf CONTAINERS_STORAGE_CONF=$W/storage.conf
size=$(podman image inspect -f '{{.Size}}' "$TAG")
user=$(podman image inspect -f '{{.Config.User}}' "$TAG")
[ "$user" = tensord ] || { echo "container-test: the image runs as '$user', not tensord" >&2; exit 1; }
health=$(podman image inspect -f '{{.Config.Healthcheck.Test}}' "$TAG")
case "$health" in *tensord-health*) ;; *) echo "container-test: no HEALTHCHECK ($health)" >&2; exit 1 ;; esac
echo "container-test: passed: image $TAG $((size / 1048576)) MiB, user $user, $(( $(date +%s) - start )) s"
