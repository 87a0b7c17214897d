// What the IR says about the autocast state at a point of a walk over
// lowered IR: for each device type, whether the state is known without
// running the graph (a "static" state) and what it is. Shared by the
// passes that insert, fold, settle, strip and expose casts, and by
// ops/static_casts. Header-only.
//
// A device type's state is static where its innermost open scope gives
// device type, enabled and (when enabled) dtype as constants
// (`autocast_enter.args`, or `autocast_enter` of an autocast object made and
// set once in its block, used only by attribute reads/writes and enter ops)
// and no path may have closed it (OpenScope::maybe_closed). Never static:
// code outside any scope (the caller's state), or beyond a scope whose
// device type is not a constant. The rules in full: docs/frozen.md, 'The
// casts of frozen weights' ("What is static").
#pragma once

#include "ir/jitamp_ir.h"
#include "ir/open_scopes.h"

#include <c10/core/Device.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jitamp {

// The autocast state of one device type.
struct DeviceAutocast {
  bool enabled = false;
  at::ScalarType dtype = at::kBFloat16; // meaningful when enabled

  bool operator==(const DeviceAutocast& other) const {
    return enabled == other.enabled && (!enabled || dtype == other.dtype);
  }
};

// What one scope's enter op sets, as far as the IR tells.
struct ScopeFacts {
  std::optional<c10::DeviceType> device_type; // nullopt: not a constant
  std::optional<DeviceAutocast> state; // nullopt: not static
};

namespace static_scopes_detail {

inline std::optional<c10::IValue> constantOf(torch::jit::Value* value) {
  if (value == nullptr) {
    return std::nullopt;
  }
  return torch::jit::toIValue(value);
}

inline std::optional<c10::DeviceType> deviceTypeOf(const c10::IValue& device) {
  if (!device.isString()) {
    return std::nullopt;
  }
  try {
    return c10::Device(device.toStringRef()).type();
  } catch (const c10::Error&) {
    return std::nullopt; // the enter op raises eager's error at run time
  }
}

// The one value set to `name` on `object`, or nullptr if it is not set
// exactly once, in `block`.
inline torch::jit::Value* setOnce(
    torch::jit::Value* object,
    const char* name,
    const torch::jit::Block* block) {
  torch::jit::Value* found = nullptr;
  for (const torch::jit::Use& use : object->uses()) {
    const torch::jit::Node* user = use.user;
    if (user->kind() != c10::prim::SetAttr || user->s(c10::attr::name) != name) {
      continue;
    }
    if (found != nullptr || user->owningBlock() != block) {
      return nullptr;
    }
    found = user->input(1);
  }
  return found;
}

// The constant device type, dtype and enabled of a scope, or nullptr each
// where the IR does not give a constant.
struct EnterArgs {
  torch::jit::Value* device = nullptr;
  torch::jit::Value* dtype = nullptr;
  torch::jit::Value* enabled = nullptr;
};

inline EnterArgs enterArgs(const torch::jit::Node* enter) {
  if (enter->inputs().size() >= 3) { // autocast_enter.args
    return {enter->input(0), enter->input(1), enter->input(2)};
  }
  torch::jit::Value* object = enter->input(0);
  const torch::jit::Node* made = object->node();
  if (made->kind() != c10::prim::CreateObject) {
    return {};
  }
  for (const torch::jit::Use& use : object->uses()) {
    const auto kind = use.user->kind();
    if (kind != c10::prim::SetAttr && kind != c10::prim::GetAttr &&
        !isEnter(use.user)) {
      return {}; // it escapes: something else may change it
    }
  }
  const torch::jit::Block* block = made->owningBlock();
  return {
      setOnce(object, "device", block),
      setOnce(object, "fast_dtype", block),
      setOnce(object, "_enabled", block)};
}

} // namespace static_scopes_detail

// What the enter op `enter` (jitamp::autocast_enter or .args) sets.
inline ScopeFacts scopeFacts(const torch::jit::Node* enter) {
  using namespace static_scopes_detail;
  const EnterArgs args = enterArgs(enter);
  ScopeFacts facts;
  const auto device = constantOf(args.device);
  if (!device || !(facts.device_type = deviceTypeOf(*device))) {
    return facts;
  }
  const auto enabled = constantOf(args.enabled);
  if (!enabled || !enabled->isBool()) {
    return facts;
  }
  if (!enabled->toBool()) {
    facts.state = DeviceAutocast{false, at::kBFloat16};
    return facts;
  }
  const auto dtype = constantOf(args.dtype);
  if (!dtype || !dtype->isInt()) {
    return facts;
  }
  const auto scalar_type = static_cast<at::ScalarType>(dtype->toInt());
  if (*facts.device_type == c10::DeviceType::CPU) {
    const bool supported =
        scalar_type == at::kBFloat16 || scalar_type == at::kHalf;
    facts.state = DeviceAutocast{supported, scalar_type};
  } else if (*facts.device_type == c10::DeviceType::CUDA) {
    facts.state = DeviceAutocast{true, scalar_type};
  }
  return facts;
}

// OpenScopes (open_scopes.h) with what each open scope sets.
class StaticScopes : private OpenScopes {
 public:
  using OpenScopes::innermost;
  using OpenScopes::track;
  using OpenScopes::walkBlocks;

  // The state of `device_type` at this point, if static. Device types other
  // than CPU and CUDA have no autocast state that a cast reads: off.
  std::optional<DeviceAutocast> stateOf(c10::DeviceType device_type) const {
    if (device_type != c10::DeviceType::CPU &&
        device_type != c10::DeviceType::CUDA) {
      return DeviceAutocast{};
    }
    const auto [scope, facts] = governing(device_type);
    if (scope == nullptr || scope->maybe_closed) {
      // the caller's state, or this scope's or what is outside it
      return std::nullopt;
    }
    return facts.state;
  }

  // The open scope of `device_type` that some path may have closed
  // (OpenScope::maybe_closed) and that governs it here if it is open, or
  // nullptr.
  const OpenScope* maybeClosed(c10::DeviceType device_type) const {
    const OpenScope* scope = governing(device_type).first;
    return scope != nullptr && scope->maybe_closed ? scope : nullptr;
  }

 private:
  // The innermost open scope of `device_type` and what it sets; nullptr
  // where none is open, or where a scope whose device type is not a
  // constant comes first (it might be any device type).
  std::pair<const OpenScope*, ScopeFacts> governing(
      c10::DeviceType device_type) const {
    const std::vector<OpenScope>& open = all();
    for (auto scope = open.rbegin(); scope != open.rend(); ++scope) {
      ScopeFacts facts = scopeFacts(scope->guard->node());
      if (!facts.device_type) {
        break;
      }
      if (*facts.device_type == device_type) {
        return {&*scope, facts};
      }
    }
    return {nullptr, ScopeFacts{}};
  }
};

} // namespace jitamp
