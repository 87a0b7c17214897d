#include "passes/insert_smart_casts.h"

#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ir/static_scopes.h"
#include "ops/cast_ops.h"
#include "passes/fold_static_casts.h"

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

// overrideCastOrderForTesting: -1 none, 0 first argument first, 1 last.
int cast_order_override = -1;

// The order the pass inserts an op's casts in: eager's.
bool castsLastArgumentFirst() {
  return cast_order_override < 0 ? eagerCastsLastArgumentFirst()
                                 : cast_order_override == 1;
}

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

std::string devicesOf(const Node* cast) {
  for (const Value* input : cast->inputs()) {
    if (input->type()->kind() == TypeKind::StringType) {
      if (auto value = toIValue(input)) {
        return value->toStringRef();
      }
    }
  }
  return "";
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
    if (isJitampOp(node) || hasTaskSubgraph(node) || !node->blocks().empty()) {
      return;
    }
    const FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr || schema->is_mutable() || !mayChange(*schema)) {
      return;
    }
    for (Value* input : node->inputs()) {
      if (!maybe_constants_.maybe(input)) {
        return; // a cast's result, a barrier's, an activation's
      }
    }
    const auto index = barrierInput(node);
    if (!index || node->isNondeterministic()) {
      return;
    }
    Node* barrier = insertFoldBarrier(node, *index, currentRegion());
    maybe_constants_.record(barrier);
    if (log_updates_) {
      GRAPH_UPDATE("Keeping ", *node, " from constant folding");
    }
    changed_ = true;
  }

  // autocastMayChangeUncast (policy_table.h), asked once per operator.
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
      dropStaleCasts(node, *schema, policy);
    }
    for (const auto& [devices, applied] : byDevices(policy)) {
      applyPolicy(node, *schema, applied, devices);
    }
    if (had_casts) {
      orderCasts(node, *schema, policy);
    }
  }

  // A graph saved by a torch whose compiler orders eager's casts the other
  // way (eagerCastsLastArgumentFirst, cast_ops.h) carries its casts in that
  // order; the order decides the casts' autograd sequence numbers, and so
  // the order backward sums the gradients of a value an op reads twice.
  // The casts `node` reads, where they sit together just before it (as the
  // pass inserts them), go in the order applyPolicy inserts them in: device
  // set by device set (byDevices), and within one, argument by argument in
  // this torch's order. A promote cast orders its inputs at run time.
  void orderCasts(
      Node* node,
      const FunctionSchema& schema,
      const EffectivePolicy& policy) {
    struct Placed {
      Node* cast;
      size_t key;
    };
    const auto groups = byDevices(policy);
    const size_t n =
        std::min(node->inputs().size(), schema.arguments().size());
    const bool last_first = castsLastArgumentFirst();
    c10::SmallVector<Placed, 8> casts;
    for (size_t i = 0; i < n; ++i) {
      const size_t position = last_first ? n - 1 - i : i;
      for (Value* value = node->input(i); isSmartCast(value->node());
           value = value->node()->input(value->offset())) {
        Node* cast = value->node();
        if (cast->kind() != ops::kToFp16 && cast->kind() != ops::kToFp32) {
          return;
        }
        const std::string devices = devicesOf(cast);
        const auto group = std::find_if(
            groups.begin(), groups.end(), [&](const auto& entry) {
              return devices == entry.first;
            });
        if (group == groups.end()) {
          return;
        }
        const size_t key = static_cast<size_t>(group - groups.begin()) * n +
            position;
        const auto seen =
            std::find_if(casts.begin(), casts.end(), [&](const Placed& p) {
              return p.cast == cast;
            });
        if (seen == casts.end()) {
          casts.push_back({cast, key});
        } else {
          seen->key = std::min(seen->key, key); // one cast, read twice
        }
      }
    }
    if (casts.size() < 2) {
      return;
    }
    // Together, just before the op: nothing else runs between them.
    c10::SmallVector<Node*, 8> current;
    for (Node* prev = node->prev(); current.size() < casts.size();
         prev = prev->prev()) {
      const bool ours =
          std::any_of(casts.begin(), casts.end(), [&](const Placed& p) {
            return p.cast == prev;
          });
      if (!ours) {
        return;
      }
      current.insert(current.begin(), prev);
    }
    std::stable_sort(
        casts.begin(), casts.end(), [](const Placed& a, const Placed& b) {
          return a.key < b.key;
        });
    bool same = true;
    for (size_t k = 0; k < casts.size(); ++k) {
      same = same && casts[k].cast == current[k];
      // A cast stacked on another must stay after it.
      for (size_t later = k + 1; later < casts.size(); ++later) {
        for (const Value* input : casts[k].cast->inputs()) {
          if (input->node() == casts[later].cast) {
            return;
          }
        }
      }
    }
    if (same) {
      return;
    }
    for (const Placed& placed : casts) {
      placed.cast->moveBefore(node);
    }
    if (log_updates_) {
      GRAPH_UPDATE("Put the casts of ", *node, " in this torch's order");
    }
    changed_ = true;
  }

  // The device sets the casts name, each with its policy: one set where
  // both devices have the same.
  static c10::SmallVector<std::pair<const char*, CastPolicy>, 2> byDevices(
      const EffectivePolicy& policy) {
    if (policy.cpu == policy.cuda) {
      return {{"cpu,cuda", policy.cpu}};
    }
    return {{"cpu", policy.cpu}, {"cuda", policy.cuda}};
  }

  // A graph rewritten under another torch (a saved model, loaded here)
  // may carry casts that this torch's policy does not make: the op was
  // autocast there and is not here (torch versions differ: aten::rms_norm
  // on CUDA from 2.12 on, policyVariesAcrossTorch). An input of an op the
  // table has a row for, reached through such a cast, is read from its
  // source again (other readers of a shared cast, which freezing's CSE
  // makes, keep it; a cast left unread goes); applyPolicy then adds what
  // this torch's policy asks for. Casts of ops without a row are not the
  // pass's: freezing may have handed a cast to another op.
  void dropStaleCasts(
      Node* node,
      const FunctionSchema& schema,
      const EffectivePolicy& policy) {
    if (!inPolicyTable(schema.name(), schema.overload_name())) {
      return;
    }
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      bool stale = false;
      Value* source = node->input(i);
      while (isSmartCast(source->node())) {
        const Node* cast = source->node();
        stale = stale || !madeByPolicy(policy, i, cast->kind(), devicesOf(cast));
        source = cast->input(source->offset());
      }
      if (!stale) {
        continue;
      }
      Value* was = node->input(i);
      if (log_updates_) {
        GRAPH_UPDATE("Reading ", source->debugName(), " uncast in ", *node,
                     ": this torch's policy does not make its casts");
      }
      node->replaceInput(i, source);
      // The casts nothing reads now, from the one the op read.
      while (isSmartCast(was->node()) && !was->node()->hasUses()) {
        Node* cast = was->node();
        was = cast->input(was->offset());
        cast->destroy();
      }
      changed_ = true;
    }
  }

  // Whether applyPolicy, given `policy`, casts input `index` by `kind`
  // for `devices`.
  static bool madeByPolicy(
      const EffectivePolicy& policy,
      size_t index,
      Symbol kind,
      const std::string& devices) {
    const auto makes = [&](CastPolicy applied) {
      switch (applied) {
        case CastPolicy::LowerPrecisionFp:
          return kind == ops::kToFp16;
        case CastPolicy::Fp32:
          return kind == ops::kToFp32;
        case CastPolicy::Fp32AppendDtype:
        case CastPolicy::Fp32SetOptDtype:
          return kind == ops::kToFp32 && index == 0;
        case CastPolicy::Promote:
          return kind == ops::kPromote;
        case CastPolicy::None:
        case CastPolicy::Banned:
          return false;
      }
      return false;
    };
    for (const auto& [named, applied] : byDevices(policy)) {
      if (devices == named && makes(applied)) {
        return true;
      }
    }
    return false;
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
        // In eager's order (eagerCastsLastArgumentFirst, cast_ops.h): each
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
    maybe_constants_.record(cast);
    if (log_updates_) {
      GRAPH_UPDATE("Inserted ", *cast, " for ", *before);
    }
    changed_ = true;
    return cast;
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
    TypePtr output_type;
    if (isTensor(formal) || (isOptionalTensor(formal) && isTensor(actual))) {
      output_type = TensorType::get();
    } else if (isOptionalTensor(formal)) {
      output_type = OptionalType::ofTensor();
    } else if (isTensorList(formal)) {
      output_type = ListType::ofTensors();
    } else {
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
    std::vector<size_t> indices;
    std::optional<size_t> list_index;
    for (size_t i = 0;
         i < node->inputs().size() && i < schema.arguments().size();
         ++i) {
      const TypePtr& formal = schema.arguments()[i].type();
      if (isTensor(formal)) {
        indices.push_back(i);
      } else if (isTensorList(formal) && !list_index) {
        list_index = i;
      }
    }
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

  // One constant per device set, at the top of the graph.
  Value* devicesConstant(const std::string& devices) {
    auto it = devices_constants_.find(devices);
    if (it != devices_constants_.end()) {
      return it->second;
    }
    WithInsertPoint guard(graph_.block()->nodes().front());
    Value* value = graph_.insertConstant(devices);
    devices_constants_.emplace(devices, value);
    return value;
  }

  Graph& graph_;
  std::vector<std::shared_ptr<Graph>>* tasks_;
  StaticScopes scopes_;
  Value* caller_region_ = nullptr;
  std::map<std::string, Value*> devices_constants_;
  PolicyCache policies_;
  std::unordered_map<const FunctionSchema*, bool> may_change_;
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

void overrideCastOrderForTesting(std::optional<bool> last_first) {
  cast_order_override = last_first ? static_cast<int>(*last_first) : -1;
}

} // namespace jitamp
