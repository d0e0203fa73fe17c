#!/usr/bin/env bash
# Installs, from Debian's packages, whatever the build and the tests need and this machine lacks.
# Idempotent and silent when everything is already there.
set -euo pipefail

packages=(
  cmake make g++ pkg-config git ccache ninja-build
  clang-14 libclang-rt-14-dev
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc prometheus-cpp-dev
  libopenblas-dev pybind11-dev python3-dev
  python3 python3-torch python3-numpy python3-grpcio python3-protobuf python3-pytest
  python3-venv python3-setuptools python3-pip
  # The deployment tests: the router (nginx), a real Prometheus scraping the metrics, the
  # manifests (YAML; kubectl kustomize; docker-compose's schema), TLS certificates.
  nginx-light prometheus python3-yaml kubectl docker-compose openssl
)

missing=()
for p in "${packages[@]}"; do
  if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != "installed" ]; then
    missing+=("$p")
  fi
done
# Node.js (for the third-language client test) may come from Debian or be on the machine already.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: missing packages (${missing[*]}) and not root; install them and retry" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/tensord-apt.log 2>&1; then
  $sudo apt-get update -q >>/tmp/tensord-apt.log 2>&1
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/tensord-apt.log 2>&1 || {
    tail -n 30 /tmp/tensord-apt.log >&2; exit 1; }
fi
