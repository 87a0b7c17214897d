#include "profiling/expose_static_casts_to_fuser.h"

#include "ir/jitamp_ir.h"
#include "ops/static_casts.h"
#include "ir/static_scopes.h"

#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/csrc/jit/tensorexpr/lowerings.h>

#include <atomic>
#include <memory>
#include <optional>
#include <unordered_set>
#include <variant>
#include <vector>

// Whether the fusers fuse on CPU / CUDA now (libtorch exports them on
// every supported torch; the header ships from torch 2.8 on).
#if __has_include(<torch/csrc/jit/codegen/fuser/interface.h>)
#include <torch/csrc/jit/codegen/fuser/interface.h>
#else
namespace torch::jit {
TORCH_API bool canFuseOnCPU();
TORCH_API bool canFuseOnGPU();
} // namespace torch::jit
#endif

namespace jitamp {

using namespace torch::jit;

namespace {

const c10::Symbol kFusibleToFp16 = ops::named("fusible_to_fp16");
const c10::Symbol kFusibleToFp32 = ops::named("fusible_to_fp32");

std::atomic<bool>& fuserCastsFlag() {
  static std::atomic<bool> enabled{false}; // expose_static_casts_to_fuser.h: opt-in for now
  return enabled;
}

// Tells the TensorExpr fuser of the fusible casts, the first time a graph
// is optimized (when every op is registered); whether it knows them. Their
// lowering is the fuser's own for aten::_autocast_to_reduced_precision (a
// conversion of its first input to the dtype it is given), to the cast's
// `dtype`.
bool fuserKnowsCasts() {
  static const bool known = [] {
    const tensorexpr::NNCLoweringFunction convert =
        tensorexpr::getStandardLoweringFor(
            "aten::_autocast_to_reduced_precision(Tensor(a) self, bool cuda_enabled, bool cpu_enabled, ScalarType cuda_dtype, ScalarType cpu_dtype) -> Tensor(a)");
    if (!convert) {
      return false;
    }
    const tensorexpr::NNCLoweringFunction lowering =
        [convert](
            const std::vector<tensorexpr::ArgValue>& inputs,
            const std::vector<tensorexpr::ExprHandle>& shape,
            const std::vector<tensorexpr::ExprHandle>& strides,
            const std::optional<c10::ScalarType>& /*output_type*/,
            at::Device device) {
          const auto dtype =
              static_cast<c10::ScalarType>(std::get<int64_t>(inputs.at(2)));
          return convert({inputs.at(0)}, shape, strides, dtype, device);
        };
    for (const char* schema : {kFusibleToFp16Schema, kFusibleToFp32Schema}) {
      const auto op = getOperatorForLiteral(schema);
      TORCH_INTERNAL_ASSERT(op, "jitamp: ", schema, " is not registered");
      tensorexpr::getNNCLoweringRegistry().insert(op->schema(), lowering);
    }
    tensorexpr::getCustomOperatorSet().insert(
        {kFusibleToFp16Schema, kFusibleToFp32Schema});
    return true;
  }();
  return known;
}

// Whether the fuser fuses on `device` now: elsewhere the cast stays as it
// is, so that a plan that fuses nothing reads as before.
bool fusesOn(const c10::Device& device) {
  return (device.is_cpu() && canFuseOnCPU()) ||
      (device.is_cuda() && canFuseOnGPU());
}

class CastExposer {
 public:
  explicit CastExposer(std::shared_ptr<Graph> graph)
      : graph_(std::move(graph)) {}

  bool run() {
    exposeInBlock(graph_->block());
    return changed_;
  }

 private:
  void exposeInBlock(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it; // the node may be replaced below
      if (scopes_.track(node) || hasTaskSubgraph(node)) {
        continue;
      }
      scopes_.walkBlocks(node, [this](Block* sub) { exposeInBlock(sub); });
      const bool cast = node->kind() == ops::kToFp16 || node->kind() == ops::kToFp32;
      if (cast && node->inputs().size() == 3 &&
          node->input(0)->type()->kind() == c10::TypeKind::TensorType) {
        expose(node);
      }
    }
  }

  void expose(Node* cast) {
    const Node* profile = cast->input(0)->node();
    if (profile->kind() != prim::profile ||
        !profile->hasAttribute(attr::profiled_type)) {
      return;
    }
    const auto type = profile->ty(attr::profiled_type)->cast<c10::TensorType>();
    if (!type || !type->scalarType() || !type->device() ||
        type->requiresGrad().value_or(true) || !fusesOn(*type->device())) {
      return;
    }
    const auto devices = toIValue(cast->input(1));
    if (!devices || !devices->isString() || !staysInItsScope(cast)) {
      return;
    }
    std::optional<at::ScalarType> target;
    try {
      target = StaticCastDtype(
          cast->kind() == ops::kToFp16,
          *type->scalarType(),
          *type->device(),
          devices->toStringRef(),
          scopes_);
    } catch (const c10::Error&) {
      return; // the cast raises at run time, if it runs
    }
    if (!target || writtenTo(cast->input(0)) || writtenTo(cast->output())) {
      return;
    }
    hoistCallerRegion(cast->input(2));
    WithInsertPoint guard(cast);
    Value* dtype = graph_->insertConstant(static_cast<int64_t>(*target));
    Node* fusible = graph_->insertNode(graph_->create(
        cast->kind() == ops::kToFp16 ? kFusibleToFp16 : kFusibleToFp32,
        {cast->input(0), cast->input(1), dtype, cast->input(2)}));
    fusible->output()->setType(cast->output()->type());
    fusible->setSourceRange(cast->sourceRange());
    GRAPH_UPDATE("Showing ", *cast, " to the fuser as ", *fusible);
    cast->output()->replaceAllUsesWith(fusible->output());
    cast->destroy();
    changed_ = true;
  }

  // Whether every fusion group the fuser may make of the cast sits in the
  // cast's innermost scope, where a group's fallback (the unfused nodes,
  // run where the group is) reads the same thread state as the cast. The
  // fuser moves a group's producers down to it and a group down to a
  // consumer. So: no reader of the cast's result (looking through profile
  // nodes) is a node the fuser takes (the cast's op: a matmul, a norm, a
  // reduction), and every node the fuser takes on the way back from its
  // input is inside the scope already.
  bool staysInItsScope(Node* cast) {
    const OpenScope* scope = scopes_.innermost();
    if (scope == nullptr) {
      return false;
    }
    if (readByFusibleNode(cast->output())) {
      return false;
    }
    const Node* enter = scope->guard->node();
    std::vector<Value*> pending = {cast->input(0)};
    std::unordered_set<const Node*> seen;
    while (!pending.empty()) {
      Value* value = pending.back();
      pending.pop_back();
      Node* producer = value->node();
      if (!seen.insert(producer).second) {
        continue;
      }
      if (producer->kind() == prim::profile) {
        pending.push_back(producer->input(0));
        continue;
      }
      if (!tensorexpr::isSupported(producer)) {
        continue; // the fuser stops here
      }
      if (!isInside(producer, enter)) {
        return false;
      }
      for (Value* input : producer->inputs()) {
        if (input->type()->kind() == c10::TypeKind::TensorType) {
          pending.push_back(input);
        }
      }
    }
    return true;
  }

  // The token of a callee's caller region (a constant 0 that CSE cannot
  // merge; nothing reads it) made where the callee was inlined: moved up
  // to just after the innermost scope's enter, or to the top of its block,
  // so that the fuser can move the cast's producers down to the cast past
  // it.
  void hoistCallerRegion(Value* region) {
    Node* token = region->node();
    if (!isCallerRegion(token)) {
      return;
    }
    const Node* enter = scopes_.innermost()->guard->node();
    Block* block = token->owningBlock();
    if (enter->owningBlock() == block) {
      if (token->isAfter(enter)) {
        token->moveAfter(const_cast<Node*>(enter));
      }
    } else {
      token->moveBefore(block->nodes().front());
    }
  }

  static bool readByFusibleNode(Value* value) {
    for (const Use& use : value->uses()) {
      if (use.user->kind() == prim::profile) {
        if (readByFusibleNode(use.user->output())) {
          return true;
        }
      } else if (tensorexpr::isSupported(use.user)) {
        return true;
      }
    }
    return false;
  }

  // Whether `node` comes after `enter` in `enter`'s block, or in a block
  // nested in a node that does.
  static bool isInside(Node* node, const Node* enter) {
    while (node->owningBlock() != enter->owningBlock()) {
      node = node->owningBlock()->owningNode();
      if (node == nullptr) {
        return false;
      }
    }
    return node->isAfter(enter);
  }

  bool writtenTo(Value* value) {
    if (!alias_db_) {
      alias_db_ = std::make_unique<AliasDb>(graph_);
    }
    return alias_db_->hasWriters(value);
  }

  std::shared_ptr<Graph> graph_;
  StaticScopes scopes_;
  std::unique_ptr<AliasDb> alias_db_; // of the graph as the pass found it
  bool changed_ = false;
};


} // namespace

bool ExposeStaticCastsToFuser(const std::shared_ptr<Graph>& graph) {
  const bool changed = CastExposer(graph).run();
  if (changed) {
    GRAPH_DUMP("After showing static casts to the fuser:", graph);
  }
  return changed;
}

bool FuserCastsEnabled() {
  return fuserCastsFlag().load() && tensorExprFuserEnabled() && fuserKnowsCasts();
}

bool SetFuserCastsEnabled(bool enabled) {
  return fuserCastsFlag().exchange(enabled);
}

} // namespace jitamp
