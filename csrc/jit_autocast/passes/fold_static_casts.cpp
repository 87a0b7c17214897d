#include "passes/fold_static_casts.h"

#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ir/static_scopes.h"
#include "ops/cast_ops.h"

#include <ATen/autocast_mode.h>
#include <ATen/ops/empty.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/jit/ir/alias_analysis.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/constant_propagation.h>

#include <algorithm>
#include <cstring>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

using DeviceStates = std::map<c10::DeviceType, DeviceAutocast>;

// A constant whose cast depends on the op's other tensors (an MKLDNN
// tensor: carriesAutocastKey, cast_ops.h): its cast stays in the graph.
bool leftToTheOp(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    return false;
  }
  const c10::DeviceType device_type = tensor.device().type();
  return (device_type == c10::DeviceType::CPU ||
          device_type == c10::DeviceType::CUDA) &&
      !carriesAutocastKey(tensor, device_type);
}

// Rounds of folding: each may make the next one's inputs constants.
constexpr int kMaxRounds = 8;

// Sets the thread's autocast state of some device types for the length of
// a cast done now (the cast cache off, grad mode off: a cast that is neither
// cached nor recorded), and restores all of it.
class StateForCast {
 public:
  explicit StateForCast(const DeviceStates& states)
      : cache_was_enabled_(at::autocast::is_autocast_cache_enabled()) {
    for (const auto& [device_type, state] : states) {
      previous_[device_type] = {
          at::autocast::is_autocast_enabled(device_type),
          at::autocast::get_autocast_dtype(device_type)};
      at::autocast::set_autocast_enabled(device_type, state.enabled);
      if (state.enabled) {
        at::autocast::set_autocast_dtype(device_type, state.dtype);
      }
    }
    at::autocast::set_autocast_cache_enabled(false);
  }

  ~StateForCast() {
    for (const auto& [device_type, state] : previous_) {
      at::autocast::set_autocast_enabled(device_type, state.enabled);
      at::autocast::set_autocast_dtype(device_type, state.dtype);
    }
    at::autocast::set_autocast_cache_enabled(cache_was_enabled_);
  }

  StateForCast(const StateForCast&) = delete;
  StateForCast& operator=(const StateForCast&) = delete;

 private:
  c10::NoGradGuard no_grad_;
  bool cache_was_enabled_;
  DeviceStates previous_;
};

// The static state of each device type among `tensors` that `devices`
// names (a cast's constant; a cast of a tensor on another device type
// returns it whatever the state), or nullopt if one of them is not static.
std::optional<DeviceStates> staticStatesOf(
    const std::vector<at::Tensor>& tensors,
    const StaticScopes& scopes,
    const std::string& devices = "cpu,cuda") {
  DeviceStates states;
  for (const auto& tensor : tensors) {
    if (!tensor.defined() || !namesDevice(devices, tensor.device().type())) {
      continue;
    }
    const auto device_type = tensor.device().type();
    const auto state = scopes.stateOf(device_type);
    if (!state) {
      return std::nullopt;
    }
    states[device_type] = *state;
  }
  return states;
}

std::string describe(const DeviceStates& states) {
  std::string out;
  for (const auto& [device_type, state] : states) {
    out += c10::DeviceTypeName(device_type, /*lower_case=*/true) + "=" +
        (state.enabled ? c10::toString(state.dtype) : "off") + ";";
  }
  return out;
}

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

// Settles the fold barriers (fold_barriers.h) of a frozen graph, after the
// casts are folded. For each op whose result the autocast state may change
// (autocastMayChange) and whose inputs, seen through its barriers, are all
// constants: where each state the op may run in gives the same bits -- its
// scope's static state, or, in the caller's state, autocast off and on
// with each dtype it can have -- the op is done now and replaced by
// constants; otherwise it keeps (or gets) a barrier and runs at each call.
// An op whose inputs may still become constants keeps its barrier (or gets
// one, as InsertSmartCasts gives them); one whose inputs cannot loses it.
// Then TorchScript's constant propagation folds what the new constants
// make foldable (ops no state changes), and this repeats while something
// was folded.
class DependentOpSettler {
 public:
  explicit DependentOpSettler(Graph& graph) : graph_(graph) {}

  bool run() {
    bool changed = false;
    for (int round = 0; round < kMaxRounds; ++round) {
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
    for (Node* node : block->nodes()) {
      for (Block* sub : node->blocks()) {
        collectWritten(sub, aliases);
      }
      if (!node->blocks().empty() || hasTaskSubgraph(node) ||
          node->kind() == prim::Constant) {
        continue;
      }
      if (aliases.hasWriters(node)) {
        written_.insert(node);
      }
    }
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
    std::vector<DeviceStates> combinations = {{}};
    for (const auto device_type : device_types) {
      std::vector<DeviceAutocast> options;
      if (const auto state = scopes_.stateOf(device_type)) {
        options = {*state};
      } else { // the caller's: off, or on with a dtype eager allows
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
    std::optional<Stack> results;
    for (const auto& states : combinations) {
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

  static std::optional<Stack> runUnder(
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

class CastFolder {
 public:
  explicit CastFolder(Graph& graph) : graph_(graph) {}

  bool run() {
    // An op done now may give a smart cast a constant input: again, while
    // ops are done.
    for (int round = 0; round < kMaxRounds; ++round) {
      scopes_ = StaticScopes();
      // The settler's constant propagation may have removed a constant the
      // last round made: its results are not reused.
      folded_.clear();
      foldInBlock(graph_.block());
      dropUnusedWeights();
      DependentOpSettler settler(graph_);
      changed_ |= settler.run();
      if (!settler.foldedOps()) {
        break;
      }
    }
    dropUnusedCallerRegions(graph_.block());
    return changed_;
  }

 private:
  void foldInBlock(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it; // the node may be destroyed below
      if (scopes_.track(node) || hasTaskSubgraph(node)) {
        continue;
      }
      scopes_.walkBlocks(node, [this](Block* sub) { foldInBlock(sub); });
      if (isSmartCast(node)) {
        fold(node);
      } else if (isCpuRnnCell(node)) {
        foldCellWeights(node);
      }
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
          cast = toFp16(weight, "cpu", /*region=*/0);
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
        changed_ = true;
      }
    }
  }

  // A smart cast whose tensor inputs are all constants: the inputs as
  // tensors (undefined for a None), in order, with the other inputs'
  // constants; nullopt otherwise (a Tensor[] input never is: it is a
  // prim::ListConstruct).
  void fold(Node* cast) {
    if (readByAnOpTorchVersionsCastDifferently(cast)) {
      return;
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
        return;
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
        return; // not a cast this pass knows
      }
    }
    if (std::any_of(tensors.begin(), tensors.end(), leftToTheOp)) {
      return;
    }
    const auto states = staticStatesOf(tensors, scopes_, devices);
    if (!states) {
      return;
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
    changed_ = true;
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
    if (!tensors[0].defined()) {
      return {tensors[0]};
    }
    return {lower ? toFp16(tensors[0], devices, 0) : toFp32(tensors[0], devices, 0)};
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

  // The caller-region tokens of the casts that are gone.
  void dropUnusedCallerRegions(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it;
      for (Block* sub : node->blocks()) {
        dropUnusedCallerRegions(sub);
      }
      if (isCallerRegion(node) && !node->output()->hasUses()) {
        node->destroy();
        changed_ = true;
      }
    }
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
  std::map<std::string, std::vector<Value*>> folded_;
  std::set<Value*> replaced_;
  bool changed_ = false;
};


} // namespace

bool FoldStaticCasts(const std::shared_ptr<Graph>& graph) {
  const bool changed = CastFolder(*graph).run();
  if (changed) {
    GRAPH_DUMP("After folding static casts:", graph);
  }
  return changed;
}

bool StaticCastIsIdentity(
    bool lower_precision,
    const at::Tensor& tensor,
    const std::string& devices,
    const StaticScopes& scopes) {
  if (!tensor.defined()) {
    return true;
  }
  if (leftToTheOp(tensor)) {
    return false;
  }
  const auto states = staticStatesOf({tensor}, scopes, devices);
  if (!states) {
    return false;
  }
  StateForCast state(*states);
  const at::Tensor cast = lower_precision ? toFp16(tensor, devices, 0)
                                          : toFp32(tensor, devices, 0);
  return cast.is_same(tensor);
}

std::optional<at::ScalarType> StaticCastDtype(
    bool lower_precision,
    at::ScalarType dtype,
    c10::Device device,
    const std::string& devices,
    const StaticScopes& scopes) {
  const at::Tensor probe =
      at::empty({0}, at::TensorOptions().dtype(dtype).device(device));
  const auto states = staticStatesOf({probe}, scopes, devices);
  if (!states) {
    return std::nullopt;
  }
  StateForCast state(*states);
  const at::Tensor cast = lower_precision ? toFp16(probe, devices, 0)
                                          : toFp32(probe, devices, 0);
  if (cast.is_same(probe)) {
    return std::nullopt;
  }
  return cast.scalar_type();
}

} // namespace jitamp
