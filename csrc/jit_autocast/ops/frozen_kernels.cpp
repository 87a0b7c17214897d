#include "ops/frozen_kernels.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/max_pool2d.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace jitamp {

namespace {

// Layout copies between NCHW and channels-last: per image, a C x HW
// matrix transposed to HW x C (or back). ATen's copy_ walks the permuted
// tensor element by element (about 1 ns per element on one core here,
// 20 times a clone); this moves 8x8 blocks of 16-bit or 4x4 of 32-bit
// elements through registers (SSE2, x86-64's baseline), within 64x64
// tiles, and the edges one by one. It moves bits: any dtype of the size.
constexpr int64_t kTile = 64;

template <typename T>
void transposeOneByOne(
    const T* in,
    T* out,
    int64_t rows,
    int64_t cols,
    int64_t row_begin,
    int64_t row_end,
    int64_t col_begin,
    int64_t col_end) {
  for (int64_t c = col_begin; c < col_end; ++c) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      out[c * rows + r] = in[r * cols + c];
    }
  }
}

#if defined(__SSE2__)
// A block of n rows of n elements at `in` (row stride `is`) written
// transposed at `out` (row stride `os`): n = 8 of 16 bits, 4 of 32. Written
// out, not in loops over arrays, so that -O2 keeps the block in registers.
inline __m128i load(const void* at) {
  return _mm_loadu_si128(static_cast<const __m128i*>(at));
}

inline void store(void* at, __m128i value) {
  _mm_storeu_si128(static_cast<__m128i*>(at), value);
}

void transposeBlock(const uint16_t* in, int64_t is, uint16_t* out, int64_t os) {
  const __m128i a0 = load(in), a1 = load(in + is), a2 = load(in + 2 * is),
                a3 = load(in + 3 * is), a4 = load(in + 4 * is),
                a5 = load(in + 5 * is), a6 = load(in + 6 * is),
                a7 = load(in + 7 * is);
  // rows 2i and 2i+1 interleaved: columns 0-3 (b0, b2, ...), 4-7 (b1, ...)
  const __m128i b0 = _mm_unpacklo_epi16(a0, a1), b1 = _mm_unpackhi_epi16(a0, a1);
  const __m128i b2 = _mm_unpacklo_epi16(a2, a3), b3 = _mm_unpackhi_epi16(a2, a3);
  const __m128i b4 = _mm_unpacklo_epi16(a4, a5), b5 = _mm_unpackhi_epi16(a4, a5);
  const __m128i b6 = _mm_unpacklo_epi16(a6, a7), b7 = _mm_unpackhi_epi16(a6, a7);
  // two columns of four rows each: c0 columns 0-1 of rows 0-3, c1 2-3, ...
  const __m128i c0 = _mm_unpacklo_epi32(b0, b2), c1 = _mm_unpackhi_epi32(b0, b2);
  const __m128i c2 = _mm_unpacklo_epi32(b1, b3), c3 = _mm_unpackhi_epi32(b1, b3);
  const __m128i c4 = _mm_unpacklo_epi32(b4, b6), c5 = _mm_unpackhi_epi32(b4, b6);
  const __m128i c6 = _mm_unpacklo_epi32(b5, b7), c7 = _mm_unpackhi_epi32(b5, b7);
  store(out, _mm_unpacklo_epi64(c0, c4));
  store(out + os, _mm_unpackhi_epi64(c0, c4));
  store(out + 2 * os, _mm_unpacklo_epi64(c1, c5));
  store(out + 3 * os, _mm_unpackhi_epi64(c1, c5));
  store(out + 4 * os, _mm_unpacklo_epi64(c2, c6));
  store(out + 5 * os, _mm_unpackhi_epi64(c2, c6));
  store(out + 6 * os, _mm_unpacklo_epi64(c3, c7));
  store(out + 7 * os, _mm_unpackhi_epi64(c3, c7));
}

void transposeBlock(const uint32_t* in, int64_t is, uint32_t* out, int64_t os) {
  const __m128i a0 = load(in), a1 = load(in + is), a2 = load(in + 2 * is),
                a3 = load(in + 3 * is);
  const __m128i b0 = _mm_unpacklo_epi32(a0, a1), b1 = _mm_unpackhi_epi32(a0, a1);
  const __m128i b2 = _mm_unpacklo_epi32(a2, a3), b3 = _mm_unpackhi_epi32(a2, a3);
  store(out, _mm_unpacklo_epi64(b0, b2));
  store(out + os, _mm_unpackhi_epi64(b0, b2));
  store(out + 2 * os, _mm_unpacklo_epi64(b1, b3));
  store(out + 3 * os, _mm_unpackhi_epi64(b1, b3));
}
#endif

// out[c * rows + r] = in[r * cols + c] for the rows [r0, r1), a band of
// at most kTile rows, tile by tile.
template <typename T>
void transposeBand(
    const T* in,
    T* out,
    int64_t rows,
    int64_t cols,
    int64_t r0,
    int64_t r1) {
  for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
    const int64_t c1 = std::min(c0 + kTile, cols);
#if defined(__SSE2__)
    constexpr int64_t n = 16 / sizeof(T);
    const int64_t r_blocks = r0 + (r1 - r0) / n * n;
    const int64_t c_blocks = c0 + (c1 - c0) / n * n;
    for (int64_t r = r0; r < r_blocks; r += n) {
      for (int64_t c = c0; c < c_blocks; c += n) {
        transposeBlock(in + r * cols + c, cols, out + c * rows + r, rows);
      }
    }
    transposeOneByOne(in, out, rows, cols, r_blocks, r1, c0, c1);
    transposeOneByOne(in, out, rows, cols, r0, r_blocks, c_blocks, c1);
#else
    transposeOneByOne(in, out, rows, cols, r0, r1, c0, c1);
#endif
  }
}

// Each of `images` matrices of rows x cols at `in` transposed into `out`.
template <typename T>
void transposeImages(
    const void* in,
    void* out,
    int64_t images,
    int64_t rows,
    int64_t cols) {
  const T* from = static_cast<const T*>(in);
  T* to = static_cast<T*>(out);
  // a task is a band of kTile rows; a thread gets 32k elements at least
  const int64_t bands = (rows + kTile - 1) / kTile;
  const int64_t grain = std::max<int64_t>(1, 32768 / (kTile * cols + 1));
  at::parallel_for(0, images * bands, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t image = task / bands;
      const int64_t r0 = task % bands * kTile;
      transposeBand(
          from + image * rows * cols,
          to + image * rows * cols,
          rows,
          cols,
          r0,
          std::min(r0 + kTile, rows));
    }
  });
}

// `to` (empty, of `from`'s sizes and dtype, laid out as `from` is with its
// channels moved) filled with `from`'s elements. `from` is NCHW-contiguous
// and `to` channels-last-contiguous, or the other way round.
void copyLayout(const at::Tensor& from, const at::Tensor& to, bool to_channels_last) {
  const int64_t channels = from.size(1);
  const int64_t pixels = from.size(2) * from.size(3);
  const int64_t rows = to_channels_last ? channels : pixels;
  const int64_t cols = to_channels_last ? pixels : channels;
  TORCH_INTERNAL_ASSERT(from.element_size() == 2 || from.element_size() == 4);
  if (from.element_size() == 2) {
    transposeImages<uint16_t>(
        from.const_data_ptr(), to.data_ptr(), from.size(0), rows, cols);
  } else {
    transposeImages<uint32_t>(
        from.const_data_ptr(), to.data_ptr(), from.size(0), rows, cols);
  }
}

bool poolsInChannelsLast(const at::Tensor& self) {
  const at::ScalarType dtype = self.scalar_type();
  return self.layout() == at::kStrided && self.device().is_cpu() &&
      self.dim() == 4 &&
      (dtype == at::kBFloat16 || dtype == at::kHalf || dtype == at::kFloat) &&
      self.is_contiguous() &&
      !self.is_contiguous(at::MemoryFormat::ChannelsLast) &&
      // autograd's: eager's backward, and no gradient summed in another order
      !(self.requires_grad() && at::GradMode::is_enabled());
}

} // namespace

at::Tensor maxPool2d(
    const at::Tensor& self,
    at::IntArrayRef kernel_size,
    at::IntArrayRef stride,
    at::IntArrayRef padding,
    at::IntArrayRef dilation,
    bool ceil_mode) {
  if (!poolsInChannelsLast(self)) {
    return at::max_pool2d(
        self, kernel_size, stride, padding, dilation, ceil_mode);
  }
  const at::Tensor input = at::empty(
      self.sizes(), self.options().memory_format(at::MemoryFormat::ChannelsLast));
  copyLayout(self, input, /*to_channels_last=*/true);
  const at::Tensor channels_last = at::max_pool2d(
      input,
      kernel_size,
      stride,
      padding,
      dilation,
      ceil_mode);
  // Eager's strides: contiguous() would keep the channels-last ones of a
  // result that is both (1x1 in height and width), which later ops read as
  // channels-last.
  at::Tensor pooled = at::empty(
      channels_last.sizes(),
      channels_last.options().memory_format(at::MemoryFormat::Contiguous));
  if (channels_last.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    copyLayout(channels_last, pooled, /*to_channels_last=*/false);
  } else { // not a layout ATen's kernel gives today
    pooled.copy_(channels_last);
  }
  // max() propagates NaN: one vectorized pass, 20 times cheaper than isnan
  if (self.scalar_type() == at::kBFloat16 && pooled.numel() > 0 &&
      std::isnan(pooled.max().item<float>())) {
    // float's quiet NaN rounds to bfloat16's 0x7fc0, as the NCHW kernel's
    pooled.masked_fill_(
        at::isnan(pooled), std::numeric_limits<float>::quiet_NaN());
  }
  return pooled;
}

} // namespace jitamp
