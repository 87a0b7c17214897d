#include "jitamp_rewrite.h"

#include "autocast_guard.h"
#include "policy_table.h"

#include <torch/csrc/jit/frontend/error_report.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/jit_log.h>
#include <torch/custom_class.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace jitamp {

using namespace torch::jit;

namespace {

struct Symbols {
  Symbol enter = Symbol::fromQualString("jitamp::autocast_enter");
  Symbol exit = Symbol::fromQualString("jitamp::autocast_exit");
  Symbol cache = Symbol::fromQualString("jitamp::autocast_cache_enabled");
  Symbol to_fp16 = Symbol::fromQualString("jitamp::autocast_to_fp16");
  Symbol to_fp32 = Symbol::fromQualString("jitamp::autocast_to_fp32");
  Symbol promote = Symbol::fromQualString("jitamp::autocast_promote");
  Symbol wait = Symbol::fromQualString("jitamp::wait");
  Symbol caller_region = Symbol::fromQualString("jitamp::autocast_caller_region");
};

const Symbols& sym() {
  static const Symbols symbols;
  return symbols;
}

// The first jitamp op of every rewritten graph (the cache flag of its first
// scope, or the caller's region token) gets a value name that says what to
// do: loading a saved model without `import jitamp` fails at that line, and
// TorchScript's error shows it ("Unknown builtin op: jitamp::...").
std::string loadHint(const char* what) {
  return std::string(what) + "_needs_import_jitamp";
}

bool isSmartCast(const Node* node) {
  const auto kind = node->kind();
  return kind == sym().to_fp16 || kind == sym().to_fp32 ||
      kind == sym().promote;
}

// The autocast context-manager classes as TorchScript compiles them, with
// name mangling (models loaded from disk) stripped.
bool isAutocastClass(const TypePtr& type) {
  const auto cls = type->cast<ClassType>();
  if (!cls || !cls->name()) {
    return false;
  }
  std::string name;
  for (const auto& atom : cls->name()->atoms()) {
    if (atom.rfind("___torch_mangle_", 0) == 0) {
      continue;
    }
    name += name.empty() ? atom : "." + atom;
  }
  return name == "__torch__.torch.amp.autocast_mode.autocast" ||
      name == "__torch__.torch.cpu.amp.autocast_mode.autocast" ||
      name == "__torch__.torch.cuda.amp.autocast_mode.autocast";
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

bool castable(CastPolicy policy) {
  return policy != CastPolicy::None && policy != CastPolicy::Banned;
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

class AutocastRewriter {
 public:
  explicit AutocastRewriter(std::shared_ptr<Graph> graph)
      : graph_(std::move(graph)) {}

  bool run() {
    recordCacheFlags(graph_->block());
    blockingWaits(graph_->block());
    rewriteBlock(graph_->block());
    if (changed_) {
      GRAPH_DUMP("After jitamp's autocast rewrite:", graph_);
    }
    return changed_;
  }

 private:
  // --- scopes -----------------------------------------------------------

  // Eager's autocast.__init__ turns cache_enabled=None into the current
  // cache flag when the object is built; the scripted __init__ drops the
  // argument. After each scripted __init__, store the resolved flag in an
  // attribute that jitamp::autocast_enter reads.
  void recordCacheFlags(Block* block) {
    for (Node* node : block->nodes()) {
      for (Block* sub : node->blocks()) {
        recordCacheFlags(sub);
      }
      if (node->kind() != prim::CallMethod ||
          node->s(attr::name) != "__init__" ||
          !isAutocastClass(node->input(0)->type())) {
        continue;
      }
      if (node->next()->kind() == sym().cache) {
        continue; // done by an earlier run
      }
      auto cls = node->input(0)->type()->expect<ClassType>();
      const auto& schema = cls->getMethod("__init__").getSchema();
      const auto index = schema.argumentIndexWithName("cache_enabled");
      if (!index || *index >= node->inputs().size()) {
        continue;
      }
      if (!cls->hasAttribute(kCacheAttr)) {
        cls->addAttribute(kCacheAttr, BoolType::get());
      }
      WithInsertPoint guard(node->next());
      Node* resolve =
          graph_->create(sym().cache, {node->input(*index)}, /*num_outputs=*/1);
      resolve->output()->setType(BoolType::get());
      resolve->output()->setDebugName(loadHint("cache_enabled"));
      resolve->setSourceRange(node->sourceRange());
      graph_->insertNode(resolve);
      Node* store = graph_->create(
          prim::SetAttr, {node->input(0), resolve->output()}, 0);
      store->s_(attr::name, kCacheAttr);
      graph_->insertNode(store);
      GRAPH_UPDATE("Recorded cache_enabled of ", *node);
      changed_ = true;
    }
  }

  struct OpenScope {
    Value* autocast;
    Value* guard;
    Value* region; // the token of the scope's region
    Block* block;
  };

  // One walk in program order, keeping the stack of open scopes: lowers
  // scopes and puts, before each op that eager autocast handles, the smart
  // casts of its policy, tied to the innermost open scope (its region).
  void rewriteBlock(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it; // the node may be destroyed below
      if (node->kind() == prim::Enter &&
          isAutocastClass(node->input()->type())) {
        lowerEnter(node);
      } else if (
          node->kind() == prim::Exit &&
          isAutocastClass(node->input()->type())) {
        lowerExit(node);
      } else if (node->kind() == sym().enter) {
        // lowered by an earlier run
        open_.push_back(
            {node->input(0), node->output(0), node->output(1), block});
      } else if (node->kind() == sym().exit) {
        closeScope(node->input(0), block);
      } else {
        for (Block* sub : node->blocks()) {
          rewriteBlock(sub);
        }
        insertCasts(node);
      }
    }
  }

  // The token of the region at the current point of the walk.
  Value* currentRegion() {
    if (!open_.empty()) {
      return open_.back().region;
    }
    if (caller_region_ == nullptr) {
      // Our own node, at the top of the graph. An existing one is not
      // reused: in a graph with inlined callees it may belong to code
      // inside a scope.
      WithInsertPoint guard(graph_->block()->nodes().front());
      Node* region = graph_->create(sym().caller_region, {}, 1);
      region->output()->setType(IntType::get());
      region->output()->setDebugName(loadHint("caller_region"));
      graph_->insertNode(region);
      caller_region_ = region->output();
      changed_ = true;
    }
    return caller_region_;
  }

  void closeScope(Value* guard, Block* block) {
    for (auto scope = open_.rbegin(); scope != open_.rend(); ++scope) {
      if (scope->guard == guard) {
        if (scope->block == block) {
          open_.erase(std::next(scope).base());
        }
        return;
      }
    }
  }

  void lowerEnter(Node* enter) {
    Value* autocast = enter->input();
    WithInsertPoint guard(enter);
    Node* lowered = graph_->create(sym().enter, {autocast}, 2);
    lowered->output(0)->setType(guardType());
    lowered->output(1)->setType(IntType::get());
    lowered->setSourceRange(enter->sourceRange());
    graph_->insertNode(lowered);
    // `with autocast(...) as ac`: __enter__ returns self.
    enter->output()->replaceAllUsesWith(autocast);
    open_.push_back(
        {autocast, lowered->output(0), lowered->output(1), enter->owningBlock()});
    GRAPH_UPDATE("Lowered ", *enter, " to ", *lowered);
    enter->destroy();
    changed_ = true;
  }

  void lowerExit(Node* exit) {
    auto match = open_.rbegin();
    while (match != open_.rend() && match->autocast != exit->input()) {
      ++match;
    }
    if (match == open_.rend()) {
      throw ErrorReport(exit->sourceRange())
          << "jitamp: found the end of an autocast scope without its start";
    }
    if (exit->hasUses()) {
      throw ErrorReport(exit->sourceRange())
          << "jitamp: the result of an autocast __exit__ is used";
    }
    WithInsertPoint guard(exit);
    Node* lowered = graph_->create(sym().exit, {match->guard}, 0);
    lowered->setSourceRange(exit->sourceRange());
    graph_->insertNode(lowered);
    GRAPH_UPDATE("Lowered ", *exit, " to ", *lowered);
    // An exit on a break/continue path inside the scope leaves it open for
    // the exit that ends the block.
    closeScope(match->guard, exit->owningBlock());
    exit->destroy();
    changed_ = true;
  }

  static TypePtr guardType() {
    auto type =
        torch::getCustomClass("__torch__.torch.classes.jitamp.AutocastGuard");
    TORCH_INTERNAL_ASSERT(type, "jitamp's op library is not loaded");
    return type;
  }

  // aten::wait may suspend the interpreter and resume the graph on another
  // thread, which would close an open autocast scope there instead of on
  // the caller's thread (see jitamp::wait in scope_ops.cpp). Callees are
  // inlined into callers that may hold a scope open, so every wait blocks.
  void blockingWaits(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it;
      ++it;
      for (Block* sub : node->blocks()) {
        blockingWaits(sub);
      }
      if (node->kind() != aten::wait) {
        continue;
      }
      WithInsertPoint guard(node);
      Node* wait = graph_->create(sym().wait, {node->input()}, 1);
      wait->output()->setType(node->output()->type());
      wait->setSourceRange(node->sourceRange());
      graph_->insertNode(wait);
      node->output()->replaceAllUsesWith(wait->output());
      GRAPH_UPDATE("Replaced ", *node, " with ", *wait);
      node->destroy();
      changed_ = true;
    }
  }

  // --- casts ------------------------------------------------------------

  void insertCasts(Node* node) {
    if (node->hasAttribute(attr::Subgraph) &&
        (node->kind() == prim::fork || node->kind() == prim::awaitable)) {
      if (RewriteAutocast(node->g(attr::Subgraph))) {
        changed_ = true;
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
    const OpPolicy* policy =
        lookupPolicy(schema->name(), schema->overload_name());
    if (policy == nullptr) {
      return;
    }
    if (policy->cpu == policy->cuda) {
      applyPolicy(node, *schema, policy->cpu, "cpu,cuda");
    } else {
      applyPolicy(node, *schema, policy->cpu, "cpu");
      applyPolicy(node, *schema, policy->cuda, "cuda");
    }
  }

  void applyPolicy(
      Node* node,
      const FunctionSchema& schema,
      CastPolicy policy,
      const std::string& devices) {
    if (!castable(policy)) {
      return; // eager's banned ops raise in the dispatcher, as in eager
    }
    switch (policy) {
      case CastPolicy::LowerPrecisionFp:
      case CastPolicy::Fp32: {
        const Symbol kind = policy == CastPolicy::LowerPrecisionFp
            ? sym().to_fp16
            : sym().to_fp32;
        for (size_t i = 0; i < node->inputs().size() &&
             i < schema.arguments().size();
             ++i) {
          castInput(node, i, schema.arguments()[i].type(), kind, devices);
        }
        return;
      }
      case CastPolicy::Fp32AppendDtype:
        castInput(node, 0, schema.arguments()[0].type(), sym().to_fp32, devices);
        return;
      case CastPolicy::Fp32SetOptDtype:
        castUnlessDtype(node, schema, devices);
        return;
      case CastPolicy::Promote:
        promoteInputs(node, schema, devices);
        return;
      default:
        return;
    }
  }

  // Is `value` already the output of cast `kind` for `devices`, possibly
  // behind other smart casts? (A second run of the pass adds nothing.)
  static bool alreadyCast(
      const Value* value,
      Symbol kind,
      const std::string& devices) {
    while (isSmartCast(value->node())) {
      const Node* producer = value->node();
      if (producer->kind() == kind && devicesOf(producer) == devices) {
        return true;
      }
      value = producer->input(value->offset());
    }
    return false;
  }

  Node* createCast(
      Symbol kind,
      at::ArrayRef<Value*> inputs,
      const std::vector<TypePtr>& output_types,
      Node* before) {
    std::vector<Value*> with_region(inputs.begin(), inputs.end());
    with_region.push_back(currentRegion());
    WithInsertPoint guard(before);
    Node* cast = graph_->create(kind, with_region, output_types.size());
    for (size_t i = 0; i < output_types.size(); ++i) {
      cast->output(i)->setType(output_types[i]);
    }
    cast->setSourceRange(before->sourceRange());
    graph_->insertNode(cast);
    GRAPH_UPDATE("Inserted ", *cast, " for ", *before);
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
    Value* devices_value = insertDevices(devices);
    Node* cast =
        createCast(kind, {value, devices_value}, {output_type}, node);
    node->replaceInput(index, cast->output());
  }

  // fp32_set_opt_dtype (softmax, sum, cumsum, ... on CUDA): float32 unless
  // the call gives a dtype.
  void castUnlessDtype(
      Node* node,
      const FunctionSchema& schema,
      const std::string& devices) {
    const auto index = schema.argumentIndexWithName("dtype");
    if (!index || *index >= node->inputs().size()) {
      castInput(node, 0, schema.arguments()[0].type(), sym().to_fp32, devices);
      return;
    }
    Value* dtype = node->input(*index);
    if (dtype->type()->kind() == TypeKind::NoneType) {
      castInput(node, 0, schema.arguments()[0].type(), sym().to_fp32, devices);
      return;
    }
    if (auto constant = toIValue(dtype); constant && !constant->isNone()) {
      return; // an explicit dtype: eager leaves the op alone
    }
    Value* self = node->input(0);
    if (!isTensor(self->type()) || alreadyCast(self, sym().to_fp32, devices)) {
      return;
    }
    Value* devices_value = insertDevices(devices);
    Node* cast = createCast(
        sym().to_fp32, {self, devices_value, dtype}, {TensorType::get()}, node);
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
    for (size_t i = 0; i < node->inputs().size() &&
         i < schema.arguments().size();
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
          sym().promote,
          devices);
      return;
    }
    // index_put.hacked_twin's Tensor[] indices are integer tensors: eager's
    // promote never looks at them.
    if (indices.size() < 2 || indices.size() > 4 ||
        alreadyCast(node->input(indices[0]), sym().promote, devices)) {
      return;
    }
    std::vector<Value*> inputs;
    std::vector<TypePtr> types;
    for (size_t i : indices) {
      inputs.push_back(node->input(i));
      types.push_back(TensorType::get());
    }
    inputs.push_back(insertDevices(devices));
    Node* cast = createCast(sym().promote, inputs, types, node);
    for (size_t k = 0; k < indices.size(); ++k) {
      node->replaceInput(indices[k], cast->output(k));
    }
  }

  // One constant per device set, at the top of the graph.
  Value* insertDevices(const std::string& devices) {
    auto it = devices_constants_.find(devices);
    if (it != devices_constants_.end()) {
      return it->second;
    }
    WithInsertPoint guard(graph_->block()->nodes().front());
    Value* value = graph_->insertConstant(devices);
    devices_constants_.emplace(devices, value);
    return value;
  }

  std::shared_ptr<Graph> graph_;
  std::vector<OpenScope> open_;
  Value* caller_region_ = nullptr;
  std::map<std::string, Value*> devices_constants_;
  bool changed_ = false;
};

} // namespace

bool RewriteAutocast(const std::shared_ptr<Graph>& graph) {
  return AutocastRewriter(graph).run();
}

} // namespace jitamp
