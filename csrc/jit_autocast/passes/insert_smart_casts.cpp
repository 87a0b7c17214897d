#include "passes/insert_smart_casts.h"

#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"
#include "ir/op_casts.h"
#include "ir/policy_table.h"
#include "ops/static_casts.h"
#include "ir/static_scopes.h"
#include "ops/cast_ops.h"

#include <c10/util/SmallVector.h>
#include <torch/csrc/jit/jit_log.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

bool isTensor(const TypePtr& type) {
  return type->kind() == TypeKind::TensorType;
}

bool isOptionalTensor(const TypePtr& type) {
  const auto opt = type->cast<OptionalType>();
  return opt && isTensor(opt->getElementType());
}

bool isTensorList(const TypePtr& type) {
  const auto list = type->cast<ListType>();
  return list && isTensor(list->getElementType());
}

// Is `value` already the output of cast `kind` for `devices`, possibly
// behind other smart casts? (A second run of the pass adds nothing.)
bool alreadyCast(const Value* value, Symbol kind, const std::string& devices) {
  while (isSmartCast(value->node())) {
    const Node* producer = value->node();
    if (producer->kind() == kind && devicesOf(producer) == devices) {
      return true;
    }
    value = producer->input(value->offset());
  }
  return false;
}

// The type of a cast's output for an argument of type `formal` given a
// value of type `actual`; nullptr where the argument is not one a cast
// takes.
TypePtr castOutputType(const TypePtr& formal, const TypePtr& actual) {
  if (isTensor(formal) || (isOptionalTensor(formal) && isTensor(actual))) {
    return TensorType::get();
  }
  if (isOptionalTensor(formal)) {
    return OptionalType::ofTensor();
  }
  if (isTensorList(formal)) {
    return ListType::ofTensors();
  }
  return nullptr;
}

// The arguments a promote cast may take: the Tensor ones, and the first
// Tensor[].
std::pair<std::vector<size_t>, std::optional<size_t>> promotedArguments(
    const Node* node,
    const FunctionSchema& schema) {
  std::vector<size_t> indices;
  std::optional<size_t> list_index;
  for (size_t i = 0; i < node->inputs().size() && i < schema.arguments().size();
       ++i) {
    const TypePtr& formal = schema.arguments()[i].type();
    if (isTensor(formal)) {
      indices.push_back(i);
    } else if (isTensorList(formal) && !list_index) {
      list_index = i;
    }
  }
  return {indices, list_index};
}

class CastInserter {
 public:
  CastInserter(Graph& graph, std::vector<std::shared_ptr<Graph>>* tasks)
      : graph_(graph), tasks_(tasks) {}

  bool run() {
    insertInBlock(graph_.block());
    return changed_;
  }

 private:
  // One walk in program order, following the open scopes, so that each
  // cast is tied to the innermost open scope (its region).
  void insertInBlock(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it;
      if (scopes_.track(node)) {
        maybe_constants_.record(node);
        continue;
      }
      maybe_constants_.enter(node);
      scopes_.walkBlocks(node, [this](Block* sub) { insertInBlock(sub); });
      insertCasts(node);
      keepFromFolding(node);
      maybe_constants_.record(node);
    }
  }

  // A barrier (fold_barriers.h) before an op whose result the autocast
  // state decides with no cast in the IR, where its inputs may all become
  // constants.
  void keepFromFolding(Node* node) {
    const auto index = inputToGuard(node);
    if (!index) {
      return;
    }
    Node* barrier = insertFoldBarrier(node, *index, currentRegion());
    maybe_constants_.record(barrier);
    if (log_updates_) {
      GRAPH_UPDATE("Keeping ", *node, " from constant folding");
    }
    changed_ = true;
  }

  // The input of `node` to guard: an op whose result the autocast state
  // may change with no cast in the IR (autocastMayChangeUncast), not
  // mutable, deterministic, whose inputs may all become constants.
  std::optional<size_t> inputToGuard(Node* node) {
    if (isJitampOp(node) || hasTaskSubgraph(node) || !node->blocks().empty()) {
      return std::nullopt;
    }
    const FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr || schema->is_mutable() || !mayChange(*schema)) {
      return std::nullopt;
    }
    for (Value* input : node->inputs()) {
      if (!maybe_constants_.maybe(input)) {
        return std::nullopt; // a cast's result, a barrier's, an activation's
      }
    }
    if (node->isNondeterministic()) {
      return std::nullopt;
    }
    return barrierInput(node);
  }

  // Asked once per operator.
  bool mayChange(const FunctionSchema& schema) {
    auto it = may_change_.find(&schema);
    if (it == may_change_.end()) {
      it = may_change_
               .emplace(
                   &schema,
                   autocastMayChangeUncast(
                       schema.name(), schema.overload_name()))
               .first;
    }
    return it->second;
  }

  void insertCasts(Node* node) {
    if (hasTaskSubgraph(node)) {
      if (tasks_ != nullptr) {
        tasks_->push_back(node->g(attr::Subgraph));
      }
      return;
    }
    if (isSmartCast(node)) {
      return;
    }
    const FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr) {
      return;
    }
    const EffectivePolicy policy = policies_.of(*schema);
    bool had_casts = false;
    for (const Value* input : node->inputs()) {
      had_casts = had_casts || isSmartCast(input->node());
    }
    // Casts already there: a graph rewritten before (under another torch,
    // when it is a saved model loaded here).
    if (had_casts) {
      changed_ |= dropCastsThisTorchDoesNotMake(node, *schema, policy);
    }
    for (const auto& [devices, applied] : castGroupsOf(policy)) {
      applyPolicy(node, *schema, applied, devices);
    }
    if (had_casts) {
      changed_ |= putCastsInThisTorchsOrder(node, *schema, policy);
    }
  }

  void applyPolicy(
      Node* node,
      const FunctionSchema& schema,
      CastPolicy policy,
      const std::string& devices) {
    switch (policy) {
      case CastPolicy::LowerPrecisionFp:
      case CastPolicy::Fp32: {
        const Symbol kind = policy == CastPolicy::LowerPrecisionFp
            ? ops::kToFp16
            : ops::kToFp32;
        // In eager's order (eagerCastsLastArgumentFirst, ir/op_casts.h): each
        // cast goes in just before the op.
        const size_t n =
            std::min(node->inputs().size(), schema.arguments().size());
        const bool last_first = castsLastArgumentFirst();
        for (size_t k = 0; k < n; ++k) {
          const size_t i = last_first ? n - 1 - k : k;
          castInput(node, i, schema.arguments()[i].type(), kind, devices);
        }
        return;
      }
      case CastPolicy::Fp32AppendDtype:
        castInput(
            node, 0, schema.arguments()[0].type(), ops::kToFp32, devices);
        return;
      case CastPolicy::Fp32SetOptDtype:
        castUnlessDtype(node, schema, devices);
        return;
      case CastPolicy::Promote:
        promoteInputs(node, schema, devices);
        return;
      case CastPolicy::None:
      case CastPolicy::Banned: // eager's dispatcher raises, as in eager
        return;
    }
  }

  // The token of the region at the current point of the walk.
  Value* currentRegion() {
    if (const OpenScope* scope = scopes_.innermost()) {
      return scope->region;
    }
    if (caller_region_ == nullptr) {
      caller_region_ = insertCallerRegion(graph_);
      maybe_constants_.record(caller_region_->node());
      changed_ = true;
    }
    return caller_region_;
  }

  // A smart cast before `before`, with the current region's token, its
  // output types and the source range of the op it is for.
  Node* createCast(
      Symbol kind,
      at::ArrayRef<Value*> inputs,
      const std::vector<TypePtr>& output_types,
      Node* before) {
    c10::SmallVector<Value*, 8> with_region(inputs.begin(), inputs.end());
    with_region.push_back(currentRegion());
    WithInsertPoint guard(before);
    Node* cast = graph_.create(kind, with_region, output_types.size());
    for (size_t i = 0; i < output_types.size(); ++i) {
      cast->output(i)->setType(output_types[i]);
    }
    cast->setSourceRange(before->sourceRange());
    graph_.insertNode(cast);
    if (log_updates_) {
      GRAPH_UPDATE("Inserted ", *cast, " for ", *before);
    }
    maybe_constants_.record(cast);
    changed_ = true;
    return cast;
  }

  // The `devices` constant: one per device set, at the top of the graph.
  Value* devicesConstant(const std::string& devices) {
    auto it = devices_constants_.find(devices);
    if (it == devices_constants_.end()) {
      WithInsertPoint guard(graph_.block()->nodes().front());
      it = devices_constants_.emplace(devices, graph_.insertConstant(devices))
               .first;
    }
    return it->second;
  }

  void castInput(
      Node* node,
      size_t index,
      const TypePtr& formal,
      Symbol kind,
      const std::string& devices) {
    Value* value = node->input(index);
    const TypePtr& actual = value->type();
    if (actual->kind() == TypeKind::NoneType ||
        alreadyCast(value, kind, devices)) {
      return;
    }
    if (kind != ops::kPromote && value->node()->kind() == prim::Constant &&
        isTensor(actual)) {
      // A frozen weight whose cast FoldStaticCasts has done (or found to
      // do nothing) here: casting it again would do nothing either.
      const auto constant = toIValue(value);
      if (constant && constant->isTensor() &&
          StaticCastIsIdentity(
              kind == ops::kToFp16, constant->toTensor(), devices, scopes_)) {
        return;
      }
    }
    const TypePtr output_type = castOutputType(formal, actual);
    if (output_type == nullptr) {
      return;
    }
    Node* cast =
        createCast(kind, {value, devicesConstant(devices)}, {output_type}, node);
    node->replaceInput(index, cast->output());
  }

  // fp32_set_opt_dtype (softmax, sum, cumsum, ... on CUDA): float32 unless
  // the call gives a dtype.
  void castUnlessDtype(
      Node* node,
      const FunctionSchema& schema,
      const std::string& devices) {
    const auto index = schema.argumentIndexWithName("dtype");
    if (!index || static_cast<size_t>(*index) >= node->inputs().size() ||
        node->input(*index)->type()->kind() == TypeKind::NoneType) {
      castInput(
          node, 0, schema.arguments()[0].type(), ops::kToFp32, devices);
      return;
    }
    Value* dtype = node->input(*index);
    if (auto constant = toIValue(dtype); constant && !constant->isNone()) {
      return; // an explicit dtype: eager leaves the op alone
    }
    Value* self = node->input(0);
    if (!isTensor(self->type()) || alreadyCast(self, ops::kToFp32, devices)) {
      return;
    }
    Node* cast = createCast(
        ops::kToFp32,
        {self, devicesConstant(devices), dtype},
        {TensorType::get()},
        node);
    node->replaceInput(0, cast->output());
  }

  // promote: eager picks the widest dtype among the Tensor and Tensor[]
  // arguments, then casts those and the `Tensor?` ones to it (a `Tensor?`
  // has no say: bilinear's bias). The IR cast covers the Tensor arguments,
  // or the one Tensor[] (cat, stack); `Tensor?` ones are left to the op's
  // own autocast kernel, which casts them to the same dtype at run time.
  void promoteInputs(
      Node* node,
      const FunctionSchema& schema,
      const std::string& devices) {
    const auto [indices, list_index] = promotedArguments(node, schema);
    if (indices.empty() && list_index) {
      castInput(
          node,
          *list_index,
          schema.arguments()[*list_index].type(),
          ops::kPromote,
          devices);
      return;
    }
    // index_put.hacked_twin's Tensor[] indices are integer tensors: eager's
    // promote never looks at them.
    if (indices.size() < 2 || indices.size() > 4 ||
        alreadyCast(node->input(indices[0]), ops::kPromote, devices)) {
      return;
    }
    std::vector<Value*> inputs;
    std::vector<TypePtr> types;
    for (size_t i : indices) {
      inputs.push_back(node->input(i));
      types.push_back(TensorType::get());
    }
    inputs.push_back(devicesConstant(devices));
    Node* cast = createCast(ops::kPromote, inputs, types, node);
    for (size_t k = 0; k < indices.size(); ++k) {
      node->replaceInput(indices[k], cast->output(k));
    }
  }

  Graph& graph_;
  std::vector<std::shared_ptr<Graph>>* tasks_;
  StaticScopes scopes_;
  Value* caller_region_ = nullptr;
  PolicyCache policies_;
  std::unordered_map<const FunctionSchema*, bool> may_change_; // mayChange
  std::map<std::string, Value*> devices_constants_;
  MaybeConstants maybe_constants_;
  // TorchScript's log check builds three strings from the file name at
  // each use: asked once per run, not once per cast.
  const bool log_updates_ = GRAPH_UPDATE_ENABLED;
  bool changed_ = false;
};

} // namespace

bool InsertSmartCasts(
    const std::shared_ptr<Graph>& graph,
    std::vector<std::shared_ptr<Graph>>* tasks) {
  return CastInserter(*graph, tasks).run();
}

} // namespace jitamp
