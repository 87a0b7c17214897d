// Eager autocast's op lists for torch 2.13, by device. See policy_table.h.
#include "policy_table.h"

#include <unordered_map>

namespace jitamp {
namespace {

using P = CastPolicy;

// {op, overload, CPU policy, CUDA policy}. Generated once from the
// dispatcher's AutocastCPU / AutocastCUDA registrations and the policy macros
// in ATen/autocast_mode.h; kept in sync by tests/test_policy_table.py.
const std::vector<OpPolicy> kTable = {
    {"aten::_addmm_activation", "", P::LowerPrecisionFp, P::None},
    {"aten::_convolution", "", P::None, P::LowerPrecisionFp},
    {"aten::_convolution", "deprecated", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::_grid_sampler_2d_cpu_fallback", "", P::Fp32, P::None},
    {"aten::_lu_with_info", "", P::Fp32, P::None},
    {"aten::_native_multi_head_attention", "", P::LowerPrecisionFp, P::None},
    {"aten::_scaled_dot_product_flash_attention", "", P::None, P::LowerPrecisionFp},
    {"aten::_thnn_fused_gru_cell", "", P::None, P::LowerPrecisionFp},
    {"aten::_thnn_fused_lstm_cell", "", P::None, P::LowerPrecisionFp},
    {"aten::_upsample_bicubic2d_aa", "", P::None, P::Fp32},
    {"aten::_upsample_bilinear2d_aa", "", P::None, P::Fp32},
    {"aten::_upsample_nearest_exact1d", "", P::None, P::Fp32},
    {"aten::_upsample_nearest_exact2d", "", P::None, P::Fp32},
    {"aten::_upsample_nearest_exact3d", "", P::None, P::Fp32},
    {"aten::acos", "", P::None, P::Fp32},
    {"aten::adaptive_avg_pool3d", "", P::Fp32, P::None},
    {"aten::adaptive_max_pool3d", "", P::Fp32, P::None},
    {"aten::addbmm", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::addcdiv", "", P::None, P::Promote},
    {"aten::addcmul", "", P::None, P::Promote},
    {"aten::addmm", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::addmv", "", P::None, P::LowerPrecisionFp},
    {"aten::addr", "", P::None, P::LowerPrecisionFp},
    {"aten::asin", "", P::None, P::Fp32},
    {"aten::atan2", "", P::None, P::Promote},
    {"aten::avg_pool3d", "", P::Fp32, P::None},
    {"aten::baddbmm", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::bilinear", "", P::None, P::Promote},
    {"aten::binary_cross_entropy", "", P::Fp32, P::Banned},
    {"aten::binary_cross_entropy_with_logits", "", P::Fp32, P::Fp32},
    {"aten::bmm", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::cat", "", P::Promote, P::None},
    {"aten::cdist", "", P::Fp32, P::Fp32},
    {"aten::chain_matmul", "", P::None, P::LowerPrecisionFp},
    {"aten::cholesky", "", P::Fp32, P::None},
    {"aten::cholesky_inverse", "", P::Fp32, P::None},
    {"aten::cholesky_solve", "", P::Fp32, P::None},
    {"aten::conv1d", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::conv1d", "padding", P::LowerPrecisionFp, P::None},
    {"aten::conv2d", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::conv2d", "padding", P::LowerPrecisionFp, P::None},
    {"aten::conv3d", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::conv3d", "padding", P::LowerPrecisionFp, P::None},
    {"aten::conv_tbc", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::conv_transpose1d", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::conv_transpose2d", "input", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::conv_transpose3d", "input", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::convolution", "", P::None, P::LowerPrecisionFp},
    {"aten::cosh", "", P::None, P::Fp32},
    {"aten::cosine_embedding_loss", "", P::Fp32, P::Fp32},
    {"aten::cosine_similarity", "", P::None, P::Fp32},
    {"aten::cross", "", P::None, P::Promote},
    // F.cross_entropy on CUDA has no kernel of its own: log_softmax (fp32
    // output) then nll_loss (fp32).
    {"aten::cross_entropy_loss", "", P::Fp32, P::Fp32, false, true},
    {"aten::ctc_loss", "IntList", P::Fp32, P::None},
    {"aten::ctc_loss", "Tensor", P::Fp32, P::None},
    {"aten::cudnn_convolution", "", P::None, P::LowerPrecisionFp},
    {"aten::cudnn_convolution_transpose", "", P::None, P::LowerPrecisionFp},
    {"aten::cumprod", "", P::None, P::Fp32SetOptDtype},
    {"aten::cumsum", "", P::None, P::Fp32SetOptDtype},
    {"aten::dist", "", P::None, P::Fp32},
    {"aten::dot", "", P::None, P::Promote},
    {"aten::einsum", "", P::None, P::LowerPrecisionFp},
    {"aten::erfinv", "", P::None, P::Fp32},
    {"aten::exp", "", P::None, P::Fp32},
    {"aten::expm1", "", P::None, P::Fp32},
    {"aten::fake_quantize_per_tensor_affine", "", P::Fp32, P::None},
    {"aten::fft_fft", "", P::Fp32, P::None},
    {"aten::fft_fft2", "", P::Fp32, P::None},
    {"aten::fft_fftn", "", P::Fp32, P::None},
    {"aten::fft_hfft", "", P::Fp32, P::None},
    {"aten::fft_ifft", "", P::Fp32, P::None},
    {"aten::fft_ifft2", "", P::Fp32, P::None},
    {"aten::fft_ifftn", "", P::Fp32, P::None},
    {"aten::fft_ihfft", "", P::Fp32, P::None},
    {"aten::fft_irfft", "", P::Fp32, P::None},
    {"aten::fft_irfft2", "", P::Fp32, P::None},
    {"aten::fft_irfftn", "", P::Fp32, P::None},
    {"aten::fft_rfft", "", P::Fp32, P::None},
    {"aten::fft_rfft2", "", P::Fp32, P::None},
    {"aten::fft_rfftn", "", P::Fp32, P::None},
    {"aten::fractional_max_pool2d", "", P::Fp32, P::None},
    {"aten::fractional_max_pool3d", "", P::Fp32, P::None},
    {"aten::frobenius_norm", "dim", P::None, P::Fp32},
    {"aten::geqrf", "", P::Fp32, P::None},
    {"aten::grid_sampler", "", P::Fp32, P::Promote},
    {"aten::grid_sampler_2d", "", P::Fp32, P::None},
    {"aten::grid_sampler_3d", "", P::Fp32, P::None},
    {"aten::group_norm", "", P::None, P::Fp32},
    {"aten::gru_cell", "", P::None, P::LowerPrecisionFp},
    {"aten::hinge_embedding_loss", "", P::Fp32, P::Fp32},
    {"aten::huber_loss", "", P::Fp32, P::Fp32},
    {"aten::index_copy", "", P::Promote, P::None},
    {"aten::index_put", "", P::None, P::Promote},
    {"aten::inverse", "", P::Fp32, P::None},
    {"aten::kl_div", "", P::Fp32, P::Fp32},
    {"aten::l1_loss", "", P::Fp32, P::Fp32},
    {"aten::layer_norm", "", P::None, P::Fp32},
    {"aten::linalg_cholesky", "", P::Fp32, P::None},
    {"aten::linalg_cholesky_ex", "", P::Fp32, P::None},
    {"aten::linalg_cond", "", P::Fp32, P::None},
    {"aten::linalg_cond", "p_str", P::Fp32, P::None},
    {"aten::linalg_eig", "", P::Fp32, P::None},
    {"aten::linalg_eigh", "", P::Fp32, P::None},
    {"aten::linalg_eigvals", "", P::Fp32, P::None},
    {"aten::linalg_eigvalsh", "", P::Fp32, P::None},
    {"aten::linalg_householder_product", "", P::Fp32, P::None},
    {"aten::linalg_inv", "", P::Fp32, P::None},
    {"aten::linalg_inv_ex", "", P::Fp32, P::None},
    {"aten::linalg_lstsq", "", P::Fp32, P::None},
    {"aten::linalg_matrix_norm", "", P::None, P::Fp32SetOptDtype},
    {"aten::linalg_matrix_norm", "str_ord", P::None, P::Fp32SetOptDtype},
    {"aten::linalg_matrix_rank", "", P::Fp32, P::None},
    {"aten::linalg_matrix_rank", "atol_rtol_float", P::Fp32, P::None},
    {"aten::linalg_matrix_rank", "atol_rtol_tensor", P::Fp32, P::None},
    {"aten::linalg_matrix_rank", "tol_tensor", P::Fp32, P::None},
    {"aten::linalg_multi_dot", "", P::None, P::LowerPrecisionFp},
    {"aten::linalg_qr", "", P::Fp32, P::None},
    {"aten::linalg_solve", "", P::Fp32, P::None},
    {"aten::linalg_svd", "", P::Fp32, P::None},
    {"aten::linalg_svdvals", "", P::Fp32, P::None},
    {"aten::linalg_tensorinv", "", P::Fp32, P::None},
    {"aten::linalg_tensorsolve", "", P::Fp32, P::None},
    {"aten::linalg_vecdot", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::linalg_vector_norm", "", P::None, P::Fp32SetOptDtype},
    {"aten::linear", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::log", "", P::None, P::Fp32},
    {"aten::log10", "", P::None, P::Fp32},
    {"aten::log1p", "", P::None, P::Fp32},
    {"aten::log2", "", P::None, P::Fp32},
    {"aten::log_softmax", "int", P::None, P::Fp32SetOptDtype},
    {"aten::logsumexp", "", P::None, P::Fp32},
    {"aten::lstm_cell", "", P::None, P::LowerPrecisionFp},
    {"aten::lu_solve", "", P::Fp32, P::None},
    {"aten::margin_ranking_loss", "", P::Fp32, P::Fp32},
    {"aten::matmul", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::max_pool3d", "", P::Fp32, P::None},
    {"aten::max_unpool2d", "", P::Fp32, P::None},
    {"aten::max_unpool3d", "", P::Fp32, P::None},
    {"aten::mkldnn_rnn_layer", "", P::LowerPrecisionFp, P::None},
    {"aten::mm", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::mse_loss", "", P::Fp32, P::Fp32},
    {"aten::multi_margin_loss", "", P::Fp32, P::Fp32},
    {"aten::multilabel_margin_loss", "", P::Fp32, P::Fp32},
    {"aten::multilabel_margin_loss_forward", "", P::Fp32, P::None},
    {"aten::mv", "", P::None, P::LowerPrecisionFp},
    {"aten::nanquantile", "", P::Fp32, P::None},
    {"aten::nanquantile", "scalar", P::Fp32, P::None},
    {"aten::native_layer_norm", "", P::None, P::Fp32},
    {"aten::nll_loss", "", P::Fp32, P::Fp32},
    {"aten::nll_loss2d", "", P::Fp32, P::Fp32},
    {"aten::norm", "Scalar", P::None, P::Fp32AppendDtype},
    {"aten::norm", "ScalarOpt_dim", P::None, P::Fp32AppendDtype},
    {"aten::nuclear_norm", "", P::None, P::Fp32},
    {"aten::nuclear_norm", "dim", P::None, P::Fp32},
    {"aten::orgqr", "", P::Fp32, P::None},
    {"aten::ormqr", "", P::Fp32, P::None},
    {"aten::pdist", "", P::None, P::Fp32},
    {"aten::pinverse", "", P::Fp32, P::None},
    {"aten::poisson_nll_loss", "", P::Fp32, P::Fp32},
    {"aten::polar", "", P::Fp32, P::None},
    {"aten::pow", "Scalar", P::None, P::Fp32},
    {"aten::pow", "Tensor_Scalar", P::None, P::Fp32},
    {"aten::pow", "Tensor_Tensor", P::None, P::Fp32},
    {"aten::prelu", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::prod", "", P::Fp32, P::Fp32SetOptDtype},
    {"aten::prod", "dim_int", P::Fp32, P::Fp32SetOptDtype},
    {"aten::qr", "", P::Fp32, P::None},
    {"aten::quantile", "", P::Fp32, P::None},
    {"aten::quantile", "scalar", P::Fp32, P::None},
    {"aten::reciprocal", "", P::None, P::Fp32},
    {"aten::reflection_pad1d", "", P::Fp32, P::None},
    {"aten::reflection_pad2d", "", P::Fp32, P::None},
    {"aten::renorm", "", P::None, P::Fp32},
    {"aten::replication_pad1d", "", P::Fp32, P::None},
    {"aten::replication_pad2d", "", P::Fp32, P::None},
    {"aten::replication_pad3d", "", P::Fp32, P::None},
    {"aten::rms_norm", "", P::None, P::Fp32},
    {"aten::rnn_relu_cell", "", P::None, P::LowerPrecisionFp},
    {"aten::rnn_tanh_cell", "", P::None, P::LowerPrecisionFp},
    {"aten::rsqrt", "", P::None, P::Fp32},
    {"aten::scaled_dot_product_attention", "", P::LowerPrecisionFp, P::LowerPrecisionFp},
    {"aten::scatter_add", "", P::None, P::Promote},
    {"aten::sinh", "", P::None, P::Fp32},
    {"aten::smooth_l1_loss", "", P::Fp32, P::Fp32},
    {"aten::soft_margin_loss", "", P::Fp32, P::Fp32},
    {"aten::softmax", "int", P::None, P::Fp32SetOptDtype},
    {"aten::softplus", "", P::None, P::Fp32},
    {"aten::stack", "", P::Promote, P::None},
    {"aten::stft", "", P::Fp32, P::None},
    {"aten::stft", "center", P::Fp32, P::None},
    {"aten::sum", "", P::None, P::Fp32SetOptDtype},
    {"aten::sum", "dim_IntList", P::None, P::Fp32SetOptDtype},
    {"aten::svd", "", P::Fp32, P::None},
    {"aten::tan", "", P::None, P::Fp32},
    {"aten::tensordot", "", P::None, P::Promote},
    {"aten::trace", "", P::Fp32, P::None},
    {"aten::triangular_solve", "", P::Fp32, P::None},
    {"aten::triplet_margin_loss", "", P::Fp32, P::Fp32},
    {"aten::upsample_bicubic2d", "", P::None, P::Fp32},
    {"aten::upsample_bilinear2d", "", P::None, P::Fp32},
    {"aten::upsample_linear1d", "", P::None, P::Fp32},
    {"aten::upsample_nearest1d", "", P::None, P::Fp32},
    {"aten::upsample_nearest2d", "", P::None, P::Fp32},
    {"aten::upsample_nearest3d", "", P::None, P::Fp32},
    {"aten::upsample_trilinear3d", "", P::None, P::Fp32},
    {"aten::vdot", "", P::None, P::Promote},
    {"aten::view_as_complex", "", P::Fp32, P::None},

    // Ops TorchScript calls where eager reaches a listed op underneath.
    // F.nll_loss: eager and script both call nll_loss_nd, which dispatches to
    // nll_loss / nll_loss2d (fp32 on both devices).
    {"aten::nll_loss_nd", "", P::Fp32, P::Fp32, true, true},
    // F.interpolate: the .vec overloads (eager and script alike) always
    // decompose to the listed default overloads (fp32 on CUDA).
    {"aten::upsample_nearest1d", "vec", P::None, P::Fp32, false, true},
    {"aten::upsample_nearest2d", "vec", P::None, P::Fp32, false, true},
    {"aten::upsample_nearest3d", "vec", P::None, P::Fp32, false, true},
    {"aten::_upsample_nearest_exact1d", "vec", P::None, P::Fp32, false, true},
    {"aten::_upsample_nearest_exact2d", "vec", P::None, P::Fp32, false, true},
    {"aten::_upsample_nearest_exact3d", "vec", P::None, P::Fp32, false, true},
    {"aten::upsample_linear1d", "vec", P::None, P::Fp32, false, true},
    {"aten::upsample_bilinear2d", "vec", P::None, P::Fp32, false, true},
    {"aten::_upsample_bilinear2d_aa", "vec", P::None, P::Fp32, false, true},
    {"aten::upsample_trilinear3d", "vec", P::None, P::Fp32, false, true},
    {"aten::upsample_bicubic2d", "vec", P::None, P::Fp32, false, true},
    {"aten::_upsample_bicubic2d_aa", "vec", P::None, P::Fp32, false, true},
    // torch.index_put in TorchScript: a JIT-only overload taking Tensor[]
    // indices, which calls aten::index_put (promote on CUDA).
    {"aten::index_put", "hacked_twin", P::None, P::Promote, false, true},
    // Not here: aten::pad (whether it reaches reflection_pad*/replication_pad*
    // depends on its mode and the input's rank at run time), einsum on CPU
    // (whether it reaches bmm depends on the equation): the dispatcher
    // applies eager's policy to what they call, which is what matters for
    // the values.
};

struct Key {
  std::string name;
  std::string overload;
  bool operator==(const Key& other) const {
    return name == other.name && overload == other.overload;
  }
};

struct KeyHash {
  size_t operator()(const Key& key) const {
    return std::hash<std::string>()(key.name) * 31 +
        std::hash<std::string>()(key.overload);
  }
};

const std::unordered_map<Key, const OpPolicy*, KeyHash>& index() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<Key, const OpPolicy*, KeyHash>();
    for (const auto& entry : policyTable()) {
      (*m)[Key{entry.name, entry.overload}] = &entry;
    }
    return m;
  }();
  return *map;
}

} // namespace

const std::vector<OpPolicy>& policyTable() {
  return kTable;
}

const OpPolicy* lookupPolicy(const std::string& name, const std::string& overload) {
  const auto& map = index();
  auto it = map.find(Key{name, overload});
  return it == map.end() ? nullptr : it->second;
}

const char* policyName(CastPolicy policy) {
  switch (policy) {
    case P::None:
      return "none";
    case P::LowerPrecisionFp:
      return "lower_precision_fp";
    case P::Fp32:
      return "fp32";
    case P::Fp32SetOptDtype:
      return "fp32_set_opt_dtype";
    case P::Fp32AppendDtype:
      return "fp32_append_dtype";
    case P::Promote:
      return "promote";
    case P::Banned:
      return "banned";
  }
  return "?";
}

} // namespace jitamp
