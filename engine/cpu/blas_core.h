// The kernels OpenBLAS chose when it loaded ("Haswell", "SkylakeX", "Cooperlake", …): from the
// CPU, unless OPENBLAS_CORETYPE names them. They set the speed of every float product, so the
// server names them in its start-up log line.
#ifndef TENSORD_ENGINE_CPU_BLAS_CORE_H_
#define TENSORD_ENGINE_CPU_BLAS_CORE_H_

#include <string>

namespace tensord::engine::cpu {

std::string LoadedBlasCore();

}  // namespace tensord::engine::cpu

#endif  // TENSORD_ENGINE_CPU_BLAS_CORE_H_
