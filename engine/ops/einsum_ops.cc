// torch.einsum, planned as ATen plans it (Linear.cpp): an operand's repeated labels become its
// diagonal, labels used by no other operand nor the output are summed first, and the operands
// are contracted pairwise, left to right, each pair one batched matrix product between permuted
// and reshaped views (a copy only where a reshape needs one). No loop over elements.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/core/errors.h"
#include "engine/core/status_macros.h"
#include "engine/ops/composition.h"
#include "engine/ops/copy_ops.h"
#include "engine/ops/op_registry_internal.h"
#include "engine/views/view_ops.h"

namespace tensord::engine {
namespace {

constexpr absl::string_view kOp = "einsum";
// Labels: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (so that sorting them is torch's alphabetical
// order); the dims an ellipsis covers are 52, 53, … aligned from the right, as broadcasting.
constexpr int kEllipsis = 52;
using Labels = std::vector<int>;

bool Has(const Labels& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}
int64_t Position(const Labels& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) - labels.begin();
}
std::string LabelChar(int l) {
  return std::string(1, static_cast<char>(l < 26 ? 'A' + l : 'a' + (l - 26)));
}

struct Term {
  Tensor t;
  Labels labels;
};

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

absl::StatusOr<Equation> Parse(absl::string_view equation, Inputs operands) {
  std::string eq;
  for (char ch : equation) {
    if (ch != ' ') eq.push_back(ch);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  const std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != operands.size()) {
    return RuntimeError(kOp, operands.size() > terms.size()
                                 ? "einsum(): more operands were provided than specified in the "
                                   "equation"
                                 : "einsum(): fewer operands were provided than specified in "
                                   "the equation");
  }
  // The subscripts of a term (one entry per letter; -1 for where its ellipsis goes).
  const auto letters = [&](absl::string_view term, size_t base) -> absl::StatusOr<Labels> {
    Labels out;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.substr(i, 3) == "...") {
        out.push_back(-1);
        i += 2;
        continue;
      }
      const char ch = term[i];
      if (ch >= 'A' && ch <= 'Z') {
        out.push_back(ch - 'A');
      } else if (ch >= 'a' && ch <= 'z') {
        out.push_back(26 + (ch - 'a'));
      } else {
        return RuntimeError(kOp, absl::StrCat("einsum(): invalid subscript given at index ",
                                            base + i, " in the equation string, subscripts "
                                            "must be in [a-zA-Z]"));
      }
    }
    if (std::count(out.begin(), out.end(), -1) > 1) {
      return RuntimeError(kOp, "einsum(): found more than one ellipsis ('...') in a term");
    }
    return out;
  };
  std::vector<Labels> raw;
  int64_t ell_rank = 0;
  size_t base = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    TENSORD_ASSIGN_OR_RETURN(Labels l, letters(terms[i], base));
    base += terms[i].size() + 1;
    const int64_t named = static_cast<int64_t>(l.size()) - (Has(l, -1) ? 1 : 0);
    const int64_t ndim = operands[i].dim();
    if (Has(l, -1)) {
      if (named > ndim) {
        return RuntimeError(kOp, absl::StrCat("einsum(): the number of subscripts in the "
                                              "equation (", named, ") is more than the number "
                                              "of dimensions (", ndim, ") for operand ", i));
      }
      ell_rank = std::max(ell_rank, ndim - named);
    } else if (named != ndim) {
      return RuntimeError(kOp, absl::StrCat("einsum(): the number of subscripts in the equation "
                                            "(", named, ") does not match the number of "
                                            "dimensions (", ndim, ") for operand ", i,
                                            " and no ellipsis was given"));
    }
    raw.push_back(std::move(l));
  }
  const auto expand_ellipsis = [&](const Labels& l, int64_t rank) {
    Labels out;
    for (int x : l) {
      if (x != -1) {
        out.push_back(x);
        continue;
      }
      for (int64_t j = 0; j < rank; ++j) out.push_back(kEllipsis + (ell_rank - rank + j));
    }
    return out;
  };
  Equation e;
  int counts[kEllipsis] = {};
  for (size_t i = 0; i < raw.size(); ++i) {
    const int64_t named = static_cast<int64_t>(raw[i].size()) - (Has(raw[i], -1) ? 1 : 0);
    e.inputs.push_back(expand_ellipsis(raw[i], operands[i].dim() - named));
    for (int x : raw[i]) {
      if (x >= 0) ++counts[x];
    }
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    TENSORD_ASSIGN_OR_RETURN(Labels out, letters(rhs, arrow + 2));
    for (int x : out) {
      if (x < 0) continue;
      if (counts[x] == 0) {
        return RuntimeError(kOp, absl::StrCat("einsum(): output subscript ", LabelChar(x),
                                              " does not appear in the equation for any input "
                                              "operand"));
      }
      if (std::count(out.begin(), out.end(), x) > 1) {
        return RuntimeError(kOp, absl::StrCat("einsum(): output subscript ", LabelChar(x),
                                              " appears more than once in the output"));
      }
    }
    e.output = expand_ellipsis(out, ell_rank);
  } else {
    for (int64_t j = 0; j < ell_rank; ++j) e.output.push_back(kEllipsis + j);
    for (int x = 0; x < kEllipsis; ++x) {
      if (counts[x] == 1) e.output.push_back(x);
    }
  }
  return e;
}

// An operand's repeated labels become one dim: its diagonal, moved last.
absl::StatusOr<Term> Unique(Term term, size_t operand) {
  while (true) {
    int64_t i = -1, j = -1;
    for (size_t a = 0; a < term.labels.size() && i < 0; ++a) {
      for (size_t b = a + 1; b < term.labels.size(); ++b) {
        if (term.labels[a] == term.labels[b]) {
          i = static_cast<int64_t>(a), j = static_cast<int64_t>(b);
          break;
        }
      }
    }
    if (i < 0) return term;
    if (term.t.sizes()[i] != term.t.sizes()[j]) {
      return RuntimeError(kOp, absl::StrCat("einsum(): subscript ", LabelChar(term.labels[i]),
                                            " is repeated for operand ", operand,
                                            " but the sizes don't match, ", term.t.sizes()[i], " != ",
                                            term.t.sizes()[j]));
    }
    const int label = term.labels[i];
    TENSORD_ASSIGN_OR_RETURN(term.t, Diagonal(term.t, 0, i, j));
    term.labels.erase(term.labels.begin() + j);
    term.labels.erase(term.labels.begin() + i);
    term.labels.push_back(label);
  }
}

// a and b contracted over their shared labels that `keep` lacks: one bmm of
// (batch, left, contract) by (batch, contract, right).
absl::StatusOr<Term> Pair(Composition& c, const Term& a, const Term& b, const Labels& keep) {
  int top = 0;
  for (const Term* term : {&a, &b}) {
    for (int l : term->labels) top = std::max(top, l);
  }
  std::vector<int64_t> sizes(top + 1, -1);
  for (const Term* term : {&a, &b}) {
    for (size_t k = 0; k < term->labels.size(); ++k) {
      const int l = term->labels[k];
      const int64_t n = term->t.sizes()[k];
      if (sizes[l] >= 0 && sizes[l] != n && sizes[l] != 1 && n != 1) {
        return RuntimeError(kOp, absl::StrCat("einsum(): operands do not broadcast with "
                                              "remapped shapes (original->remapped): ",
                                              FormatList(a.t.sizes()), " and ",
                                              FormatList(b.t.sizes())));
      }
      // Broadcasting: a size of 1 takes the other's (0 included).
      if (sizes[l] < 0 || sizes[l] == 1) sizes[l] = n;
    }
  }
  Labels batch, contract, left, right;
  for (int l : a.labels) {
    if (Has(b.labels, l)) (Has(keep, l) ? batch : contract).push_back(l);
    else left.push_back(l);
  }
  for (int l : b.labels) {
    if (!Has(a.labels, l)) right.push_back(l);
  }
  const auto product = [&](const Labels& ls) -> absl::StatusOr<int64_t> {
    int64_t n = 1;
    for (int l : ls) {
      if (__builtin_mul_overflow(n, sizes[l], &n)) {
        return RuntimeError(kOp, "einsum(): the product's size overflows int64");
      }
    }
    return n;
  };
  const auto arrange = [&](const Term& term, const Labels& order) -> absl::StatusOr<Tensor> {
    DimVector perm, target;
    for (int l : order) {
      perm.push_back(Position(term.labels, l));
      target.push_back(sizes[l]);
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor p, Permute(term.t, perm));
    return Expand(p, target);
  };
  Labels a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), left.begin(), left.end());
  a_order.insert(a_order.end(), contract.begin(), contract.end());
  b_order.insert(b_order.end(), contract.begin(), contract.end());
  b_order.insert(b_order.end(), right.begin(), right.end());
  TENSORD_ASSIGN_OR_RETURN(Tensor a2, arrange(a, a_order));
  TENSORD_ASSIGN_OR_RETURN(Tensor b2, arrange(b, b_order));
  TENSORD_ASSIGN_OR_RETURN(const int64_t nb, product(batch));
  TENSORD_ASSIGN_OR_RETURN(const int64_t nl, product(left));
  TENSORD_ASSIGN_OR_RETURN(const int64_t nk, product(contract));
  TENSORD_ASSIGN_OR_RETURN(const int64_t nr, product(right));
  Tensor out;
  if (contract.empty()) {
    // Nothing summed: an elementwise product, as ATen's sumproduct_pair (so the operands'
    // dtypes promote, bools included) instead of a bmm with a contraction of 1.
    TENSORD_ASSIGN_OR_RETURN(a2, c.Reshape(a2, {nb, nl, 1}));
    TENSORD_ASSIGN_OR_RETURN(b2, c.Reshape(b2, {nb, 1, nr}));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("mul", {a2, b2}));
  } else {
    TENSORD_ASSIGN_OR_RETURN(a2, c.Reshape(a2, {nb, nl, nk}));
    TENSORD_ASSIGN_OR_RETURN(b2, c.Reshape(b2, {nb, nk, nr}));
    TENSORD_ASSIGN_OR_RETURN(out, c.Op1("bmm", {a2, b2}));
  }
  Term result;
  result.labels = batch;
  result.labels.insert(result.labels.end(), left.begin(), left.end());
  result.labels.insert(result.labels.end(), right.begin(), right.end());
  DimVector shape;
  for (int l : result.labels) shape.push_back(sizes[l]);
  TENSORD_ASSIGN_OR_RETURN(result.t, c.Reshape(out, shape));
  return result;
}

absl::StatusOr<PlannedOp> PlanEinsum(absl::string_view equation, Inputs operands) {
  if (operands.empty()) return RuntimeError(kOp, "einsum(): must provide at least one operand");
  TENSORD_ASSIGN_OR_RETURN(Equation e, Parse(equation, operands));
  Composition c(operands);
  std::vector<Term> terms;
  for (size_t i = 0; i < operands.size(); ++i) {
    TENSORD_ASSIGN_OR_RETURN(Term term, Unique({operands[i], e.inputs[i]}, i));
    terms.push_back(std::move(term));
  }
  // As ATen: each letter's size agrees across the operands, taken in order (1 broadcasts).
  std::vector<int64_t> seen(kEllipsis, 1);
  for (size_t i = 0; i < terms.size(); ++i) {
    for (size_t k = 0; k < terms[i].labels.size(); ++k) {
      const int l = terms[i].labels[k];
      if (l >= kEllipsis) continue;
      const int64_t n = terms[i].t.sizes()[k];
      if (seen[l] == 1) {
        seen[l] = n;
      } else if (n != 1 && n != seen[l]) {
        return RuntimeError(kOp, absl::StrCat("einsum(): subscript ", LabelChar(l), " has size ",
                                              n, " for operand ", i, " which does not broadcast "
                                              "with previously seen size ", seen[l]));
      }
    }
  }
  if (terms.size() == 1) {
    // As ATen: the operand permuted to the output's labels then the others, which are summed
    // (a view when there are none).
    DimVector perm;
    for (int l : e.output) perm.push_back(Position(terms[0].labels, l));
    std::vector<int64_t> summed;
    for (size_t d = 0; d < terms[0].labels.size(); ++d) {
      if (Has(e.output, terms[0].labels[d])) continue;
      summed.push_back(static_cast<int64_t>(perm.size()));
      perm.push_back(static_cast<int64_t>(d));
    }
    TENSORD_ASSIGN_OR_RETURN(Tensor out, Permute(terms[0].t, perm));
    if (!summed.empty()) {
      TENSORD_ASSIGN_OR_RETURN(out, c.Op1("sum", {out}, Attrs().Set("dim", summed)));
    }
    return std::move(c).Finish({out});
  }
  // The labels needed outside terms [from, to): the output's and those of the other terms.
  const auto needed_outside = [&](size_t from, size_t to) {
    Labels need = e.output;
    for (size_t k = 0; k < terms.size(); ++k) {
      if (k >= from && k < to) continue;
      need.insert(need.end(), terms[k].labels.begin(), terms[k].labels.end());
    }
    return need;
  };
  // Each operand's labels that nothing else uses are summed away first.
  for (size_t k = 0; k < terms.size(); ++k) {
    const Labels need = needed_outside(k, k + 1);
    std::vector<int64_t> gone;
    Labels kept;
    for (size_t d = 0; d < terms[k].labels.size(); ++d) {
      if (Has(need, terms[k].labels[d])) kept.push_back(terms[k].labels[d]);
      else gone.push_back(static_cast<int64_t>(d));
    }
    if (gone.empty()) continue;
    TENSORD_ASSIGN_OR_RETURN(terms[k].t, c.Op1("sum", {terms[k].t}, Attrs().Set("dim", gone)));
    terms[k].labels = kept;
  }
  Term acc = terms[0];
  for (size_t k = 1; k < terms.size(); ++k) {
    // Shared labels survive the product when the output or a later operand has them.
    TENSORD_ASSIGN_OR_RETURN(acc, Pair(c, acc, terms[k], needed_outside(0, k + 1)));
  }
  // Ellipsis dims that only size-1 operands had, then the output's order.
  for (int l : e.output) {
    if (Has(acc.labels, l)) continue;
    TENSORD_ASSIGN_OR_RETURN(acc.t, Unsqueeze(acc.t, acc.t.dim()));
    acc.labels.push_back(l);
  }
  DimVector perm;
  for (int l : e.output) perm.push_back(Position(acc.labels, l));
  TENSORD_ASSIGN_OR_RETURN(Tensor out, Permute(acc.t, perm));
  return std::move(c).Finish({out});
}

}  // namespace

void RegisterEinsumOps(std::vector<OpDef>& ops) {
  OpDef def{"einsum", OpKind::kCompute, {"operands"},
            {Req("equation", AttrType::kString, "subscripts, as torch.einsum's")},
            "torch.einsum: the operands contracted as the equation says, pairwise left to "
            "right through batched matrix products (a pair with nothing to sum: a product).",
            false,
            [](Inputs in, AttrReader& a) -> absl::StatusOr<PlannedOp> {
              TENSORD_ASSIGN_OR_RETURN(std::string equation, a.String("equation"));
              return PlanEinsum(equation, in);
            }};
  def.variadic = true;
  ops.push_back(std::move(def));
}

}  // namespace tensord::engine
