// Kernels that frozen models run in place of ATen's (frozen_kernels.cpp),
// registered in library.cpp. Each returns eager's bits.
#pragma once

#include <ATen/core/Tensor.h>

namespace jitamp {

// jitamp::max_pool2d (passes/pool_channels_last.h): aten::max_pool2d,
// run on a channels-last copy of an NCHW-contiguous CPU tensor and copied
// back (both copies jitamp's own blocked transposes: ATen's copy_ between
// the layouts goes element by element). ATen's channels-last kernel takes each window's maximum in the same
// order as its NCHW kernel (a maximum is one of the window's elements, the
// first of equal ones, a NaN the last of the window's NaNs), vectorized
// over channels where the NCHW kernel goes element by element: 3-10 times
// faster in bfloat16 and float16 on CPU. Only a bfloat16 NaN differs: the
// NCHW kernel rounds through float and returns 0x7fc0, the vectorized
// channels-last one 0xffff, so bfloat16 NaNs are written back as 0x7fc0.
// Anything else (a layout, device, dtype or rank that is not that, an input
// already channels-last, a call autograd records) is eager's own call.
at::Tensor maxPool2d(
    const at::Tensor& self,
    at::IntArrayRef kernel_size,
    at::IntArrayRef stride,
    at::IntArrayRef padding,
    at::IntArrayRef dilation,
    bool ceil_mode);

} // namespace jitamp
