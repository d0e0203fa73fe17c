#include "engine/cpu/blas_core.h"

extern "C" char* openblas_get_corename(void);

namespace tensord::engine::cpu {

std::string LoadedBlasCore() {
  const char* name = openblas_get_corename();
  return name == nullptr ? std::string() : std::string(name);
}

}  // namespace tensord::engine::cpu
