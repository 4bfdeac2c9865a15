// KV cache sizes (§6.3, §6.4) and per-device scratch: CudaBackend::allocate_scratch for the
// engine layout, the §5.5 arena plus RoPE tables and logits for the ExLlamaV2 layout.
#include <algorithm>
#include <cctype>
#include <numeric>

#include "exl/error.h"
#include "exl/kernels/exl3_splits.h"
#include "exl/plan.h"

namespace exl::plan {

const char* layout_name(Layout l) { return l == Layout::engine ? "engine" : "exllamav2"; }

Layout parse_layout(const std::string& s) {
  if (s == "engine") return Layout::engine;
  if (s == "exllamav2" || s == "exl2" || s == "reference") return Layout::exllamav2;
  throw Error(ErrorKind::invalid_argument, "layout must be 'engine' or 'exllamav2' (got '" + s + "')", "", "--layout");
}

CacheSpec parse_cache(const std::string& text) {
  std::string s;
  for (char c : text) s += char(std::tolower(static_cast<unsigned char>(c)));
  CacheSpec c;
  c.name = s;
  auto bad = [&] {
    return Error(ErrorKind::invalid_argument,
                 "cache type must be fp16, fp32, fp8, q8, q6, q4 or kXvY with X, Y in 4, 6, 8 (got '" + text + "')",
                 "", "--cache");
  };
  if (s == "fp16" || s == "f16") { c.k_bits = c.v_bits = 16; c.name = "fp16"; }
  else if (s == "fp32" || s == "f32") { c.k_bits = c.v_bits = 32; c.name = "fp32"; }
  else if (s == "fp8" || s == "8bit") { c.k_bits = c.v_bits = 8; c.fp8 = true; c.name = "fp8"; }
  else if (s == "q8") { c.k_bits = c.v_bits = 8; }
  else if (s == "q6") { c.k_bits = 8; c.v_bits = 4; }  // §6.3: "Q6" is 8-bit keys, 4-bit values
  else if (s == "q4") { c.k_bits = c.v_bits = 4; }
  else if (s.size() == 4 && s[0] == 'k' && s[2] == 'v' && std::isdigit(static_cast<unsigned char>(s[1])) &&
           std::isdigit(static_cast<unsigned char>(s[3]))) {
    c.k_bits = s[1] - '0';
    c.v_bits = s[3] - '0';
    auto ok = [](int b) { return b == 4 || b == 6 || b == 8; };
    if (!ok(c.k_bits) || !ok(c.v_bits)) throw bad();
  } else {
    throw bad();
  }
  return c;
}

CacheSpec cache_spec(const CacheOptions& o) {
  const char* names[] = {"fp32", "fp16", "fp8", "q8", "q6", "q4"};  // CacheType order
  CacheSpec c = parse_cache(names[static_cast<int>(o.type)]);
  if (o.k_bits == 0 && o.v_bits == 0) return c;
  if (o.k_bits) c.k_bits = o.k_bits;
  if (o.v_bits) c.v_bits = o.v_bits;
  c.fp8 = false;
  c.name = "k" + std::to_string(c.k_bits) + "v" + std::to_string(c.v_bits);
  return c;
}

double cache_bytes_per_token_layer(const ModelConfig& c, const CacheSpec& cache) {
  const double d = double(c.num_kv_heads) * c.head_dim;
  if (!cache.quantized()) return d * (cache.k_bits + cache.v_bits) / 8.0;  // fp32, fp16, fp8
  // Q: packed values plus one fp16 scale per 32 stored elements, for K and for V.
  return d * (cache.k_bits + cache.v_bits) / 8.0 + 2.0 * (d / 32.0) * 2.0;
}

std::int64_t cache_tokens(const ModelConfig& c, const CacheSpec& cache, std::int64_t context, Layout layout) {
  std::int64_t s = std::max<std::int64_t>(context, 1);
  (void)layout;
  s = (s + 255) / 256 * 256;  // pages of 256 tokens: our paged cache, ExLlamaV2's dynamic generator
  if (cache.quantized()) {
    const std::int64_t kv_dim = std::int64_t(c.num_kv_heads) * c.head_dim;
    const std::int64_t q_block = 512 / std::gcd(kv_dim, std::int64_t(512));
    s = (s + q_block - 1) / q_block * q_block;
  }
  return s;
}

std::uint64_t head_scratch_bytes(const ModelShape& m, const PlanOptions& o, std::int64_t tokens,
                                 std::vector<std::uint64_t>* buffers) {
  std::vector<std::uint64_t> b;
  if (o.layout == Layout::engine) {
    const std::uint64_t vocab = std::uint64_t(m.config.vocab_size);
    const std::uint64_t C = std::uint64_t(std::min<std::int64_t>(o.max_chunk, tokens));
    const std::uint64_t logit_rows = std::max<std::uint64_t>(1, std::min<std::uint64_t>(C, (256ull << 20) / (vocab * 4)));
    b.push_back(logit_rows * vocab * 4);
    // The device sampler (kernels/cuda/sampler.cu): settings blob (header, penalty window of the
    // context + 64, 65536 bias/ban edits of 12 bytes), weights and keys per vocabulary entry, the
    // first launch's candidates (logit and id per entry, 32 bytes per slice of 1024) and the
    // second launch's scratch (64 bytes, 9 histograms of 2048 u64, per slice 1024 u64 and 16
    // bytes: candidate_bytes in kernels/cuda/sampler.h), result.
    b.push_back(256 + 8 * (std::uint64_t(tokens) + 64) + 12 * 65536);
    b.push_back(vocab * 4);
    b.push_back(vocab * 4);
    const std::uint64_t slices = (vocab + 1023) / 1024;
    b.push_back(vocab * 8 + slices * 32 + 64 + 9 * 2048 * 8 + slices * (1024 * 8 + 16));
    b.push_back(16);
  }
  if (buffers) *buffers = b;
  return std::accumulate(b.begin(), b.end(), std::uint64_t(0));
}

std::uint64_t scratch_bytes(const ModelShape& m, const PlanOptions& o, std::int64_t tokens,
                            std::vector<std::uint64_t>* buffers, bool head) {
  const ModelConfig& c = m.config;
  const std::uint64_t h = std::uint64_t(c.hidden_size), nh = std::uint64_t(c.num_heads), hd = std::uint64_t(c.head_dim);
  const std::uint64_t qd = nh * hd, kd = std::uint64_t(c.num_kv_heads) * hd, inter = std::uint64_t(c.intermediate_size);
  const std::uint64_t B = std::uint64_t(std::max(1, o.batch));
  std::uint64_t max_dq = 0;
  for (const ModuleBytes& l : m.layers) max_dq = std::max(max_dq, l.max_dq_elems);
  std::vector<std::uint64_t> b;
  if (o.layout == Layout::engine) {
    const std::uint64_t C = std::uint64_t(std::min<std::int64_t>(o.max_chunk, tokens));
    const std::uint64_t wide = std::max({h, qd, inter});
    // residual, activations, q|k|v, q fp16, attention out, gate|up
    b = {C * h * 4, C * wide * 2, C * (qd + 2 * kd) * 4, C * qd * 2, C * qd * 2, C * inter * 2 * 4};
    // two reconstruct buffers for the prefill path (the next linear's reconstruct beside the GEMM;
    // EXL3's W-hat too)
    std::uint64_t max_dq_all = max_dq;
    for (const ModuleBytes& l : m.layers)
      for (const auto& [k, n] : l.exl3) max_dq_all = std::max(max_dq_all, std::uint64_t(k) * std::uint64_t(n));
    for (int i = 0; i < 2; ++i) b.push_back(C <= 16 ? 0 : max_dq_all * 2);
    // EXL3: the transformed input and the products, passes of up to exl3_pass_rows rows of a layer's linears
    // (8 for the GEMV, times its K splits) and one row of the head (CudaBackend::allocate_scratch).
    std::uint64_t xr = 0, z = 0, tickets = 0;
    const int sm = std::max(1, o.sm_count);
    auto exl3_needs = [&](const ModuleBytes& mod, std::uint64_t rows) {
      const std::uint64_t r = std::min(rows, C);
      for (const auto& [k, n] : mod.exl3) {
        const std::uint64_t splits = std::uint64_t(exl3_gemv_splits(k, n, sm)), K = std::uint64_t(k), N = std::uint64_t(n);
        xr = std::max({xr, K, r * K});
        z = std::max({z, splits * N, std::min<std::uint64_t>(r, 8) * splits * N, r * N});
        tickets = std::max(tickets, N / 128);
      }
    };
    for (const ModuleBytes& l : m.layers) {
      exl3_needs(l, std::uint64_t(exl3_pass_rows));
      // decode's grouped launches (q, k, v; gate, up): a layer's one-row products side by side
      std::uint64_t side_z = 0, side_tickets = 0;
      for (const auto& [k, n] : l.exl3) {
        side_z += std::uint64_t(exl3_gemv_splits(k, n, sm)) * std::uint64_t(n);
        side_tickets += std::uint64_t(n) / 128;
      }
      z = std::max(z, side_z);
      tickets = std::max(tickets, side_tickets);
    }
    if (head) exl3_needs(m.head, 1);
    if (xr) b.push_back(xr * 2);
    if (z) b.push_back((z + tickets) * 4);  // and the decode GEMV's tickets after the products
    // decode attention: about four CTAs per multiprocessor over the KV heads
    const std::uint64_t sms = std::uint64_t(std::max(1, o.sm_count)), nkv = std::uint64_t(c.num_kv_heads);
    const std::uint64_t decode_splits =
        std::max<std::uint64_t>(1, std::min<std::uint64_t>((std::uint64_t(tokens) + 15) / 16, 4 * sms / nkv));
    const std::uint64_t chunk_splits = std::max<std::uint64_t>(
        1, std::min<std::uint64_t>(decode_splits, (64ull << 20) / (C * nh * (hd + 2) * 4)));
    const std::uint64_t splits = std::max(decode_splits, (std::uint64_t(tokens) + 255) / 256);
    b.push_back(std::max(splits * nh * (hd + 2), C * nh * chunk_splits * (hd + 2)) * 4);  // attention partials
    b.push_back((4ull << 20) * 4 + (1ull << 16) * 4);  // EXL2 GEMV split-K partials and counters
    b.push_back(nkv * 4);                                // the decode step's split counters
    if (head) {  // logits and the device sampler: on the device holding the head
      std::vector<std::uint64_t> hb;
      head_scratch_bytes(m, o, tokens, &hb);
      b.insert(b.end(), hb.begin(), hb.end());
    }
    b.push_back(16);     // step
    b.push_back(C * 4);  // ids
    // A quantized K or V store stages the chunk's rows in fp16 (kernels/cuda/kv_cache.cu).
    const std::uint64_t stores = (o.cache.k_bits < 16 ? 1 : 0) + (o.cache.v_bits < 16 ? 1 : 0);
    if (stores) b.push_back(stores * C * kd * 2);
    // The fused path of chunks up to 16 tokens (every decoder layer EXL2; here: every layer has an
    // EXL2 linear): two alternating sets of q|k|v and gate|up accumulators; and the residual (always:
    // a fused segment hands it on so), each element an exact accumulator (int64; exact_acc.cuh).
    const bool fused = !m.layers.empty() && std::all_of(m.layers.begin(), m.layers.end(),
                                                        [](const ModuleBytes& l) { return l.max_dq_elems > 0; });
    const std::uint64_t F = std::min<std::uint64_t>(C, 16);
    if (fused) {
      b.push_back(2 * F * (qd + 2 * kd) * 8);
      b.push_back(2 * F * inter * 2 * 8);
    }
    b.push_back(F * h * 8);
  } else {
    const std::uint64_t L = std::uint64_t(std::min<std::int64_t>(o.max_chunk, tokens));
    const std::uint64_t max_dq_size = 512ull << 20;
    const std::uint64_t dq = 2 * std::min(max_dq, max_dq_size);
    const std::uint64_t attn = L * B * std::max(qd, h) * 2 + 128 + dq;
    const std::uint64_t mlp = L * B * h * 2 + 128 + 2 * (L * B * std::max(h, inter) * 2 + 128) + dq;
    const std::uint64_t head = 2 * std::min(m.head.max_dq_elems, max_dq_size);
    b = {std::max({attn, mlp, head})};
  }
  if (buffers) *buffers = b;
  return std::accumulate(b.begin(), b.end(), std::uint64_t(0));
}

}  // namespace exl::plan
