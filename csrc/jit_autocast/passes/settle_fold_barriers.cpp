#include "passes/settle_fold_barriers.h"

#include "ir/block_walk.h"
#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ops/static_casts.h"
#include "ir/static_scopes.h"

#include <ATen/ops/equal.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/constant_propagation.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Rounds of settling: each may make the next one's inputs constants.
constexpr int kMaxSettleRounds = 8;

// Whether two results of an op are the same bits: tensors of the same
// dtype, device, sizes and strides whose bytes are equal (NaNs included);
// lists and tuples element by element; None, ints, bools, strings equal;
// floats bit for bit. Anything else: not known to be the same.
bool sameBits(const c10::IValue& a, const c10::IValue& b) {
  if (a.isTensor() && b.isTensor()) {
    const at::Tensor& x = a.toTensor();
    const at::Tensor& y = b.toTensor();
    if (!x.defined() || !y.defined()) {
      return x.defined() == y.defined();
    }
    if (x.scalar_type() != y.scalar_type() || x.device() != y.device() ||
        x.layout() != at::kStrided || y.layout() != at::kStrided ||
        x.sizes() != y.sizes() || x.strides() != y.strides()) {
      return false;
    }
    try {
      const auto bytes = [](const at::Tensor& t) {
        return t.contiguous().reshape({-1}).view(at::kByte);
      };
      return at::equal(bytes(x), bytes(y));
    } catch (const std::exception&) {
      return false; // quantized, sparse, ...: not compared
    }
  }
  const auto same_elements = [](c10::ArrayRef<c10::IValue> x,
                                 c10::ArrayRef<c10::IValue> y) {
    return x.size() == y.size() &&
        std::equal(x.begin(), x.end(), y.begin(), sameBits);
  };
  if (a.isList() && b.isList()) {
    return same_elements(a.toListRef(), b.toListRef());
  }
  if (a.isTuple() && b.isTuple()) {
    return same_elements(
        a.toTupleRef().elements().asArrayRef(),
        b.toTupleRef().elements().asArrayRef());
  }
  if (a.isDouble() && b.isDouble()) {
    const double x = a.toDouble();
    const double y = b.toDouble();
    return std::memcmp(&x, &y, sizeof(double)) == 0;
  }
  if (a.isNone() || a.isInt() || a.isBool() || a.isString()) {
    return a.tagKind() == b.tagKind() &&
        (a.isNone() || (a.isInt() && a.toInt() == b.toInt()) ||
         (a.isBool() && a.toBool() == b.toBool()) ||
         (a.isString() && a.toStringRef() == b.toStringRef()));
  }
  return false;
}

// The device types of the tensors in `value` (lists and tuples entered).
void deviceTypesOf(const c10::IValue& value, std::set<c10::DeviceType>& out) {
  if (value.isTensor()) {
    if (value.toTensor().defined()) {
      out.insert(value.toTensor().device().type());
    }
  } else if (value.isList()) {
    for (const auto& element : value.toListRef()) {
      deviceTypesOf(element, out);
    }
  } else if (value.isTuple()) {
    for (const auto& element : value.toTupleRef().elements()) {
      deviceTypesOf(element, out);
    }
  }
}

// Every state an op whose tensors are on `device_types` may run in at the
// point `scopes` describes: a device type's static state, or, in the
// caller's, off and on with each dtype eager allows.
std::vector<DeviceStates> statesItMayRunIn(
    const std::set<c10::DeviceType>& device_types,
    const StaticScopes& scopes) {
  std::vector<DeviceStates> combinations = {{}};
  for (const auto device_type : device_types) {
    std::vector<DeviceAutocast> options;
    if (const auto state = scopes.stateOf(device_type)) {
      options = {*state};
    } else {
      options = {
          {false, at::kBFloat16}, {true, at::kBFloat16}, {true, at::kHalf}};
    }
    std::vector<DeviceStates> extended;
    for (const auto& partial : combinations) {
      for (const auto& option : options) {
        DeviceStates next = partial;
        next[device_type] = option;
        extended.push_back(std::move(next));
      }
    }
    combinations = std::move(extended);
  }
  return combinations;
}

// `node` run on `inputs` under `states`; nullopt where it raises.
std::optional<Stack> runUnder(
    Node* node,
    const Stack& inputs,
    const DeviceStates& states) {
  StateForCast state(states);
  Stack stack = inputs;
  try {
    node->getOperation()(stack);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return stack;
}

// SettleFoldBarriers, round by round.
class DependentOpSettler {
 public:
  explicit DependentOpSettler(Graph& graph) : graph_(graph) {}

  bool run() {
    bool changed = false;
    for (int round = 0; round < kMaxSettleRounds; ++round) {
      scopes_ = StaticScopes();
      maybe_constants_ = MaybeConstants();
      folded_ = false;
      std::shared_ptr<Graph> graph = graph_.shared_from_this();
      written_.clear();
      {
        const AliasDb aliases(graph);
        collectWritten(graph_.block(), aliases);
      }
      settleIn(graph_.block());
      folded_any_ |= folded_;
      const bool propagated =
          ConstantPropagation(graph, /*ignore_custom_classes=*/true);
      changed |= folded_ || barriers_changed_ || propagated;
      barriers_changed_ = false;
      if (!folded_ && !propagated) {
        break;
      }
    }
    return changed;
  }

  // Whether run() did some op now.
  bool foldedOps() const {
    return folded_any_;
  }

 private:
  // The ops whose inputs or outputs something writes (asked of the graph
  // before this round changes it: an op done now would hand each call the
  // same constant, which the writer would change for the next).
  void collectWritten(Block* block, const AliasDb& aliases) {
    forEachNode(block, [&](Node* node) {
      if (node->blocks().empty() && !hasTaskSubgraph(node) &&
          node->kind() != prim::Constant && aliases.hasWriters(node)) {
        written_.insert(node);
      }
    });
  }

  void settleIn(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it; // the node may be destroyed below
      if (scopes_.track(node) || hasTaskSubgraph(node)) {
        maybe_constants_.record(node);
        continue;
      }
      maybe_constants_.enter(node);
      scopes_.walkBlocks(node, [this](Block* sub) { settleIn(sub); });
      if (!settle(node)) {
        maybe_constants_.record(node);
      }
    }
  }

  // Returns whether `node` was done now (and destroyed).
  bool settle(Node* node) {
    if (isJitampOp(node) || !node->blocks().empty()) {
      return false;
    }
    const FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr || schema->is_mutable()) {
      return false;
    }
    const Reach reach = reachOf(*schema);
    if (!reach.may_change || written_.count(node) != 0 ||
        node->isNondeterministic()) {
      return false; // (constant propagation never runs the last two either)
    }
    bool constant = true;
    for (Value* input : node->inputs()) {
      Value* value = throughBarrier(input);
      if (!maybe_constants_.maybe(value)) {
        if (hasFoldBarrier(node)) {
          removeFoldBarriers(node); // it can never be folded
          barriers_changed_ = true;
        }
        return false;
      }
      constant = constant && value->node()->kind() == prim::Constant;
    }
    if (constant && !reach.varies) {
      if (doNow(node)) {
        return true;
      }
    } else if (!reach.uncast) {
      // Its inputs are not constants yet. Where the policy casts them, they
      // come from smart casts, unless FoldStaticCasts made them constants
      // (then they are constants now) or the kernel leaves them alone.
      return false;
    }
    if (!hasFoldBarrier(node)) {
      if (const auto index = barrierInput(node)) {
        maybe_constants_.record(
            insertFoldBarrier(node, *index, regionHere()));
        barriers_changed_ = true;
      }
    }
    return false;
  }

  struct Reach {
    bool may_change; // autocastMayChange
    bool uncast; // autocastMayChangeUncast
    // policyVariesAcrossTorch: never done now, where another torch that
    // loads the model may autocast it otherwise
    bool varies;
  };

  Reach reachOf(const FunctionSchema& schema) {
    auto it = reach_.find(&schema);
    if (it == reach_.end()) {
      const auto& name = schema.name();
      const auto& overload = schema.overload_name();
      it = reach_
               .emplace(
                   &schema,
                   Reach{
                       autocastMayChange(name, overload),
                       autocastMayChangeUncast(name, overload),
                       !policyVariesAcrossTorch(name, overload).empty()})
               .first;
    }
    return it->second;
  }

  // The op `node`, run now on its constant inputs in every state it may
  // run in: replaced by its results where all give the same bits.
  bool doNow(Node* node) {
    Stack inputs;
    std::set<c10::DeviceType> device_types;
    for (Value* input : node->inputs()) {
      inputs.push_back(*toIValue(throughBarrier(input)));
      deviceTypesOf(inputs.back(), device_types);
    }
    std::optional<Stack> results;
    for (const auto& states : statesItMayRunIn(device_types, scopes_)) {
      std::optional<Stack> out = runUnder(node, inputs, states);
      if (!out || out->size() != node->outputs().size()) {
        return false; // it raises (at each call, as in eager) or misbehaves
      }
      if (!results) {
        results = std::move(out);
        continue;
      }
      for (size_t i = 0; i < out->size(); ++i) {
        if (!sameBits((*results)[i], (*out)[i])) {
          GRAPH_DEBUG(
              "Keeping ", *node, ": its result depends on the autocast state");
          return false;
        }
      }
    }
    std::vector<Value*> constants;
    {
      WithInsertPoint guard(graph_.block()->nodes().front());
      for (size_t i = 0; i < results->size(); ++i) {
        const auto constant = tryInsertConstant(graph_, (*results)[i]);
        if (!constant) {
          for (Value* made : constants) {
            made->node()->destroy();
          }
          return false;
        }
        if ((*results)[i].isNone()) {
          (*constant)->setType(node->output(i)->type());
        }
        constants.push_back(*constant);
      }
    }
    GRAPH_UPDATE("Doing ", *node, " now: every state gives the same bits");
    for (size_t i = 0; i < constants.size(); ++i) {
      node->output(i)->replaceAllUsesWith(constants[i]);
    }
    std::vector<Node*> barriers;
    for (Value* input : node->inputs()) {
      if (isFoldBarrier(input->node())) {
        barriers.push_back(input->node());
      }
    }
    node->destroy();
    for (Node* barrier : barriers) {
      if (!barrier->output()->hasUses()) {
        barrier->destroy();
      }
    }
    folded_ = true;
    return true;
  }

  // The token of the region at this point of the walk.
  Value* regionHere() {
    if (const OpenScope* scope = scopes_.innermost()) {
      return scope->region;
    }
    if (caller_region_ == nullptr) {
      caller_region_ = insertCallerRegion(graph_);
    }
    return caller_region_;
  }

  Graph& graph_;
  StaticScopes scopes_;
  MaybeConstants maybe_constants_;
  Value* caller_region_ = nullptr;
  std::unordered_map<const FunctionSchema*, Reach> reach_;
  std::unordered_set<const Node*> written_;
  bool folded_ = false;
  bool folded_any_ = false;
  bool barriers_changed_ = false;
};

} // namespace

bool SettleFoldBarriers(const std::shared_ptr<Graph>& graph, bool* did_ops) {
  DependentOpSettler settler(*graph);
  const bool changed = settler.run();
  if (did_ops != nullptr) {
    *did_ops = settler.foldedOps();
  }
  return changed;
}

} // namespace jitamp
