// Frozen models jitamp rewrote: max-pooling in channels-last layout, eager's
// bits in less time (ATen's NCHW bfloat16 and float16 max-pool kernel takes
// most of a small conv net's call on CPU).
#pragma once

#include <memory>

namespace torch::jit {
struct Graph;
struct Module;
} // namespace torch::jit

namespace jitamp {

// Each aten::max_pool2d of `graph` (its blocks and task subgraphs too)
// becomes jitamp::max_pool2d (ops/frozen_kernels.h), which pools an
// NCHW-contiguous CPU tensor in channels-last layout and returns eager's
// bits, and calls aten::max_pool2d for anything else. Returns whether it
// changed the graph.
bool PoolChannelsLast(const std::shared_ptr<torch::jit::Graph>& graph);

// PoolChannelsLast on each method of `module` (a frozen module's code is
// all there), only where a method already needs jitamp's ops: a model that
// loads without jitamp keeps doing so. Returns whether it changed a graph.
bool PoolChannelsLastInModule(const torch::jit::Module& module);

} // namespace jitamp
