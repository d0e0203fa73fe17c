// The CUDA toolkit's libraries that tensord loads when first needed (cuBLAS, cuSOLVER), so
// that it starts, and runs everything else, where one is missing.
#ifndef TENSORD_ENGINE_CUDA_TOOLKIT_LIBRARY_H_
#define TENSORD_ENGINE_CUDA_TOOLKIT_LIBRARY_H_

#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace tensord::engine::cuda {

// A toolkit library (`soname`, e.g. "libcublas.so.13") opened from the loader's path, then
// $CUDA_HOME/lib64, then /usr/local/cuda/lib64; null with `*error` = "<what> could not be
// loaded (what each place said)".
void* OpenToolkitLibrary(const std::string& soname, const std::string& what, std::string* error);

// fn = `symbol` of `lib`; where it is missing, the first such `*error` = "<what> has no …".
template <typename Fn>
void LoadSymbol(void* lib, const char* symbol, const std::string& what, Fn& fn,
                std::string* error) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (fn == nullptr && error->empty()) *error = absl::StrCat(what, " has no ", symbol);
}

}  // namespace tensord::engine::cuda

#endif  // TENSORD_ENGINE_CUDA_TOOLKIT_LIBRARY_H_
