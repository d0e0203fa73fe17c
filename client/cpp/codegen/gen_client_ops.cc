// Writes the C++ client's typed op methods from the engine's op registry, as ATen generates its
// Functions.h from native_functions.yaml: one method per registry op, its tensor inputs and
// attributes as typed parameters (a required dim first, as torch's gather(dim, index); then the
// tensor inputs and the required attributes, in registry order; optional ones as
// std::optional, left out of the call when not given, so the server applies torch's default).
//
//   gen_client_ops OUT_DIR   writes OUT_DIR/tensord/generated/{tensor_methods.inc,
//                            session_methods.inc, ops.cc}
//
// An op whose first input is `self` becomes a Tensor method (in-place ops return their tensor,
// or a handle carrying the error when the op is refused at the call), a
// factory a Session method, any other op with tensor inputs a Session method. View ops and the
// few data ops the client writes by hand (client.h) are left to it.
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/ops/op_registry.h"

namespace {

using tensord::engine::AttrSpec;
using tensord::engine::AttrType;
using tensord::engine::OpDef;
using tensord::engine::OpKind;

// Written by hand in client.h: the view ops (every kView/kMaybeView op is skipped too), data ops
// with hand-made signatures, factories with torch's positional forms, and names of Tensor's own
// members.
const std::set<std::string> kHandWritten = {
    "contiguous", "clone", "to", "flip", "repeat", "copy_", "fill_", "zero_", "arange", "zeros",
    "ones", "empty", "full", "empty_strided", "info", "sizes", "stride", "size", "dim", "numel",
    "storage_offset", "is_contiguous", "dtype", "data_ptr", "status", "bytes", "storage",
    "session", "id", "defined", "index"};

const std::set<std::string> kCppKeywords = {
    "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "xor_eq", "not_eq",
    "default", "delete", "new", "operator", "template", "typename", "class", "struct", "union",
    "int", "long", "short", "float", "double", "bool", "char", "signed", "unsigned", "void",
    "const", "auto", "register", "return", "if", "else", "for", "while", "do", "switch", "case",
    "break", "continue", "goto", "namespace", "using", "this", "throw", "try", "catch",
    "static", "extern", "inline", "virtual", "friend", "public", "private", "protected",
    "sizeof", "true", "false", "nullptr", "enum", "export", "module", "import", "requires",
    "concept", "co_await", "co_return", "co_yield", "mutable", "explicit", "volatile"};

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  for (const std::string& x : v) {
    if (x == s) return true;
  }
  return false;
}

std::string Param(const std::string& name) {
  return kCppKeywords.count(name) ? name + "_" : name;
}

// The C++ type of an attribute, and the Attrs setter that sends it.
struct AttrCpp {
  std::string type;
  std::string setter;
};

AttrCpp CppOf(AttrType t) {
  switch (t) {
    case AttrType::kInt: return {"int64_t", "Int"};
    case AttrType::kIntList: return {"std::vector<int64_t>", "Ints"};
    case AttrType::kIntOrIntList: return {"IntOrList", "IntOrList"};
    case AttrType::kBool: return {"bool", "Bool"};
    case AttrType::kScalar: return {"Scalar", "Number"};
    case AttrType::kDType: return {"DType", "Dtype"};
    case AttrType::kDevice: return {"std::string", "Device"};
    case AttrType::kIndex: return {"std::vector<Index>", "IndexList"};
    case AttrType::kString: return {"std::string", "Text"};
  }
  return {"", ""};
}

struct Generated {
  std::ostringstream tensor_decls, session_decls, defs;
  std::vector<std::string> skipped;
};

void Emit(const OpDef& op, Generated& g) {
  // An overload's registry name is torch's (max.dim): the method is `max`, told apart by its
  // parameters.
  const std::string fn = op.name.substr(0, op.name.find('.'));
  const bool method = !op.inputs.empty() && op.inputs[0] == "self";
  const bool in_place = op.kind == OpKind::kInPlace && method;
  std::string ret = op.multi_output ? "absl::StatusOr<std::vector<Tensor>>" : "Tensor";
  if (op.returns_nothing) ret = "absl::Status";
  // Parameters: tensor inputs (but self), then required attributes, then optional inputs and
  // attributes.
  // torch's order where it has one: a required `dim` or `equation` comes first
  // (torch.einsum(equation, operands), t.gather(dim, index),
  // t.scatter(dim, index, src), t.index_select(dim, index)).
  std::vector<std::string> required, optional;
  for (const AttrSpec& a : op.attrs) {
    const bool leads = a.name == "dim" || a.name == "equation";
    if (a.required && leads && !Contains(op.inputs, a.name)) {
      required.push_back("const " + CppOf(a.type).type + "& " + Param(a.name));
    }
  }
  std::ostringstream body;
  body << "  std::vector<Tensor> inputs;\n  Attrs attrs;\n";
  if (method) body << "  inputs.push_back(*this);\n";
  for (size_t i = method ? 1 : 0; i < op.inputs.size(); ++i) {
    const std::string& in = op.inputs[i];
    const std::string p = Param(in);
    if (op.variadic && i + 1 == op.inputs.size()) {  // a list of tensors
      required.push_back("const std::vector<Tensor>& " + p);
      body << "  inputs.insert(inputs.end(), " << p << ".begin(), " << p << ".end());\n";
      continue;
    }
    const bool number = Contains(op.scalar_inputs, in);
    const bool opt = Contains(op.optional_inputs, in);
    const std::string type = number ? "TensorOrScalar" : "Tensor";
    if (opt) {
      optional.push_back("const std::optional<" + type + ">& " + p + " = std::nullopt");
      body << "  if (" << p << ") " << (number ? p + "->AddTo(\"" + in + "\", inputs, attrs)"
                                               : "inputs.push_back(*" + p + ")")
           << ";\n";
      body << "  else attrs.None(\"" << in << "\");  // absent: None\n";
    } else {
      required.push_back("const " + type + "& " + p);
      body << "  " << (number ? p + ".AddTo(\"" + in + "\", inputs, attrs)"
                              : "inputs.push_back(" + p + ")")
           << ";\n";
    }
  }
  for (const AttrSpec& a : op.attrs) {
    if (Contains(op.inputs, a.name)) continue;  // a number given for an input: its parameter
    const AttrCpp c = CppOf(a.type);
    const std::string p = Param(a.name);
    if (a.required) {
      if (a.name != "dim" && a.name != "equation") required.push_back("const " + c.type + "& " + p);
      body << "  attrs." << c.setter << "(\"" << a.name << "\", " << p << ");\n";
    } else if (a.type == AttrType::kIntOrIntList || a.type == AttrType::kIntList) {
      // Lists are optional through IntOrList's own "absent" (a braced list cannot initialize
      // a std::optional of a list): t.sum({0, 1}), t.sum(1), t.sum().
      optional.push_back("const IntOrList& " + p + " = IntOrList()");
      body << "  if (" << p << ".has_value()) attrs."
           << (a.type == AttrType::kIntList ? "Ints(\"" + a.name + "\", " + p + ".ints())"
                                            : "IntOrList(\"" + a.name + "\", " + p + ")")
           << ";\n";
    } else {
      optional.push_back("const std::optional<" + c.type + ">& " + p + " = std::nullopt");
      body << "  if (" << p << ") attrs." << c.setter << "(\"" << a.name << "\", *" << p
           << ");\n";
    }
  }
  std::vector<std::string> params = required;
  params.insert(params.end(), optional.begin(), optional.end());
  std::string decl_params, def_params;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& p = params[i];
    decl_params += (i ? ", " : "") + p;
    const size_t eq = p.find(" = ");
    def_params += (i ? ", " : "") + (eq == std::string::npos ? p : p.substr(0, eq));
  }
  std::string doc = op.doc;
  for (char& c : doc) {
    if (c == '\n') c = ' ';
  }
  std::ostringstream& decls = method ? g.tensor_decls : g.session_decls;
  decls << "  // " << op.name << ": " << doc << "\n  " << ret << " " << fn << "("
        << decl_params << ")" << (method ? " const" : "") << ";\n";
  const std::string cls = method ? "Tensor" : "Session";
  g.defs << ret << " " << cls << "::" << fn << "(" << def_params << ")"
         << (method ? " const" : "") << " {\n"
         << body.str();
  const std::string session = method ? "session()" : "(*this)";
  if (op.returns_nothing) {
    g.defs << "  return " << session << ".CallNoOutput(\"" << op.name << "\", inputs, attrs);\n";
  } else if (op.multi_output) {
    g.defs << "  return " << session << ".CallMulti(\"" << op.name << "\", inputs, attrs);\n";
  } else if (in_place) {
    g.defs << "  return AfterInPlace(" << session << ".CallNoOutput(\"" << op.name
           << "\", inputs, attrs));\n";
  } else {
    g.defs << "  return " << session << ".Call(\"" << op.name << "\", inputs, attrs);\n";
  }
  g.defs << "}\n\n";
}

bool Write(const std::string& path, const std::string& text) {
  // Unchanged files keep their timestamps: nothing that includes them rebuilds.
  std::ifstream in(path);
  std::stringstream old;
  old << in.rdbuf();
  if (in && old.str() == text) return true;
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_client_ops OUT_DIR\n");
    return 2;
  }
  const std::string dir = std::string(argv[1]) + "/tensord/generated/";
  Generated g;
  const char* header =
      "// Generated by client/cpp/codegen/gen_client_ops.cc from the engine's op registry: do "
      "not edit.\n";
  for (const OpDef& op : tensord::engine::OpRegistry::Global().ops()) {
    if (op.name.empty() || op.name[0] == '_' || op.kind == OpKind::kView ||
        op.kind == OpKind::kMaybeView || kHandWritten.count(op.name) ||
        kCppKeywords.count(op.name)) {
      continue;
    }
    Emit(op, g);
  }
  const std::string defs = std::string(header) +
                           "#include \"tensord/client.h\"\n\nnamespace tensord::client {\n\n" +
                           g.defs.str() + "}  // namespace tensord::client\n";
  const bool ok = Write(dir + "tensor_methods.inc", header + g.tensor_decls.str()) &&
                  Write(dir + "session_methods.inc", header + g.session_decls.str()) &&
                  Write(dir + "ops.cc", defs);
  if (!ok) {
    std::fprintf(stderr, "gen_client_ops: cannot write into %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
