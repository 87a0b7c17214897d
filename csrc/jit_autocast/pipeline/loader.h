// Kernel of jitamp::prepare_loaded (loader.cpp), registered in
// library.cpp.
#pragma once

#include <ATen/core/ivalue.h>

namespace jitamp {

void prepareLoaded(const c10::IValue& loader, bool simple_executor);

} // namespace jitamp
