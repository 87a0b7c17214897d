#include "passes/fold_static_casts.h"

#include "ir/block_walk.h"
#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ir/static_scopes.h"
#include "ops/cast_ops.h"
#include "ops/static_casts.h"

#include <ATen/ops/equal.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/constant_propagation.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Walks: each may make the next one's inputs constants (through constant
// propagation, or a loop whose carried values became constants).
constexpr int kMaxRounds = 16;

// The RNN cells, on CPU: eager autocast has no policy for them there, and
// their CPU kernels use the weights and biases (arguments 2 to 5) only in
// the aten::linear calls they make (ATen/native/RNN.cpp, CellParams), whose
// lower_precision_fp policy casts them. jitamp has no cast before such an
// op (no policy, no smart cast), so a frozen weight -- a constant, which
// eager's cache never keeps -- would be cast at every call, in every step
// of a loop. The arguments linear reaches, for this pass to cast once.
bool isCpuRnnCell(const Node* node) {
  static const std::set<Symbol> cells = {
      Symbol::fromQualString("aten::gru_cell"),
      Symbol::fromQualString("aten::lstm_cell"),
      Symbol::fromQualString("aten::rnn_tanh_cell"),
      Symbol::fromQualString("aten::rnn_relu_cell")};
  return cells.count(node->kind()) && node->inputs().size() == 6;
}
constexpr size_t kCellFirstWeight = 2;

bool isTensorLike(const TypePtr& type) {
  if (type->kind() == TypeKind::TensorType) {
    return true;
  }
  const auto opt = type->cast<OptionalType>();
  return opt && opt->getElementType()->kind() == TypeKind::TensorType;
}

// The cast, done now by its kernel under the static state.
std::vector<at::Tensor> castNow(
    const Node* cast,
    const std::vector<at::Tensor>& tensors,
    const std::string& devices,
    std::optional<at::ScalarType> dtype,
    const DeviceStates& states) {
  StateForCast state(states);
  const Symbol kind = cast->kind();
  const std::string& overload = cast->schema().overload_name();
  const bool lower = kind == ops::kToFp16;
  if (kind == ops::kPromote) {
    return promoteList(tensors, devices, /*region=*/0);
  }
  if (overload == "if_no_dtype") {
    return {toFp32IfNoDtype(tensors.at(0), devices, dtype, 0)};
  }
  TORCH_INTERNAL_ASSERT(tensors.size() == 1, "jitamp: unexpected cast ", *cast);
  return {castTo(tensors[0], devices, lower)};
}

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

// FoldStaticCasts, walk by walk.
class StaticFolder {
 public:
  explicit StaticFolder(Graph& graph) : graph_(graph) {}

  bool run() {
    std::shared_ptr<Graph> graph = graph_.shared_from_this();
    for (int round = 0; round < kMaxRounds; ++round) {
      scopes_ = StaticScopes();
      maybe_constants_ = MaybeConstants();
      // Constant propagation may have removed a constant the last round
      // made: its casts are not reused.
      folded_.clear();
      written_.clear();
      {
        const AliasDb aliases(graph);
        collectWritten(graph_.block(), aliases);
      }
      did_ = false;
      foldIn(graph_.block());
      dropUnusedWeights();
      const bool propagated =
          ConstantPropagation(graph, /*ignore_custom_classes=*/true);
      changed_ |= did_ || propagated;
      if (!did_ && !propagated) {
        break;
      }
    }
    dropUnusedCallerRegions(graph_.block());
    return changed_;
  }

 private:
  void foldIn(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it; // the node may be destroyed below
      if (scopes_.track(node) || hasTaskSubgraph(node)) {
        maybe_constants_.record(node);
        continue;
      }
      maybe_constants_.enter(node);
      scopes_.walkBlocks(node, [this](Block* sub) { foldIn(sub); });
      if (isSmartCast(node) ? fold(node) : settle(node)) {
        continue; // done now (and destroyed)
      }
      maybe_constants_.record(node);
    }
  }

  // A constant weight or bias of a CPU RNN cell (isCpuRnnCell), cast now as
  // the cell's aten::linear will cast it, where the installed torch gives
  // the cell no autocast kernel on CPU (a kernel of its own would cast its
  // other inputs too: then the policy table has its row) and gives linear
  // its lower_precision_fp one.
  void foldCellWeights(Node* cell) {
    const auto& schema = cell->schema();
    const auto cpu = c10::DeviceType::CPU;
    if (opKernels(schema.name(), schema.overload_name(), cpu).autocast ||
        effectivePolicy("aten::linear", "").cpu != CastPolicy::LowerPrecisionFp) {
      return;
    }
    for (size_t i = kCellFirstWeight; i < cell->inputs().size(); ++i) {
      Value* input = cell->input(i);
      const auto constant = toIValue(input);
      if (!constant || !constant->isTensor() ||
          constant->toTensor().device().type() != cpu) {
        continue;
      }
      const at::Tensor& weight = constant->toTensor();
      if (leftToTheOp(weight)) {
        continue;
      }
      const auto states = staticStatesOf({weight}, scopes_);
      if (!states) {
        continue;
      }
      const std::string key = "linear-in-cell(" +
          std::to_string(input->unique()) + ")" + describe(*states);
      auto done = folded_.find(key);
      if (done == folded_.end()) {
        at::Tensor cast;
        {
          StateForCast state(*states);
          cast = castTo(weight, "cpu", /*lower_precision=*/true);
        }
        Value* result =
            cast.is_same(weight) ? input : constantFor(input, cast);
        done = folded_.emplace(key, std::vector<Value*>{result}).first;
      }
      if (done->second.front() != input) {
        GRAPH_UPDATE(
            "Casting ", input->debugName(), " of ", *cell, " under ",
            describe(*states), " once");
        cell->replaceInput(i, done->second.front());
        replaced_.insert(input);
        did_ = true;
      }
    }
  }

  // A smart cast whose inputs are all constants (a Tensor[] input never
  // is: it is a prim::ListConstruct), under a static state: done now.
  // Returns whether it was (and `cast` destroyed).
  bool fold(Node* cast) {
    if (readByAnOpTorchVersionsCastDifferently(cast)) {
      return false;
    }
    const FunctionSchema& schema = cast->schema();
    std::vector<at::Tensor> tensors;
    std::vector<size_t> tensor_indices;
    std::string devices;
    std::optional<at::ScalarType> dtype;
    std::string key = cast->kind().toQualString();
    key += "." + schema.overload_name() + "(";
    for (size_t i = 0; i < cast->inputs().size(); ++i) {
      const Argument& formal = schema.arguments().at(i);
      Value* input = cast->input(i);
      if (formal.name() == "region") {
        continue;
      }
      const auto constant = toIValue(input);
      if (!constant) {
        return false;
      }
      key += std::to_string(input->unique()) + ",";
      if (formal.name() == "devices") {
        devices = constant->toStringRef();
      } else if (formal.name() == "dtype") {
        if (!constant->isNone()) {
          dtype = constant->toScalarType();
        }
      } else if (isTensorLike(formal.type())) {
        tensors.push_back(constant->isNone() ? at::Tensor() : constant->toTensor());
        tensor_indices.push_back(i);
      } else {
        return false; // not a cast this pass knows
      }
    }
    if (std::any_of(tensors.begin(), tensors.end(), leftToTheOp)) {
      return false;
    }
    const auto states = staticStatesOf(tensors, scopes_, devices);
    if (!states) {
      return false;
    }
    key += ")" + describe(*states);

    std::vector<Value*> results;
    if (auto done = folded_.find(key); done != folded_.end()) {
      results = done->second;
    } else {
      const std::vector<at::Tensor> cast_tensors =
          castNow(cast, tensors, devices, dtype, *states);
      for (size_t k = 0; k < cast_tensors.size(); ++k) {
        Value* input = cast->input(tensor_indices[k]);
        if (!cast_tensors[k].defined() || cast_tensors[k].is_same(tensors[k])) {
          results.push_back(input); // the cast does nothing here
        } else {
          results.push_back(constantFor(input, cast_tensors[k]));
        }
      }
      folded_.emplace(key, results);
    }
    TORCH_INTERNAL_ASSERT(results.size() == cast->outputs().size());
    GRAPH_UPDATE("Folding ", *cast, " under ", describe(*states));
    for (const size_t i : tensor_indices) {
      replaced_.insert(cast->input(i));
    }
    for (size_t k = 0; k < results.size(); ++k) {
      cast->output(k)->replaceAllUsesWith(results[k]);
    }
    cast->destroy();
    did_ = true;
    return true;
  }

  // A model frozen on one torch may load on another, where the pass
  // redoes the casts of such an op (InsertSmartCasts): a cast done now
  // could not be undone there.
  static bool readByAnOpTorchVersionsCastDifferently(const Node* cast) {
    for (const Value* output : cast->outputs()) {
      for (const Use& use : output->uses()) {
        const FunctionSchema* schema = use.user->maybeSchema();
        if (schema != nullptr &&
            !policyVariesAcrossTorch(schema->name(), schema->overload_name())
                 .empty()) {
          return true;
        }
      }
    }
    return false;
  }

  // A new constant at the top of the graph, named after the weight.
  Value* constantFor(Value* input, const at::Tensor& value) {
    WithInsertPoint guard(graph_.block()->nodes().front());
    Value* constant = graph_.insertConstant(value);
    if (input->hasDebugName()) {
      constant->setDebugName(
          input->debugNameBase() + "_" +
          c10::toString(value.scalar_type()));
    }
    return constant;
  }

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

  // Any other node: a CPU RNN cell's constant weights cast
  // (foldCellWeights); an op the state may change done now where every
  // state it may run in gives the same bits (doNow), else given its fold
  // barrier or, where it can never be done now, relieved of it. Returns
  // whether it was done now (and destroyed).
  bool settle(Node* node) {
    if (isCpuRnnCell(node)) {
      foldCellWeights(node);
    }
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
          changed_ = true;
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
      // come from smart casts, unless this walk made them constants (then
      // they are constants now) or the kernel leaves them alone.
      return false;
    }
    if (!hasFoldBarrier(node)) {
      if (const auto index = barrierInput(node)) {
        maybe_constants_.record(
            insertFoldBarrier(node, *index, regionHere()));
        changed_ = true;
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
    removeFoldBarriers(node);
    node->destroy();
    did_ = true;
    return true;
  }

  // The token of the region at this point of the walk.
  Value* regionHere() {
    const OpenScope* scope = scopes_.innermost();
    return scope != nullptr ? scope->region : caller_region_();
  }

  // The caller-region tokens of the casts that are gone.
  void dropUnusedCallerRegions(Block* block) {
    forEachNode(block, [this](Node* node) {
      if (isCallerRegion(node) && !node->output()->hasUses()) {
        node->destroy();
        changed_ = true;
      }
    });
  }

  // The weights whose casts are now constants of their own: a frozen
  // weight left without a use would keep its float32 copy alive beside its
  // cast one for as long as the model.
  void dropUnusedWeights() {
    for (Value* weight : replaced_) {
      if (!weight->hasUses() && weight->node()->kind() == prim::Constant) {
        weight->node()->destroy();
      }
    }
    replaced_.clear();
  }

  Graph& graph_;
  StaticScopes scopes_;
  MaybeConstants maybe_constants_;
  // The casts done this round, by kernel, inputs and state.
  std::map<std::string, std::vector<Value*>> folded_;
  // The constant weights whose casts were done this round.
  std::set<Value*> replaced_;
  std::unordered_set<const Node*> written_;
  std::unordered_map<const FunctionSchema*, Reach> reach_;
  CallerRegion caller_region_{graph_}; // made at its first use
  bool did_ = false; // this round did a cast or an op now
  bool changed_ = false;
};

} // namespace

bool FoldStaticCasts(const std::shared_ptr<Graph>& graph) {
  const bool changed = StaticFolder(*graph).run();
  if (changed) {
    GRAPH_DUMP("After folding static casts:", graph);
  }
  return changed;
}

} // namespace jitamp
