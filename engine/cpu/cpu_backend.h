// The CPU backend: runtime/backend.h's interface over the loops in this folder.
#ifndef TENSORD_ENGINE_CPU_CPU_BACKEND_H_
#define TENSORD_ENGINE_CPU_CPU_BACKEND_H_

#include "engine/runtime/backend.h"

namespace tensord::engine {

// The process's CPU backend. It registers itself (RegisterBackend) before main in every program
// that links tensord_engine, so BackendFor(kCpu) finds it.
Backend& CpuBackend();

}  // namespace tensord::engine

#endif  // TENSORD_ENGINE_CPU_CPU_BACKEND_H_
