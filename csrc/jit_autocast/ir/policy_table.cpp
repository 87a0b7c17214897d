// The op policy table and its check against the installed torch. See
// policy_table.h.
#include "ir/policy_table.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/jit_log.h>

#include <map>
#include <set>
#include <mutex>
#include <unordered_map>

namespace jitamp {
namespace {

using P = CastPolicy;

struct Row {
  const char* name; // "aten::conv2d"
  const char* overload; // "padding", or "" for the default overload
  CastPolicy cpu;
  CastPolicy cuda;
  // Implied rows: the op ("aten::nll_loss", default overload) that has the
  // autocast kernel eager reaches through this one; nullptr otherwise.
  const char* via = nullptr;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
#define JITAMP_POLICY(name, overload, cpu, cuda) {name, overload, P::cpu, P::cuda},
#define JITAMP_VARIES(name, overload, device, where)
#include "ir/policy_table_generated.inc"
#undef JITAMP_VARIES
#undef JITAMP_POLICY

      // Implied rows: ops TorchScript calls that have no autocast kernel of
      // their own, where eager reaches one underneath. The IR gets the cast
      // (so the JIT's autodiff and fusers see the dtypes that run).
      // F.nll_loss: eager and script both call nll_loss_nd, which dispatches
      // to nll_loss / nll_loss2d (fp32 on both devices).
      {"aten::nll_loss_nd", "", P::Fp32, P::Fp32, "aten::nll_loss"},
      // F.interpolate: the .vec overloads (eager and script alike) always
      // decompose to the default overloads (fp32 on CUDA).
      {"aten::upsample_nearest1d", "vec", P::None, P::Fp32, "aten::upsample_nearest1d"},
      {"aten::upsample_nearest2d", "vec", P::None, P::Fp32, "aten::upsample_nearest2d"},
      {"aten::upsample_nearest3d", "vec", P::None, P::Fp32, "aten::upsample_nearest3d"},
      {"aten::_upsample_nearest_exact1d", "vec", P::None, P::Fp32, "aten::_upsample_nearest_exact1d"},
      {"aten::_upsample_nearest_exact2d", "vec", P::None, P::Fp32, "aten::_upsample_nearest_exact2d"},
      {"aten::_upsample_nearest_exact3d", "vec", P::None, P::Fp32, "aten::_upsample_nearest_exact3d"},
      {"aten::upsample_linear1d", "vec", P::None, P::Fp32, "aten::upsample_linear1d"},
      {"aten::upsample_bilinear2d", "vec", P::None, P::Fp32, "aten::upsample_bilinear2d"},
      {"aten::_upsample_bilinear2d_aa", "vec", P::None, P::Fp32, "aten::_upsample_bilinear2d_aa"},
      {"aten::upsample_trilinear3d", "vec", P::None, P::Fp32, "aten::upsample_trilinear3d"},
      {"aten::upsample_bicubic2d", "vec", P::None, P::Fp32, "aten::upsample_bicubic2d"},
      {"aten::_upsample_bicubic2d_aa", "vec", P::None, P::Fp32, "aten::_upsample_bicubic2d_aa"},
      // torch.index_put in TorchScript: a JIT-only overload taking Tensor[]
      // indices, which calls aten::index_put (promote on CUDA).
      {"aten::index_put", "hacked_twin", P::None, P::Promote, "aten::index_put"},
      // Not here: F.cross_entropy on CUDA (no kernel of its own: eager
      // reaches log_softmax with the half input and its fp32_set_opt_dtype
      // policy, which a cast to float32 first does not reproduce bit for
      // bit); aten::pad (whether it reaches reflection_pad*/replication_pad*
      // depends on its mode and the input's rank at run time); einsum on CPU
      // (whether it reaches bmm depends on the equation). The dispatcher
      // applies eager's policy to what they call, which is what matters for
      // the values.
  };
  return table;
}

struct VariesRow {
  const char* name;
  const char* overload;
  const char* device; // "cpu" or "cuda"
  const char* where; // "autocast on cuda in torch 2.12.0 to 2.15.0; not in ..."
};

const std::vector<VariesRow>& variesRows() {
  static const std::vector<VariesRow> table = {
#define JITAMP_POLICY(name, overload, cpu, cuda)
#define JITAMP_VARIES(name, overload, device, where) {name, overload, device, where},
#include "ir/policy_table_generated.inc"
#undef JITAMP_VARIES
#undef JITAMP_POLICY
  };
  return table;
}

// "name.overload", or "name" for the default overload: the tables' key.
std::string qualifiedName(const Row& row) {
  return qualified(row.name, row.overload);
}

c10::DispatchKey autocastKey(c10::DeviceType device) {
  return device == c10::DeviceType::CPU ? c10::DispatchKey::AutocastCPU
                                        : c10::DispatchKey::AutocastCUDA;
}

// Everything below is guarded by mutex().
std::mutex& mutex() {
  static std::mutex m;
  return m;
}

std::map<std::pair<std::string, c10::DeviceType>, bool>& overrides() {
  static std::map<std::pair<std::string, c10::DeviceType>, bool> m;
  return m;
}

bool hasAutocastKernel(const std::string& op, c10::DeviceType device) {
  auto found = overrides().find({op, device});
  if (found != overrides().end()) {
    return found->second;
  }
  const auto dot = op.find('.', op.find("::") + 2);
  const std::string name = op.substr(0, dot);
  const std::string overload =
      dot == std::string::npos ? "" : op.substr(dot + 1);
  const auto handle =
      c10::Dispatcher::singleton().findOp(c10::OperatorName(name, overload));
  return handle.has_value() &&
      handle->hasKernelForDispatchKey(autocastKey(device));
}

EffectivePolicy effectiveOf(const Row& row) {
  const std::string checked = row.via ? row.via : qualifiedName(row);
  EffectivePolicy out;
  if (row.cpu != P::None && hasAutocastKernel(checked, c10::DeviceType::CPU)) {
    out.cpu = row.cpu;
  }
  if (row.cuda != P::None &&
      hasAutocastKernel(checked, c10::DeviceType::CUDA)) {
    out.cuda = row.cuda;
  }
  return out;
}

std::vector<std::string> missingLocked(c10::DeviceType device) {
  std::unordered_map<std::string, bool> known;
  for (const Row& row : rows()) {
    if (!row.via) {
      known[qualifiedName(row)] = true;
    }
  }
  std::vector<std::string> missing;
  for (const auto& op : c10::Dispatcher::singleton().getAllOpNames()) {
    const std::string qualified_name = qualified(op.name, op.overload_name);
    if (!known.count(qualified_name) &&
        hasAutocastKernel(qualified_name, device)) {
      missing.push_back(qualified_name);
    }
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

using Index = std::unordered_map<std::string, EffectivePolicy>;

// "aten::conv2d.padding" -> effective policy; rebuilt after an override.
std::unique_ptr<Index>& indexSlot() {
  static std::unique_ptr<Index> index;
  return index;
}

const Index& indexLocked() {
  auto& index = indexSlot();
  if (!index) {
    index = std::make_unique<Index>();
    for (const Row& row : rows()) {
      const EffectivePolicy effective = effectiveOf(row);
      if (effective.cpu != P::None || effective.cuda != P::None) {
        (*index)[qualifiedName(row)] = effective;
      }
    }
    // Walking every registered op costs: only when the log asks for it.
    const bool log = torch::jit::is_enabled(
        __FILE__, torch::jit::JitLoggingLevels::GRAPH_DEBUG);
    for (auto device : {c10::DeviceType::CPU, c10::DeviceType::CUDA}) {
      if (!log) {
        break;
      }
      for (const auto& op : missingLocked(device)) {
        GRAPH_DEBUG(
            "jitamp: torch autocasts ",
            op,
            " on ",
            c10::DeviceTypeName(device, /*lower_case=*/true),
            " and jitamp's policy table has no row for it: the dispatcher "
            "applies eager's policy at run time, no cast in the IR");
      }
    }
  }
  return *index;
}

} // namespace

std::string qualified(const std::string& name, const std::string& overload) {
  return overload.empty() ? name : name + "." + overload;
}

EffectivePolicy effectivePolicy(
    const std::string& name,
    const std::string& overload) {
  std::lock_guard<std::mutex> lock(mutex());
  const auto& index = indexLocked();
  auto it = index.find(qualified(name, overload));
  return it == index.end() ? EffectivePolicy{} : it->second;
}

std::vector<TableRow> tableRows() {
  std::lock_guard<std::mutex> lock(mutex());
  std::vector<TableRow> out;
  for (const Row& row : rows()) {
    out.push_back(
        {qualifiedName(row), row.cpu, row.cuda, effectiveOf(row),
         row.via ? row.via : ""});
  }
  return out;
}

std::vector<std::string> opsMissingFromTable(c10::DeviceType device) {
  std::lock_guard<std::mutex> lock(mutex());
  return missingLocked(device);
}

OpKernels opKernels(
    const std::string& name,
    const std::string& overload,
    c10::DeviceType device) {
  OpKernels kernels;
  const auto handle =
      c10::Dispatcher::singleton().findOp(c10::OperatorName(name, overload));
  if (!handle) {
    return kernels;
  }
  kernels.in_dispatcher = true;
  std::lock_guard<std::mutex> lock(mutex());
  kernels.autocast = hasAutocastKernel(qualified(name, overload), device);
  kernels.composite_implicit = handle->hasKernelForDispatchKey(
      c10::DispatchKey::CompositeImplicitAutograd);
  return kernels;
}

bool isUncastComposite(const std::string& op) {
  static const std::set<std::string> ops = {
      "aten::flatten.using_ints",
      "aten::layer_norm",
      "aten::batch_norm",
      "aten::max_pool2d",
      "aten::dropout",
      "aten::reshape",
      "aten::softmax.int",
      "aten::adaptive_avg_pool2d",
      "aten::to.dtype",
      "aten::to.dtype_layout",
      "aten::to.device",
      "aten::to.other",
      "aten::type_as",
      "aten::contiguous",
      "aten::chunk",
      "aten::size.int",
      "aten::dim",
      "aten::numel",
      "aten::is_floating_point",
      "aten::expand_as",
      "aten::view_as",
      // views, shapes and scalars: no arithmetic to autocast
      "aten::narrow",
      "aten::unflatten.int",
      "aten::movedim.int",
      "aten::broadcast_tensors",
      "aten::item",
  };
  return ops.count(op) != 0;
}

bool kernelCallsAutocastOps(const std::string& op) {
  static const std::set<std::string> ops = {
      "aten::roll", // aten::cat
      "aten::isin.Tensor_Tensor", // aten::cat (sorting both)
      "aten::_chunk_cat", // aten::cat
      "aten::linalg_pinv.atol_rtol_tensor", // aten::matmul
      "aten::linalg_polar", // aten::matmul (torch 2.15)
      "aten::_scaled_mm", // aten::mm
      "aten::_scaled_mm_v2", // aten::mm
  };
  return ops.count(op) != 0;
}

std::string policyVariesAcrossTorch(
    const std::string& name,
    const std::string& overload,
    std::optional<c10::DeviceType> device) {
  // op -> its JITAMP_VARIES rows; an implied row's op -> the rows of the op
  // it reaches (eager's kernel is that op's).
  static const auto index = [] {
    std::unordered_map<std::string, std::vector<const VariesRow*>> out;
    for (const VariesRow& row : variesRows()) {
      out[qualified(row.name, row.overload)].push_back(&row);
    }
    for (const Row& row : rows()) {
      if (row.via) {
        auto found = out.find(row.via);
        if (found != out.end()) {
          out[qualifiedName(row)] = found->second;
        }
      }
    }
    return out;
  }();
  const auto found = index.find(qualified(name, overload));
  if (found == index.end()) {
    return "";
  }
  std::string where;
  for (const VariesRow* row : found->second) {
    if (!device ||
        std::string(row->device) ==
            c10::DeviceTypeName(*device, /*lower_case=*/true)) {
      where += (where.empty() ? "" : "; ") + std::string(row->where);
    }
  }
  return where;
}

bool inPolicyTable(const std::string& name, const std::string& overload) {
  static const std::set<std::string> ops = [] {
    std::set<std::string> out;
    for (const Row& row : rows()) {
      out.insert(qualifiedName(row));
    }
    return out;
  }();
  return ops.count(qualified(name, overload)) != 0;
}

bool autocastMayChange(const std::string& name, const std::string& overload) {
  const OpKernels cpu = opKernels(name, overload, c10::DeviceType::CPU);
  if (!cpu.in_dispatcher) {
    return false;
  }
  if (!policyVariesAcrossTorch(name, overload).empty()) {
    return true; // another torch may autocast it where this one does not
  }
  if (cpu.autocast ||
      opKernels(name, overload, c10::DeviceType::CUDA).autocast) {
    return true;
  }
  const std::string op = qualified(name, overload);
  return (cpu.composite_implicit && !isUncastComposite(op)) ||
      kernelCallsAutocastOps(op);
}

bool autocastMayChangeUncast(
    const std::string& name,
    const std::string& overload) {
  const OpKernels cpu = opKernels(name, overload, c10::DeviceType::CPU);
  if (!cpu.in_dispatcher) {
    return false;
  }
  if (!policyVariesAcrossTorch(name, overload).empty()) {
    return true; // another torch may autocast it where this one does not
  }
  const OpKernels cuda = opKernels(name, overload, c10::DeviceType::CUDA);
  const EffectivePolicy policy = effectivePolicy(name, overload);
  const std::string op = qualified(name, overload);
  const bool uncast = (!cpu.composite_implicit || isUncastComposite(op)) &&
      !kernelCallsAutocastOps(op);
  // Eager's kernel reaches the op uncast where its policy spells no cast.
  const auto reaches = [&](bool kernel, CastPolicy applied) {
    return kernel ? applied == P::None || applied == P::Banned : !uncast;
  };
  return reaches(cpu.autocast, policy.cpu) || reaches(cuda.autocast, policy.cuda);
}

void overrideAutocastKernelForTesting(
    const std::string& op,
    c10::DeviceType device,
    std::optional<bool> has_kernel) {
  std::lock_guard<std::mutex> lock(mutex());
  if (has_kernel.has_value()) {
    overrides()[{op, device}] = *has_kernel;
  } else {
    overrides().erase({op, device});
  }
  indexSlot().reset();
}

const char* policyName(CastPolicy policy) {
  switch (policy) {
    case P::None:
      return "none";
    case P::LowerPrecisionFp:
      return "lower_precision_fp";
    case P::Fp32:
      return "fp32";
    case P::Fp32SetOptDtype:
      return "fp32_set_opt_dtype";
    case P::Fp32AppendDtype:
      return "fp32_append_dtype";
    case P::Promote:
      return "promote";
    case P::Banned:
      return "banned";
  }
  return "?";
}

} // namespace jitamp
