#!/usr/bin/env bash
# `cmake --install` of this build into a scratch prefix, then a user's project (consumer/) that
# says find_package(tensord) and links tensord::client is configured, built and run against the
# installed server. Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in bin/tensord include/tensord/client.h include/tensord/v1/tensord.pb.h \
         lib/cmake/tensord/tensordConfig.cmake; do
  [ -e "$work/prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null

port=$((20000 + RANDOM % 20000))
"$work/prefix/bin/tensord" --listen="127.0.0.1:$port" --device=cpu >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  out=$("$work/consumer/consumer" "127.0.0.1:$port" 2>&1) && break
  sleep 0.1
done
expected=$'strides 24 4 1 12\nvalues 0 12 1 13 2 14 3 15 4 16 5 17 6 18 7 19 8 20 9 21 10 22 11 23\nsums 66 210'
if [ "$out" != "$expected" ]; then
  echo "consumer printed:"; echo "$out"; echo "expected:"; echo "$expected"
  exit 1
fi
echo "find_package(tensord) + tensord::client: built and ran against the installed server"
