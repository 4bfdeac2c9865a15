// The measurement pass (§7.4) and the quantization pass (§7.9, head §7.7) over calibration
// states kept in memory, one decoder block at a time.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

#include "convert_internal.h"
#include "exl/error.h"
#include "exl/kernels/ops.h"

namespace exl::convert_detail {
namespace {

constexpr const char* kAttn[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
constexpr const char* kMlp[] = {"gate_proj", "up_proj", "down_proj"};

using States = std::vector<std::vector<float>>;
using Clock = std::chrono::steady_clock;
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::vector<float>* weight_slot(AttentionWeights& w, const std::string& p) {
  if (p == "q_proj") return &w.q;
  if (p == "k_proj") return &w.k;
  if (p == "v_proj") return &w.v;
  return &w.o;
}
std::vector<float>* weight_slot(MlpWeights& w, const std::string& p) {
  if (p == "gate_proj") return &w.gate;
  if (p == "up_proj") return &w.up;
  return &w.down;
}
const std::vector<float>* bias_slot(const AttentionWeights& w, const std::string& p) {
  if (p == "q_proj") return &w.q_bias;
  if (p == "k_proj") return &w.k_bias;
  if (p == "v_proj") return &w.v_bias;
  return &w.o_bias;
}

// A decoder block of either kind, so both passes treat attention and MLP alike.
struct Block {
  bool attention = true;
  int layer = 0;
  AttentionWeights aw;
  MlpWeights mw;
  std::string key;
  std::vector<const char*> projs() const {
    return attention ? std::vector<const char*>(std::begin(kAttn), std::end(kAttn))
                     : std::vector<const char*>(std::begin(kMlp), std::end(kMlp));
  }
  std::vector<float>& weight(const std::string& p) { return attention ? *weight_slot(aw, p) : *weight_slot(mw, p); }
  std::vector<float> bias(const std::string& p) const { return attention ? *bias_slot(aw, p) : std::vector<float>{}; }
  // Projections fed by the post-norm input use Hessian A; o_proj / down_proj use Hessian B.
  static bool uses_b(const std::string& p) { return p == "o_proj" || p == "down_proj"; }
  void load_into(BlockMath& m, const BlockShape& s) const {
    if (attention) m.load(s, aw);
    else m.load(s, mw);
  }
  // Replaces one projection's weights (and tells the math, which may hold a copy).
  void set(BlockMath& m, const std::string& p, std::vector<float> w) {
    weight(p) = std::move(w);
    m.changed(p);
  }
};

Block load_block(const Source& src, int layer, bool attention) {
  Block b;
  b.attention = attention;
  b.layer = layer;
  b.key = "model.layers." + std::to_string(layer) + (attention ? ".self_attn" : ".mlp");
  if (attention) b.aw = src.attention(layer);
  else b.mw = src.mlp(layer);
  return b;
}

// Runs the FP block over all rows: returns the outputs, and prepares Hessians A and B. Leaves
// `blk` loaded in `math`.
States run_reference(const Source& src, BlockMath& math, const Block& blk, const States& in) {
  const int T = int(in[0].size()) / src.shape.hidden;
  const bool attn = blk.attention;
  const int ka = src.shape.hidden;
  const int kb = attn ? src.shape.heads * src.shape.head_dim : src.shape.intermediate;
  math.reset_hessian(hessian_a, ka);
  math.reset_hessian(hessian_b, kb);
  blk.load_into(math, src.layer_shape(blk.layer));
  States out = in;
  for (auto& x : out) math.run(x.data(), T, true);
  math.prepare_hessian(hessian_a, int(in.size()), blk.key + (attn ? ".q_proj" : ".up_proj"));
  math.prepare_hessian(hessian_b, int(in.size()), blk.key + (attn ? ".o_proj" : ".down_proj"));
  return out;
}

HessianSlot slot_of(const std::string& proj) { return Block::uses_b(proj) ? hessian_b : hessian_a; }

// Runs the block loaded in `math` (`blk`) on every row of `in` (copies) and returns the mean
// relative error against `ref`.
double evaluate(const Source& src, BlockMath& math, const Block& blk, const States& in, const States& ref,
                States* out = nullptr) {
  const int T = int(in[0].size()) / src.shape.hidden;
  double sum = 0.0;
  std::vector<float> y;
  for (std::size_t r = 0; r < in.size(); ++r) {
    y = in[r];
    math.run(y.data(), T, false);
    if (!std::isfinite(y[0])) throw Error(ErrorKind::internal, "NaN/inf in the block output", {}, blk.key);
    sum += relative_error(y, ref[r], first_token_skip(T, src.shape.hidden));
    if (out) (*out)[r] = y;
  }
  return sum / double(in.size());
}

void report(const Progress& p, const std::string& stage, int step, int steps, const std::string& msg) {
  if (p) p(ConvertProgress{stage, step, steps, msg});
}

// The quantization passes' start: the embedding, and what an interrupted pass finished (its blocks'
// tensors, bit count, last error and calibration states). Returns the first block to quantize.
int begin_quantize(const Source& src, QuantizeOutput& out, States& states, const Progress& progress,
                   Checkpoint* checkpoint) {
  out.tensors.push_back(f16_tensor("model.embed_tokens.weight", src.model->embedding()));
  if (!checkpoint || checkpoint->done().quant_blocks == 0) return 0;
  const int first = checkpoint->done().quant_blocks;
  for (TensorData& t : checkpoint->quant_tensors) out.tensors.push_back(std::move(t));
  out.decoder_bits = checkpoint->done().decoder_bits;
  out.last_block_error = checkpoint->done().last_error;
  states = std::move(checkpoint->quant_states);
  report(progress, "quantize", first, 2 * src.layers + 1, "resumed after " + std::to_string(first) + " quantized blocks");
  return first;
}

// Adds the final norm's outputs of every calibration row into Hessian `slot` (the head's input).
void collect_head_hessian(const Source& src, BlockMath& math, const States& states, int slot) {
  const int H = src.shape.hidden, T = int(states[0].size()) / H;
  const std::vector<float> fn = src.final_norm();
  std::vector<float> a(std::size_t(T) * H);
  math.reset_hessian(slot, H);
  for (const auto& x : states) {
    rms_norm_cpu(x.data(), T, H, fn.data(), DType::f32, src.shape.norm_eps, a.data());
    math.add_hessian(slot, a.data(), T);
  }
}

}  // namespace

TensorData f16_tensor(const std::string& name, const TensorInfo& t) {
  const auto v = tensor_to_f16(t);
  return make_tensor(name, DType::f16, t.shape, v.data(), v.size());
}

void append_block_norms(const Source& src, int layer, bool attention, std::vector<TensorData>& out) {
  const LayerTensors& lt = src.model->layers()[std::size_t(layer)];
  const std::string lp = "model.layers." + std::to_string(layer);
  // As the source stores them (the engine adds Gemma's 1 when it loads them).
  if (attention) {
    out.push_back(f16_tensor(lp + ".input_layernorm.weight", *lt.input_norm));
    if (lt.q_norm) out.push_back(f16_tensor(lp + ".self_attn.q_norm.weight", *lt.q_norm));
    if (lt.k_norm) out.push_back(f16_tensor(lp + ".self_attn.k_norm.weight", *lt.k_norm));
    if (lt.pre_feedforward_norm) out.push_back(f16_tensor(lp + ".post_attention_layernorm.weight", *lt.post_attention_norm));
  } else if (lt.pre_feedforward_norm) {
    out.push_back(f16_tensor(lp + ".pre_feedforward_layernorm.weight", *lt.pre_feedforward_norm));
    out.push_back(f16_tensor(lp + ".post_feedforward_layernorm.weight", *lt.post_feedforward_norm));
  } else {
    out.push_back(f16_tensor(lp + ".post_attention_layernorm.weight", *lt.post_attention_norm));
  }
}

Measurement measure(const Source& src, BlockMath& math, States states, const Progress& progress,
                    std::stop_token stop, Checkpoint* checkpoint) {
  Measurement m;
  const int steps = 2 * src.layers;
  int first = 0;
  if (checkpoint && !checkpoint->measured.blocks.empty()) {  // resumed: the blocks measured before
    m = checkpoint->measured;
    states = std::move(checkpoint->measure_states);
    first = int(m.blocks.size());
    report(progress, "measure", first, steps, "resumed after " + std::to_string(first) + " measured blocks");
  }
  for (int i = first; i < steps; ++i) {
    check_stop(stop);
    const auto t_start = Clock::now();
    const Block blk = load_block(src, i / 2, i % 2 == 0);
    const States ref = run_reference(src, math, blk, states);
    const auto& table = blk.attention ? attention_options() : mlp_options();
    const auto t_ref = Clock::now();
    // Quantize every distinct candidate of every projection once; the math object keeps them.
    std::map<std::string, std::pair<int, std::uint64_t>> cands;  // id -> (candidate id, total bits)
    for (const BlockOption& bo : table)
      for (const auto& [proj, opt] : bo) {
        const std::string id = proj + " " + opt.describe();
        if (cands.count(id)) continue;
        const auto [k, n] = src.dims(proj);
        const int cid = int(cands.size());
        math.add_candidate(cid, slot_of(proj), proj, n, k, opt);
        cands.emplace(id, std::make_pair(cid, linear_total_bits(opt, k, n)));
      }
    const auto t_cand = Clock::now();
    MeasuredBlock mb;
    mb.key = blk.key;
    math.set_rows(states, ref);
    std::map<std::string, std::string> current;  // projection -> candidate id in use
    for (const BlockOption& bo : table) {
      MeasuredOption mo;
      mo.option = bo;
      for (const auto& [proj, opt] : bo) {
        const std::string id = proj + " " + opt.describe();
        const auto& [cid, bits] = cands.at(id);
        if (current[proj] != id) {
          math.use_candidate(proj, cid);
          current[proj] = id;
        }
        const auto [k, n] = src.dims(proj);
        mo.total_bits += bits + 16 * std::uint64_t(blk.bias(proj).empty() ? 0 : (n + 31) / 32 * 32);
      }
      mo.accuracy = std::max(1e-6, 1.0 - math.evaluate());
      mb.options.push_back(std::move(mo));
    }
    math.clear_candidates();
    const auto t_end = Clock::now();
    double best = 0.0;
    for (const auto& o : mb.options) best = std::max(best, o.accuracy);
    if (best < 0.1) throw Error(ErrorKind::internal, "measurement accuracy below 0.1 for every option", {}, blk.key);
    char times[128];
    std::snprintf(times, sizeof times, " (%zu candidates; reference %.1f s, candidates %.1f s, evaluation %.1f s)",
                  cands.size(), seconds(t_ref - t_start), seconds(t_cand - t_ref), seconds(t_end - t_cand));
    report(progress, "measure", i + 1, steps, blk.key + ": best accuracy " + std::to_string(best) + times);
    m.blocks.push_back(std::move(mb));
    states = ref;  // measurement feeds the unquantized outputs forward
    if (checkpoint) checkpoint->save_measurement(m, states, i + 1 == steps);
  }
  return m;
}

Measurement estimated_measurement(const Source& src, const Progress& progress, std::stop_token stop) {
  Measurement m;
  const int steps = 2 * src.layers;
  for (int i = 0; i < steps; ++i) {
    check_stop(stop);
    Block blk = load_block(src, i / 2, i % 2 == 0);
    const auto& table = blk.attention ? attention_options() : mlp_options();
    // Each projection's round-to-nearest error over a sample of its output columns (about 96).
    std::map<std::string, RtnErrorEstimate> est;
    for (const char* proj : blk.projs()) {
      const auto [k, n] = src.dims(proj);
      est.emplace(proj, RtnErrorEstimate(blk.weight(proj).data(), n, k, std::max(1, n / 96)));
    }
    MeasuredBlock mb;
    mb.key = blk.key;
    for (const BlockOption& bo : table) {
      MeasuredOption mo;
      mo.option = bo;
      // The block's error: the root of the projections' relative squared errors, weighted by
      // their sizes (a linear layer's relative output error on inputs without structure).
      double err = 0.0, weights = 0.0;
      for (const auto& [proj, opt] : bo) {
        const auto [k, n] = src.dims(proj);
        const int n_pad = (n + 31) / 32 * 32;
        const GroupLayout layout = group_layout(opt, k);
        mo.total_bits += linear_total_bits(layout, k, n) + 16 * std::uint64_t(blk.bias(proj).empty() ? 0 : n_pad);
        err += double(k) * double(n) * est.at(proj).relative_error(layout);
        weights += double(k) * double(n);
      }
      mo.accuracy = std::max(1e-6, 1.0 - std::sqrt(err / weights));
      mb.options.push_back(std::move(mo));
    }
    m.blocks.push_back(std::move(mb));
    report(progress, "estimate", i + 1, steps, blk.key);
  }
  return m;
}

QuantizeOutput quantize(const Source& src, BlockMath& math, States states, const std::vector<BlockOption>& strategy,
                        int head_bits, const Progress& progress, std::stop_token stop, Checkpoint* checkpoint) {
  QuantizeOutput out;
  const int steps = 2 * src.layers;
  const int first = begin_quantize(src, out, states, progress, checkpoint);
  for (int i = first; i < steps; ++i) {
    check_stop(stop);
    const int layer = i / 2;
    const std::size_t block_begin = out.tensors.size();
    Block blk = load_block(src, layer, i % 2 == 0);
    append_block_norms(src, layer, blk.attention, out.tensors);
    const States ref = run_reference(src, math, blk, states);
    for (const auto& [proj, opt] : strategy[std::size_t(i)]) {
      const auto [k, n] = src.dims(proj);
      QuantizedLinear q = math.quantize(slot_of(proj), blk.weight(proj).data(), n, k, opt);
      const std::vector<float> bias = blk.bias(proj);
      append_exl2_tensors(blk.key + "." + proj, q, bias, out.tensors);
      out.decoder_bits += q.total_bits + 16 * std::uint64_t(bias.empty() ? 0 : q.n_pad);
      blk.set(math, proj, std::move(q.dequant));
    }
    out.last_block_error = evaluate(src, math, blk, states, ref, &states);
    if (checkpoint) {
      checkpoint->save_block(i, std::vector<TensorData>(out.tensors.begin() + std::ptrdiff_t(block_begin), out.tensors.end()));
      checkpoint->save_quantized(i + 1, out.decoder_bits, out.last_block_error, states);
    }
    report(progress, "quantize", i + 1, steps + 1,
           blk.key + ": rfn error " + std::to_string(out.last_block_error));
  }
  check_stop(stop);
  // Head: Hessian of the final-norm outputs, fixed option for head_bits.
  out.tensors.push_back(f16_tensor("model.norm.weight", src.model->final_norm()));
  const int H = src.shape.hidden;
  collect_head_hessian(src, math, states, hessian_c);
  math.prepare_hessian(hessian_c, int(states.size()), "lm_head");
  const std::vector<float> hw = src.head_weight();
  QuantizedLinear q = math.quantize(hessian_c, hw.data(), src.vocab, H, head_option(head_bits));
  append_exl2_tensors("lm_head", q, {}, out.tensors);
  out.head_bits = q.total_bits;
  out.head_numel = std::uint64_t(H) * std::uint64_t(q.n_pad);
  report(progress, "quantize", steps + 1, steps + 1, "lm_head quantized");
  return out;
}

}  // namespace exl::convert_detail

namespace exl::convert_detail {

QuantizeOutput quantize_exl3(const Source& src, BlockMath& math, States states, const Exl3Plan& plan,
                             const Progress& progress, std::stop_token stop, Checkpoint* checkpoint) {
  QuantizeOutput out;
  const int steps = 2 * src.layers;
  const int first = begin_quantize(src, out, states, progress, checkpoint);
  const int T = int(states[0].size()) / src.shape.hidden;
  const int tokens = T * int(states.size());
  for (int i = first; i < steps; ++i) {
    check_stop(stop);
    const auto t_start = Clock::now();
    const int layer = i / 2;
    const std::size_t block_begin = out.tensors.size();
    Block blk = load_block(src, layer, i % 2 == 0);
    append_block_norms(src, layer, blk.attention, out.tensors);
    // The unquantized block's outputs and its two input Hessians.
    const int ka = src.shape.hidden;
    const int kb = blk.attention ? src.shape.heads * src.shape.head_dim : src.shape.intermediate;
    math.reset_hessian(hessian_a, ka);
    math.reset_hessian(hessian_b, kb);
    blk.load_into(math, src.layer_shape(layer));
    States ref = states;
    for (auto& x : ref) math.run(x.data(), T, true);
    const std::vector<double> ha = math.averaged_hessian(hessian_a, tokens);
    const std::vector<double> hb = math.averaged_hessian(hessian_b, tokens);
    std::string errors;
    int pi = 0;
    for (const char* proj : blk.projs()) {
      check_stop(stop);
      const std::string name = blk.key + "." + proj;
      const auto [k, n] = src.dims(proj);
      Exl3LinearOptions lo;
      lo.K = plan.bits.at(name);
      lo.codebook = plan.codebook;
      lo.out_scales = plan.out_scales;
      lo.seed = plan.seed ^ (std::uint64_t(i) * 0x9E3779B97F4A7C15ull + std::uint64_t(pi++) * 0xC2B2AE3D27D4EB4Full);
      Exl3QuantizedLinear q = exl3_quantize_linear(blk.weight(proj).data(), n, k, Block::uses_b(proj) ? &hb : &ha, lo, name);
      append_exl3_tensors(name, q, blk.bias(proj), out.tensors);
      out.decoder_bits += std::uint64_t(q.K) * std::uint64_t(q.kp) * std::uint64_t(q.np);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %db %.5f", errors.empty() ? "" : ", ", proj, q.K, q.proxy_error);
      errors += buf;
      blk.set(math, proj, std::move(q.dequant));
    }
    out.last_block_error = evaluate(src, math, blk, states, ref, &states);
    if (checkpoint) {
      checkpoint->save_block(i, std::vector<TensorData>(out.tensors.begin() + std::ptrdiff_t(block_begin), out.tensors.end()));
      checkpoint->save_quantized(i + 1, out.decoder_bits, out.last_block_error, states);
    }
    char tail[96];
    std::snprintf(tail, sizeof tail, "; rfn error %.6f (%.1f s)", out.last_block_error, seconds(Clock::now() - t_start));
    report(progress, "quantize", i + 1, steps + 1, blk.key + ": proxy error " + errors + tail);
  }
  check_stop(stop);
  out.tensors.push_back(f16_tensor("model.norm.weight", src.model->final_norm()));
  const int H = src.shape.hidden;
  std::vector<float> hw = src.head_weight();
  out.head_numel = std::uint64_t(H) * std::uint64_t((src.vocab + 127) / 128 * 128);
  if (plan.head_bits == 16) {  // kept in fp16
    std::vector<half_bits> v(hw.size());
    float_to_half_n(hw.data(), v.data(), hw.size());
    out.tensors.push_back(make_tensor("lm_head.weight", DType::f16, {src.vocab, H}, v.data(), v.size()));
    out.head_bits = 16 * std::uint64_t(H) * std::uint64_t(src.vocab);
    out.head_numel = std::uint64_t(H) * std::uint64_t(src.vocab);
    report(progress, "quantize", steps + 1, steps + 1, "lm_head kept in FP16");
    return out;
  }
  collect_head_hessian(src, math, states, hessian_c);
  const std::vector<double> hc = math.averaged_hessian(hessian_c, tokens);
  Exl3LinearOptions lo;
  lo.K = plan.head_bits;
  lo.codebook = plan.codebook;
  lo.out_scales = plan.out_scales;
  lo.seed = plan.seed ^ 0xD6E8FEB86659FD93ull;
  Exl3QuantizedLinear q = exl3_quantize_linear(hw.data(), src.vocab, H, &hc, lo, "lm_head");
  append_exl3_tensors("lm_head", q, {}, out.tensors);
  out.head_bits = std::uint64_t(q.K) * std::uint64_t(q.kp) * std::uint64_t(q.np);
  char buf[96];
  std::snprintf(buf, sizeof buf, "lm_head quantized (%d bits, proxy error %.5f)", q.K, q.proxy_error);
  report(progress, "quantize", steps + 1, steps + 1, buf);
  return out;
}

}  // namespace exl::convert_detail
