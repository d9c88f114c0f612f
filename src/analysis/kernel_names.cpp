#include "analysis/kernel_names.h"

#include <cctype>
#include <vector>

namespace layoutprof {

namespace {

// The kernel's template arguments, split at the top level: "<__half, __half, float, bool=1, bool=0>".
std::vector<std::string> template_args(std::string_view name) {
  std::vector<std::string> args;
  const size_t open = name.find('<');
  const size_t paren = name.find('(');
  if (open == std::string_view::npos || (paren != std::string_view::npos && paren < open)) return args;
  int depth = 0;
  std::string current;
  for (size_t i = open; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' && depth++ == 0) continue;
    if (c == '>' && --depth == 0) {
      args.push_back(current);
      return args;
    }
    if (c == ',' && depth == 1) {
      args.push_back(current);
      current.clear();
      continue;
    }
    if (!(c == ' ' && current.empty())) current += c;
  }
  return {};  // unbalanced: not a signature
}

bool is_bool_arg(const std::string& a) {
  return a == "true" || a == "false" || a == "bool=1" || a == "bool=0" || a == "1" || a == "0";
}

// cuDNN's transposes take <src type, dst type, compute type, bool, bool[, (cudnnKernelDataType_t)N]>
// (genericTranspose_kernel: <src, dst, compute, bool, (cudnnKernelDataType_t)N>).
bool cudnn_signature(const std::vector<std::string>& args) {
  if (args.size() < 4) return false;
  size_t bools = 0;
  bool data_type = false;
  for (size_t i = 3; i < args.size(); ++i) {
    bools += is_bool_arg(args[i]);
    data_type = data_type || args[i].find("cudnnKernelDataType_t") != std::string::npos;
  }
  return bools >= 2 || (bools >= 1 && data_type);
}

bool cudnn_scope(const std::string& scope) {
  return scope.empty() || scope == "cudnn::ops" || scope == "cudnn::engines_precompiled" || scope == "cudnn";
}

// Lower-case tokens of the name split at '_' and other non-alphanumerics.
std::vector<std::string> tokens(std::string_view name) {
  std::vector<std::string> out;
  std::string t;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!t.empty()) {
      out.push_back(t);
      t.clear();
    }
  }
  if (!t.empty()) out.push_back(t);
  return out;
}

// The layout a kernel's name says it computes in: the last of its layout tokens (xmma's
// "nhwckrsc_nhwc" names the filter's layout, then the output's), or cuDNN's template argument
// cudnnTensorFormat_t (0 NCHW, 1 NHWC).
std::string layout_in_name(std::string_view name) {
  for (const char* fmt : {"cudnnTensorFormat_t=", "(cudnnTensorFormat_t)"}) {
    const size_t at = name.find(fmt);
    if (at == std::string_view::npos) continue;
    const size_t v = at + std::string_view(fmt).size();
    if (v < name.size() && name[v] == '1') return "nhwc";
    if (v < name.size() && name[v] == '0') return "nchw";
  }
  const size_t paren = name.find('(');
  const std::string_view head = name.substr(0, paren);  // not the parameters' types
  std::string found;
  for (const std::string& t : tokens(head))
    if (t == "nhwc" || t == "nchw") found = t;
  return found;
}

}  // namespace

std::string unqualified_kernel_name(std::string_view name, std::string* scope) {
  size_t end = name.size();
  for (char stop : {'<', '('}) {
    const size_t at = name.find(stop);
    if (at != std::string_view::npos && at < end) end = at;
  }
  std::string_view head = name.substr(0, end);
  const size_t space = head.rfind(' ');  // the return type: "void "
  if (space != std::string_view::npos) head = head.substr(space + 1);
  const size_t colons = head.rfind("::");
  if (scope) *scope = colons == std::string_view::npos ? "" : std::string(head.substr(0, colons));
  return std::string(colons == std::string_view::npos ? head : head.substr(colons + 2));
}

KernelLayout classify_kernel_name(std::string_view name) {
  KernelLayout k;
  std::string scope;
  const std::string base = unqualified_kernel_name(name, &scope);
  const bool transpose = base == "nchwToNhwcKernel" || base == "nhwcToNchwKernel" || base == "genericTranspose_kernel";
  if (transpose && cudnn_scope(scope) && cudnn_signature(template_args(name))) {
    k.conversion = true;
    if (base == "nchwToNhwcKernel") {
      k.from = "nchw";
      k.to = "nhwc";
    } else if (base == "nhwcToNchwKernel") {
      k.from = "nhwc";
      k.to = "nchw";
    }
    return k;
  }
  if (!transpose) k.computes_in = layout_in_name(name);
  return k;
}

}  // namespace layoutprof
