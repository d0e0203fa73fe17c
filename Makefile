# The two commands of the README: `make run` and `make test`. Everything else is a helper.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
CMAKE_FLAGS ?=
LISTEN ?= 127.0.0.1:50051

# ccache (installed by scripts/install-deps.sh) makes rebuilds and fresh clones on this machine
# cheap: paths are hashed relative to the checkout, so every clone shares one cache.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
export CCACHE_MAXSIZE ?= 8G
LAUNCHER = $(if $(shell command -v ccache),-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)

.PHONY: deps configure build test run install bench fuzz sanitize clean

deps:
	@./scripts/install-deps.sh
	@[ -d tests/node/node_modules ] || npm ci --prefix tests/node --silent --no-audit --no-fund

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(LAUNCHER) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Every suite; in CI (CI=true) also the sanitizer job (scripts/sanitize.sh: ASan+UBSan, fuzzing,
# TSan), which has its own clang builds in build-fuzz/ and build-tsan/, and the container test
# (scripts/container-test.sh: the Dockerfile built with podman and run).
test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@if [ "$$CI" = true ]; then ./scripts/sanitize.sh && ./scripts/container-test.sh; fi

run: build
	@exec ./$(BUILD_DIR)/tensord --listen=$(LISTEN) --device=cpu

# The server (bin/tensord) and the C++ client as a CMake package: find_package(tensord), then
# link tensord::client. PREFIX=/usr/local unless given.
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX)

bench: build
	@./scripts/run-benchmarks.sh $(BUILD_DIR)

# libFuzzer targets (clang, ASan+UBSan, in build-fuzz/): FUZZ_SECONDS per target; see scripts/fuzz.sh.
FUZZ_SECONDS ?= 60
fuzz: deps
	@./scripts/fuzz.sh $(FUZZ_SECONDS)

# ASan+UBSan (clang, build-fuzz/): the chosen suites, every fuzz corpus, a short fuzzing run.
sanitize: deps
	@./scripts/sanitize.sh

clean:
	rm -rf $(BUILD_DIR)
