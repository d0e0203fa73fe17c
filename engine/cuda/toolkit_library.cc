#include "engine/cuda/toolkit_library.h"

#include <cstdlib>
#include <vector>

namespace tensord::engine::cuda {

void* OpenToolkitLibrary(const std::string& soname, const std::string& what, std::string* error) {
  std::vector<std::string> names = {soname};
  const std::string unversioned = soname.substr(0, soname.find(".so") + 3);
  if (unversioned != soname) names.push_back(unversioned);
  if (const char* home = std::getenv("CUDA_HOME")) {
    names.push_back(absl::StrCat(home, "/lib64/", soname));
  }
  names.push_back("/usr/local/cuda/lib64/" + soname);  // the toolkit's usual place
  std::string tried;
  for (const std::string& name : names) {
    if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", dlerror());
  }
  *error = absl::StrCat(what, " could not be loaded (", tried, ")");
  return nullptr;
}

}  // namespace tensord::engine::cuda
