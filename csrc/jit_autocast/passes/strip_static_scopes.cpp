#include "passes/strip_static_scopes.h"

#include "ir/block_walk.h"
#include "ir/fold_barriers.h"
#include "ir/jitamp_ir.h"
#include "ir/policy_table.h"
#include "ir/static_scopes.h"
#include "ops/cast_ops.h"

#include <torch/csrc/jit/jit_log.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

std::string where(const Node* node) {
  std::ostringstream out;
  auto range = node->sourceRange();
  if (!range.file_line_col() && isEnter(node) &&
      node->inputs().size() == 1) {
    range = node->input(0)->node()->sourceRange(); // the autocast object
  }
  if (const auto file = range.file_line_col()) {
    out << std::get<0>(*file) << ":" << std::get<1>(*file);
  } else {
    out << "(no source)";
  }
  return out.str();
}

// How a smart cast becomes stock ops, for a caller whose autocast is off.
struct Lowering {
  bool identity = true; // else: to `dtype` if eligible
  at::ScalarType dtype = at::kFloat;
  // Whether eager's autocast kernel surely runs for the op that reads the
  // cast: another tensor it reads is a constant that carries the autocast
  // key (carriesAutocastKey, cast_ops.h). Otherwise an MKLDNN tensor is
  // cast only where one of `siblings` (the op's other Tensor arguments,
  // before their casts), checked at run time, carries it.
  bool op_autocast = false;
  std::vector<Value*> siblings;
};

// Whether `query`'s answer only goes into autocast objects (the inlined
// __init__ of `torch.autocast(...)` without dtype=). A scope whose dtype
// it sets is not static and is refused for that; one that is static (a
// disabled scope) has no use for it.
bool onlyBuildsAutocastObjects(const Node* query) {
  for (const Use& use : query->output()->uses()) {
    if (use.user->kind() != prim::SetAttr ||
        !isAutocastClass(use.user->input(0)->type())) {
      return false;
    }
  }
  return true;
}

// Finds what keeps a graph from running without jitamp's ops
// (StaticScopeObstacles), and how each smart cast becomes stock ops.
class ObstacleFinder {
 public:
  explicit ObstacleFinder(Graph& graph) {
    walk(graph.block());
  }

  const std::vector<std::string>& obstacles() const {
    return obstacles_;
  }

  const std::vector<std::pair<Node*, Lowering>>& lowerings() const {
    return lowerings_;
  }

 private:
  // The CPU state at this point, for a caller whose autocast is off.
  DeviceAutocast cpuState() const {
    const auto state = scopes_.stateOf(c10::DeviceType::CPU);
    return state ? *state : DeviceAutocast{};
  }

  void obstacle(const Node* node, const std::string& why) {
    obstacles_.push_back(where(node) + ": " + why);
  }

  void walk(Block* block) {
    for (Node* node : block->nodes()) {
      if (isEnter(node)) {
        const ScopeFacts facts = scopeFacts(node);
        if (facts.device_type && *facts.device_type != c10::DeviceType::CPU) {
          obstacle(
              node,
              "an autocast scope for " +
                  c10::DeviceTypeName(*facts.device_type, /*lower_case=*/true) +
                  " (a model without jitamp's ops can hold the casts of CPU "
                  "scopes only; on another device the op's own autocast "
                  "kernel casts, which needs the scope's state at run time)");
        } else if (!facts.device_type || !facts.state) {
          obstacle(
              node,
              "an autocast scope whose device type, dtype or enabled flag "
              "is not a constant");
        }
      }
      if (scopes_.track(node)) {
        continue;
      }
      if (hasTaskSubgraph(node)) {
        obstacle(node, "a forked task");
        continue;
      }
      scopes_.walkBlocks(node, [this](Block* sub) { walk(sub); });
      if (const OpenScope* scope = scopes_.maybeClosed(c10::DeviceType::CPU)) {
        if (!isJitampOp(node) && reported_.insert(scope->guard).second) {
          obstacle(
              node,
              "code after an early exit (return, break, continue) from an "
              "autocast scope, which runs in the scope or after it");
        }
        if (!isJitampOp(node) || isSmartCast(node)) {
          continue;
        }
      }
      if (isSmartCast(node)) {
        checkCast(node);
      } else if (
          node->kind() == ops::kCacheEnabled ||
          isCallerRegion(node) || isFoldBarrier(node)) {
        // removed with the scopes (a barrier left by FoldStaticCasts keeps
        // an op that the caller's state decides, off for this promise, or
        // one that cannot be computed ahead of time: the executor may fold
        // it now, in the caller's state)
      } else if (isJitampOp(node)) {
        obstacle(node, std::string(node->kind().toQualString()));
      } else if (
          isAutocastStateQuery(node) && scopes_.innermost() != nullptr &&
          !onlyBuildsAutocastObjects(node)) {
        obstacle(
            node,
            std::string(node->kind().toQualString()) +
                ": an autocast state query in a scope, which only the "
                "scope's op answers as eager");
      } else if (
          node->kind() == prim::CallFunction ||
          node->kind() == prim::CallMethod ||
          node->kind() == prim::PythonOp) {
        obstacle(node, "a call that is not inlined");
      } else if (cpuState().enabled) {
        checkOp(node);
      }
    }
  }

  void checkCast(Node* cast) {
    const auto devices = toIValue(cast->namedInput("devices"));
    TORCH_INTERNAL_ASSERT(devices && devices->isString());
    const bool names_cpu =
        devices->toStringRef().find("cpu") != std::string::npos;
    const DeviceAutocast state = cpuState();
    Lowering lowering;
    if (!names_cpu || !state.enabled) {
      lowerings_.emplace_back(cast, lowering); // does nothing
      return;
    }
    const std::string& overload = cast->schema().overload_name();
    const bool lower = cast->kind() == ops::kToFp16;
    lowering.identity = false;
    lowering.dtype = lower ? state.dtype : at::kFloat;
    if (overload == "if_no_dtype") {
      const auto dtype = toIValue(cast->namedInput("dtype"));
      if (!dtype) {
        obstacle(cast, "a float32 cast whose dtype argument is not a constant");
        return;
      }
      lowering.identity = !dtype->isNone();
    } else if (cast->kind() == ops::kPromote || !overload.empty()) {
      obstacle(
          cast,
          std::string("a ") + cast->kind().toQualString() +
              (overload.empty() ? "" : "." + overload) +
              " cast in an enabled scope (no stock op does it as eager)");
      return;
    }
    if (!findSiblings(cast, lowering)) {
      return;
    }
    lowerings_.emplace_back(cast, lowering);
  }

  // The tensors that the readers of `cast` read besides it, each as it was
  // before its own cast. False (with an obstacle) where one cannot be
  // checked ahead of the cast.
  bool findSiblings(Node* cast, Lowering& lowering) {
    for (const Use& use : cast->output()->uses()) {
      for (Value* input : use.user->inputs()) {
        if (input == cast->output()) {
          continue;
        }
        Value* source = input;
        if (isSmartCast(source->node())) {
          source = source->node()->input(source->offset());
        }
        if (const auto constant = toIValue(source)) {
          if (constant->isTensor() &&
              constant->toTensor().device().is_cpu() &&
              carriesAutocastKey(constant->toTensor(), c10::DeviceType::CPU)) {
            lowering.op_autocast = true;
          }
          continue;
        }
        const TypePtr& type = source->type();
        if (type->kind() == TypeKind::TensorType) {
          lowering.siblings.push_back(source);
        } else if (
            !type->containedTypes().empty() &&
            type->containedTypes()[0]->kind() == TypeKind::TensorType) {
          // An Optional[Tensor] or a Tensor[] that is not a constant (their
          // own casts are obstacles anyway in an enabled scope).
          lowering.siblings.push_back(source); // refused below, if needed
        }
      }
    }
    if (lowering.op_autocast) {
      lowering.siblings.clear();
      return true;
    }
    for (Value* sibling : lowering.siblings) {
      if (sibling->type()->kind() != TypeKind::TensorType) {
        obstacle(cast, "a cast for an op that also reads an optional tensor "
                       "or a list of tensors (whether eager casts an MKLDNN "
                       "tensor depends on them)");
        return false;
      }
      if (!sibling->node()->isBefore(cast)) {
        obstacle(cast, "a cast ahead of a tensor its op reads");
        return false;
      }
    }
    return true;
  }

  void checkOp(Node* node) {
    if (node->kind().is_prim() || node->kind() == prim::Constant) {
      return;
    }
    const FunctionSchema* schema = node->maybeSchema();
    if (schema == nullptr) {
      obstacle(node, std::string("an op without a schema: ") +
                   node->kind().toQualString());
      return;
    }
    const OpKernels kernels =
        opKernels(schema->name(), schema->overload_name(), c10::DeviceType::CPU);
    const std::string op = schema->name() +
        (schema->overload_name().empty() ? "" : "." + schema->overload_name());
    if (!kernels.in_dispatcher) {
      return; // TorchScript's own (sizes, lists, scalars)
    }
    const std::string varies = policyVariesAcrossTorch(
        schema->name(), schema->overload_name(), c10::DeviceType::CPU);
    if (!varies.empty()) {
      obstacle(
          node,
          op + ": torch versions autocast it differently (" + varies +
              "), and a model without jitamp's ops cannot follow the torch "
              "that loads it");
      return;
    }
    if (kernels.autocast) {
      switch (effectivePolicy(schema->name(), schema->overload_name()).cpu) {
        case CastPolicy::LowerPrecisionFp:
        case CastPolicy::Fp32:
        case CastPolicy::Fp32SetOptDtype:
        case CastPolicy::Fp32AppendDtype:
          return; // its casts are in the graph
        default:
          obstacle(node, op + ": eager autocasts it, and the graph does not "
                              "spell its casts");
          return;
      }
    }
    if (kernels.composite_implicit && !isUncastComposite(op)) {
      obstacle(
          node,
          op + ": CompositeImplicitAutograd without an autocast kernel "
               "(eager autocasts the ops it decomposes into)");
    } else if (kernelCallsAutocastOps(op)) {
      obstacle(node, op + ": its kernel calls an op eager autocasts");
    }
  }

  StaticScopes scopes_;
  std::vector<std::pair<Node*, Lowering>> lowerings_;
  std::vector<std::string> obstacles_;
  std::set<const Value*> reported_; // maybe-closed scopes said once
};

// Writes smart casts as stock ops (their Lowering).
class StockCastWriter {
 public:
  explicit StockCastWriter(Graph& graph) : graph_(graph) {}

  // x -> prim::If(dtype != target and eligible) { x.to(target) } else
  // { x }: eager's is_eligible (floating, not float64, on CPU) and cast.
  // The dtype is asked first, alone: inside a scope most tensors have the
  // target dtype already, and then two ops decide. An MKLDNN tensor (on
  // CPU too) is cast only where eager's kernel runs (Lowering::op_autocast,
  // siblings), looked at only for an MKLDNN tensor.
  void lower(Node* cast, const Lowering& lowering) {
    if (lowering.identity) {
      removeCast(cast);
      return;
    }
    WithInsertPoint guard(cast);
    Value* x = cast->input(0);
    Value* target = graph_.insertConstant(static_cast<int64_t>(lowering.dtype));
    Value* dtype = graph_.insert(prim::dtype, {x});
    const auto unchanged = [&] { return x; };
    const auto if_eligible = [&] {
      Value* eligible = graph_.insert(
          aten::__and__,
          {graph_.insert(
               aten::__and__,
               {graph_.insert(aten::is_floating_point, {x}),
                graph_.insert(c10::Symbol::prim("is_cpu"), {x})}),
           graph_.insert(
               aten::ne,
               {dtype,
                graph_.insertConstant(static_cast<int64_t>(at::kDouble))})});
      return ifThenElse(
          eligible, [&] { return castWhereEagerDoes(x, target, lowering); },
          unchanged);
    };
    Value* result = ifThenElse(
        graph_.insert(aten::ne, {dtype, target}), if_eligible, unchanged);
    result->node()->setSourceRange(cast->sourceRange());
    cast->output()->replaceAllUsesWith(result);
    cast->destroy();
  }

 private:
  // x.to(target), for an eligible x, except an MKLDNN tensor that eager's
  // kernel does not reach: no tensor of the op carries the autocast key.
  Value* castWhereEagerDoes(Value* x, Value* target, const Lowering& lowering) {
    const auto cast = [&] {
      Value* none = graph_.insertConstant(c10::IValue());
      Value* no = graph_.insertConstant(false);
      return graph_.insert(aten::to, {x, target, no, no, none});
    };
    if (lowering.op_autocast) {
      return cast();
    }
    const auto mkldnn = [&] {
      if (lowering.siblings.empty()) {
        return x; // the op reads only x
      }
      return ifThenElse(
          anyCarriesAutocastKey(lowering.siblings), cast, [&] { return x; });
    };
    return ifThenElse(
        graph_.insert(c10::Symbol::prim("is_mkldnn"), {x}), mkldnn, cast);
  }

  // prim::If(condition) { then_value() } else { else_value() }, inserted
  // at the insertion point; its Tensor result.
  template <typename Then, typename Else>
  Value* ifThenElse(Value* condition, Then then_value, Else else_value) {
    Node* branch = graph_.insertNode(graph_.create(prim::If, {condition}, 1));
    branch->output()->setType(TensorType::get());
    Block* then_block = branch->addBlock();
    Block* else_block = branch->addBlock();
    {
      WithInsertPoint in_then(then_block);
      then_block->registerOutput(then_value());
    }
    {
      WithInsertPoint in_else(else_block);
      else_block->registerOutput(else_value());
    }
    return branch->output();
  }

  // Whether one of `tensors` (not none) is a CPU tensor that carries the
  // autocast key: not an MKLDNN one.
  Value* anyCarriesAutocastKey(const std::vector<Value*>& tensors) {
    TORCH_INTERNAL_ASSERT(!tensors.empty());
    Value* any = nullptr;
    for (Value* tensor : tensors) {
      Value* carries = graph_.insert(
          aten::__and__,
          {graph_.insert(c10::Symbol::prim("is_cpu"), {tensor}),
           graph_.insert(
               aten::__not__,
               {graph_.insert(c10::Symbol::prim("is_mkldnn"), {tensor})})});
      any = any == nullptr ? carries
                           : graph_.insert(aten::__or__, {any, carries});
    }
    return any;
  }

  Graph& graph_;
};

// The nodes of `block` and the blocks within of kind `kind`.
std::vector<Node*> collectOfKind(Block* block, Symbol kind) {
  return collectNodes(
      block, [kind](const Node* node) { return node->kind() == kind; });
}

// An autocast object nothing reads any more.
void removeObjectIfOnlySet(Value* object) {
  for (const Use& use : object->uses()) {
    if (use.user->kind() != prim::SetAttr) {
      return;
    }
  }
  while (object->hasUses()) {
    object->uses().front().user->destroy();
  }
  object->node()->destroy();
}

bool removeScopeOps(Block* block) {
  const bool barriers = removeAllFoldBarriers(block); // they read regions
  const std::vector<Node*> exits = collectOfKind(block, ops::kExit);
  const std::vector<Node*> regions = collectNodes(block, isCallerRegion);
  const std::vector<Node*> cache_flags = collectOfKind(block, ops::kCacheEnabled);
  const std::vector<Node*> enters = collectNodes(block, isEnter);
  for (Node* node : exits) {
    node->destroy();
  }
  for (Node* node : regions) {
    TORCH_INTERNAL_ASSERT(!node->output()->hasUses());
    node->destroy();
  }
  for (Node* node : cache_flags) {
    const std::vector<Use> uses = node->output()->uses();
    for (const Use& use : uses) {
      TORCH_INTERNAL_ASSERT(use.user->kind() == prim::SetAttr);
      use.user->destroy();
    }
    node->destroy();
  }
  for (Node* enter : enters) {
    Value* object = enter->inputs().size() == 1 ? enter->input(0) : nullptr;
    TORCH_INTERNAL_ASSERT(
        !enter->output(0)->hasUses() && !enter->output(1)->hasUses());
    enter->destroy();
    if (object != nullptr && object->node()->kind() == prim::CreateObject) {
      removeObjectIfOnlySet(object);
    }
  }
  return barriers ||
      !(exits.empty() && regions.empty() && cache_flags.empty() &&
        enters.empty());
}

} // namespace

std::vector<std::string> StaticScopeObstacles(const std::shared_ptr<Graph>& graph) {
  return ObstacleFinder(*graph).obstacles();
}

bool StripStaticScopes(const std::shared_ptr<Graph>& graph) {
  const ObstacleFinder finder(*graph);
  if (!finder.obstacles().empty()) {
    std::string all;
    for (const auto& line : finder.obstacles()) {
      all += "\n  " + line;
    }
    TORCH_CHECK(false, "jitamp: this graph cannot run without jitamp's ops:", all);
  }
  bool changed = false;
  StockCastWriter writer(*graph);
  for (const auto& [cast, lowering] : finder.lowerings()) {
    writer.lower(cast, lowering);
    changed = true;
  }
  changed |= removeScopeOps(graph->block());
  if (changed) {
    EliminateDeadCode(graph);
    GRAPH_DUMP("After stripping static scopes:", graph);
  }
  forEachNode(graph->block(), [](Node* node) {
    TORCH_INTERNAL_ASSERT(!isJitampOp(node), "jitamp: left ", *node);
  });
  return changed;
}

} // namespace jitamp
