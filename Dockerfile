# tensord's container image: a build stage from Debian's packages, then a slim runtime stage
# with only tensord, its health probe and their shared libraries, running as a non-root user.
#
#   podman build --format docker -t tensord .      (docker build -t tensord . alike)
#   podman run --rm -p 50051:50051 tensord
#
# The CPU image is the default. For NVIDIA GPUs, build the CUDA variant on NVIDIA's CUDA images
# (a build with nvcc, a runtime with the driver's libraries mounted by the NVIDIA container
# toolkit), e.g.:
#   docker build --build-arg BUILD_BASE=nvidia/cuda:13.0.0-devel-ubuntu24.04 \
#                --build-arg RUNTIME_BASE=nvidia/cuda:13.0.0-runtime-ubuntu24.04 \
#                --build-arg TENSORD_CUDA=ON -t tensord:cuda .
#   docker run --gpus all -p 50051:50051 tensord:cuda --device=auto
# (deploy/compose.yaml has the GPU service.)
ARG BUILD_BASE=debian:bookworm-slim
ARG RUNTIME_BASE=debian:bookworm-slim

FROM ${BUILD_BASE} AS build
ARG TENSORD_CUDA=OFF
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake make g++ ccache libabsl-dev libgrpc++-dev libprotobuf-dev protobuf-compiler \
      protobuf-compiler-grpc libopenblas-dev prometheus-cpp-dev libcli11-dev \
      nlohmann-json3-dev >/dev/null
WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake cmake
COPY proto proto
COPY engine engine
COPY server server
COPY client client
COPY bench bench
# The compiler cache survives between image builds on one machine (CI rebuilds in minutes).
RUN --mount=type=cache,target=/root/.ccache \
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTENSORD_BUILD_TESTS=OFF \
      -DTENSORD_BUILD_BENCH=ON -DTENSORD_CUDA=${TENSORD_CUDA} \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null && \
    cmake --build build -j "$(nproc)" --target tensord tensord-health tensord-load \
      tensord_python_proto && \
    strip build/tensord build/tensord-health build/tensord-load

FROM ${RUNTIME_BASE} AS runtime
# (No apt cache mounts: podman 4.3's builder kept a locked cache mount held into the next stage.)
RUN apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libabsl20220623 libgrpc++1.51 libgrpc29 libprotobuf32 libopenblas0-pthread libre2-9 \
      libc-ares2 libssl3 libprometheus-cpp-core1.0 >/dev/null && \
    apt-get clean && rm -rf /var/lib/apt/lists/* && \
    useradd --system --no-create-home --shell /usr/sbin/nologin tensord
# tensord-load: the load generator, for load tests against this or any tensord.
COPY --from=build /src/build/tensord /src/build/tensord-health /src/build/tensord-load \
     /usr/local/bin/
# The Python client's sources, for users who install it in their own image or virtualenv:
#   podman cp <container>:/usr/local/share/tensord/python ./tensord-python
COPY --from=build /src/client/python/pyproject.toml /src/client/python/setup.py \
     /usr/local/share/tensord/python/
COPY --from=build /src/client/python/tensord /usr/local/share/tensord/python/tensord
USER tensord
# 50051: the API (TLS and tokens when configured); 50052: grpc.health.v1 alone, plaintext and
# tokenless, for probes; metrics are off unless --metrics-listen is given (e.g. 0.0.0.0:9090).
EXPOSE 50051 50052
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["tensord-health", "--address=127.0.0.1:50052"]
ENTRYPOINT ["tensord", "--listen=0.0.0.0:50051", "--health-listen=0.0.0.0:50052"]
CMD ["--device=cpu"]
