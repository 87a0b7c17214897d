#include "passes/fold_static_casts.h"

#include "ir/block_walk.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ops/static_casts.h"
#include "ir/static_scopes.h"
#include "ops/cast_ops.h"
#include "passes/settle_fold_barriers.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/jit_log.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

// Rounds of folding: each op done now may give a smart cast a constant
// input.
constexpr int kMaxFoldRounds = 8;

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
  if (!tensors[0].defined()) {
    return {tensors[0]};
  }
  return {lower ? toFp16(tensors[0], devices, 0) : toFp32(tensors[0], devices, 0)};
}

class CastFolder {
 public:
  explicit CastFolder(Graph& graph) : graph_(graph) {}

  bool run() {
    // An op done now may give a smart cast a constant input: again, while
    // ops are done.
    for (int round = 0; round < kMaxFoldRounds; ++round) {
      scopes_ = StaticScopes();
      // The settler's constant propagation may have removed a constant the
      // last round made: its results are not reused.
      folded_.clear();
      foldInBlock(graph_.block());
      dropUnusedWeights();
      bool did_ops = false;
      changed_ |= SettleFoldBarriers(graph_.shared_from_this(), &did_ops);
      if (!did_ops) {
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

} // namespace jitamp
