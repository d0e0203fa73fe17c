# The two commands of the README: `make run` and `make test`. Everything else is a helper.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
MAKEFLAGS += --no-print-directory
CMAKE_FLAGS ?=
LISTEN ?= 127.0.0.1:50051

.PHONY: deps configure build test run bench clean

deps:
	@./scripts/install-deps.sh
	@[ -d tests/node/node_modules ] || npm ci --prefix tests/node --silent --no-audit --no-fund

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

run: build
	@exec ./$(BUILD_DIR)/tensord --listen=$(LISTEN) --device=cpu

bench: build
	@./scripts/run-benchmarks.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
