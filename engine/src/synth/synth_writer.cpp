// synth_model: generates the planned tensors one at a time (columns split over the CPU threads in
// slices of 128, each slice seeded by its own position, so the bytes do not depend on the thread
// count), packs each slice with the converter's packer (kernels/reference/exl2_pack.cpp) and
// streams the tensors through SafetensorsStreamWriter on a writer thread while the next tensor is
// generated. At most two tensors' data are in memory. The folder is DIR.partial until complete.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>

#include "exl/error.h"
#include "exl/kernels/exl2_pack.h"
#include "exl/kernels/half.h"
#include "exl/kernels/threads.h"
#include "exl/plan.h"
#include "exl/safetensors_writer.h"
#include "exl/synth.h"
#include "synth_projections.h"

namespace exl::synth {
namespace fs = std::filesystem;

namespace {

// wyrand: 64 random bits per step, one multiply.
struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull) {}
  std::uint64_t next() {
    s += 0xa0761d6478bd642full;
    const __uint128_t m = __uint128_t(s) * (s ^ 0xe7037ed1a0b428dbull);
    return std::uint64_t(m >> 64) ^ std::uint64_t(m);
  }
  float uniform() { return float(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  std::uint32_t below(std::uint32_t n) { return std::uint32_t((next() >> 32) * n >> 32); }
};

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t tensor, std::uint64_t part) {
  Rng r(seed ^ (tensor * 0x100000001b3ull) ^ (part << 40));
  r.next();
  return r.next();
}

constexpr int kSlice = 128;        // columns per work item (a multiple of 32)
constexpr int kCodeLo = 7;         // scale codes drawn from 7..15 (s = 8..16)

// E[(s/16)^4] over the drawn codes: the mean squared scale relative to q_scale_max.
double mean_scale4() {
  double m = 0;
  for (int c = kCodeLo; c <= 15; ++c) m += std::pow((c + 1) / 16.0, 4.0);
  return m / (16 - kCodeLo);
}

struct Tensors {
  std::vector<TensorData> list;
};

void add_f16(Tensors& t, std::string name, std::vector<std::int64_t> shape, std::uint64_t seed, float lo, float hi) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  TensorData d{std::move(name), DType::f16, std::move(shape), {}};
  d.bytes.resize(std::size_t(n) * 2);
  auto* out = reinterpret_cast<half_bits*>(d.bytes.data());
  const std::int64_t chunk = 1 << 16;
  parallel_for((n + chunk - 1) / chunk, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) {
      Rng r(stream_seed(seed, 0, std::uint64_t(c)));
      for (std::int64_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i)
        out[i] = float_to_half(lo + (hi - lo) * r.uniform());
    }
  });
  t.list.push_back(std::move(d));
}

// The seed of a linear's input permutation: linears that read the same input share it, as
// act-order conversions write them (q/k/v the attention norm's output, gate/up the MLP norm's),
// so the engine's input-permutation fold applies as it does to converted models.
std::uint64_t perm_seed(std::uint64_t seed, std::string prefix) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{".k_proj", ".q_proj"}, {".v_proj", ".q_proj"},
                                 {".up_proj", ".gate_proj"}})
    if (prefix.size() >= from.size() && prefix.compare(prefix.size() - from.size(), from.size(), from) == 0)
      prefix = prefix.substr(0, prefix.size() - from.size()) + to;
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a: the same bytes on every platform
  for (const unsigned char c : prefix) h = (h ^ c) * 0x100000001b3ull;
  return stream_seed(seed, 3, h);
}

// One EXL2 linear: random permutation (seeded by `pseed`), scale maxima, codes and values,
// packed slice by slice.
void add_linear(Tensors& t, const LinearPlan& lp, std::uint64_t seed, std::uint64_t pseed) {
  const int k = lp.k, n = lp.n, n_pad = (n + 31) / 32 * 32, groups = lp.layout.groups();
  int q_rows = 0;
  std::vector<int> row_bits(static_cast<std::size_t>(k));
  for (int g = 0, r0 = 0; g < groups; ++g) {
    q_rows += lp.layout.rows[g] * lp.layout.bits[g] / 32;
    for (int i = 0; i < lp.layout.rows[g]; ++i) row_bits[std::size_t(r0 + i)] = lp.layout.bits[g];
    r0 += lp.layout.rows[g];
  }
  Rng r(stream_seed(seed, 1, 0));
  std::vector<std::int32_t> perm(static_cast<std::size_t>(k));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rp(pseed);
  for (int i = k - 1; i > 0; --i) std::swap(perm[std::size_t(i)], perm[rp.below(std::uint32_t(i + 1))]);
  // Weight std about 1/sqrt(k): activations stay O(1) through the layers and the head.
  const double sigma = 1.0 / std::sqrt(double(k)), e4 = mean_scale4();
  std::vector<half_bits> smax(static_cast<std::size_t>(groups));
  for (int g = 0; g < groups; ++g) {
    const double b = lp.layout.bits[g];
    const double var_q = (std::pow(4.0, b) - 1.0) / 12.0;
    smax[std::size_t(g)] = float_to_half(float(sigma / std::sqrt(e4 * var_q) * (0.85 + 0.3 * r.uniform())));
  }

  TensorData qw{lp.prefix + ".q_weight", DType::i32, {q_rows, n_pad}, {}};
  TensorData qs{lp.prefix + ".q_scale", DType::i32, {groups, n_pad / 8}, {}};
  qw.bytes.resize(std::size_t(q_rows) * n_pad * 4);
  qs.bytes.resize(std::size_t(groups) * (n_pad / 8) * 4);
  auto* qw_out = reinterpret_cast<std::uint32_t*>(qw.bytes.data());
  auto* qs_out = reinterpret_cast<std::uint32_t*>(qs.bytes.data());
  Exl2Packed first;
  std::string failure;  // parallel_for does not carry exceptions: the first failure, thrown after
  std::mutex failure_mutex;
  const int slices = (n_pad + kSlice - 1) / kSlice;
  parallel_for(slices, 1, [&](std::int64_t sb, std::int64_t se) {
    std::vector<std::uint8_t> q, codes;
    for (std::int64_t s = sb; s < se; ++s) {
      const int c0 = int(s) * kSlice, w = std::min(kSlice, n_pad - c0), real = std::max(0, std::min(w, n - c0));
      Rng rs(stream_seed(seed, 2, std::uint64_t(s)));
      q.resize(std::size_t(k) * w);
      for (int row = 0; row < k; ++row) {
        const int b = row_bits[std::size_t(row)];
        const std::uint64_t mask = (std::uint64_t(1) << b) - 1;
        std::uint8_t* qr = q.data() + std::size_t(row) * w;
        int c = 0;
        if (b == 8) {
          for (; c + 8 <= real; c += 8) {
            const std::uint64_t x = rs.next();
            std::memcpy(qr + c, &x, 8);
          }
        }
        for (; c < real;) {
          std::uint64_t x = rs.next();
          for (int j = 0; j < 8 && c < real; ++j, ++c, x >>= 8) qr[c] = std::uint8_t(x & mask);
        }
        for (; c < w; ++c) qr[c] = std::uint8_t(1u << (b - 1));  // padding columns dequantize to 0
      }
      codes.resize(std::size_t(groups) * w);
      for (int g = 0; g < groups; ++g)
        for (int c = 0; c < w; ++c) codes[std::size_t(g) * w + c] = std::uint8_t(kCodeLo + rs.below(16 - kCodeLo));
      Exl2PackInput in;
      in.k = k;
      in.n = w;
      in.group_bits = lp.layout.bits;
      in.group_rows = lp.layout.rows;
      in.q = q.data();
      in.scale_codes = codes.data();
      in.scale_max = smax.data();
      in.perm = perm.data();
      Exl2Packed p;
      std::string why;
      if (!exl2_pack(in, p, &why)) {
        const std::lock_guard lock(failure_mutex);
        if (failure.empty()) failure = why;
        return;
      }
      for (int row = 0; row < q_rows; ++row)
        std::memcpy(qw_out + std::size_t(row) * n_pad + c0, p.q_weight.data() + std::size_t(row) * w, std::size_t(w) * 4);
      for (int g = 0; g < groups; ++g)
        std::memcpy(qs_out + std::size_t(g) * (n_pad / 8) + c0 / 8, p.q_scale.data() + std::size_t(g) * (w / 8),
                    std::size_t(w / 8) * 4);
      if (s == 0) first = std::move(p);
    }
  });
  if (!failure.empty()) throw Error(ErrorKind::internal, "packing failed: " + failure, "", lp.prefix);
  t.list.push_back(std::move(qw));
  t.list.push_back(std::move(qs));
  t.list.push_back(make_tensor(lp.prefix + ".q_scale_max", DType::f16, {groups}, first.q_scale_max.data(), first.q_scale_max.size()));
  t.list.push_back(make_tensor(lp.prefix + ".q_groups", DType::i16, {2 * groups}, first.q_groups.data(), first.q_groups.size()));
  t.list.push_back(make_tensor(lp.prefix + ".q_invperm", DType::i32, {k}, first.q_invperm.data(), first.q_invperm.size()));
  if (lp.bias) {
    std::vector<half_bits> b(std::size_t(n_pad), 0);
    for (int i = 0; i < n; ++i) b[std::size_t(i)] = float_to_half(-0.1f + 0.2f * r.uniform());
    t.list.push_back(make_tensor(lp.prefix + ".bias", DType::f16, {n_pad}, b.data(), b.size()));
  }
}

// Random bytes, in chunks seeded by their position (the same bytes on any thread count).
void fill_random(std::vector<std::byte>& bytes, std::uint64_t seed) {
  const std::size_t words = bytes.size() / 8, chunk = 1 << 16;
  parallel_for(std::int64_t((words + chunk - 1) / chunk), 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) {
      Rng r(stream_seed(seed, 4, std::uint64_t(c)));
      for (std::size_t i = std::size_t(c) * chunk; i < std::min(words, std::size_t(c + 1) * chunk); ++i) {
        const std::uint64_t x = r.next();
        std::memcpy(bytes.data() + i * 8, &x, 8);
      }
    }
  });
  Rng tail(stream_seed(seed, 5, 0));
  for (std::size_t i = words * 8; i < bytes.size(); ++i) bytes[i] = std::byte(tail.next() & 0xFF);
}

int pad128(int n) { return (n + 127) / 128 * 128; }
constexpr std::uint32_t kMul1Marker = 0x83DCD12Du;  // spec EXL3 §2.1: the mul1 codebook's multiplier

// One EXL3 linear (mul1 codebook): random trellis words (every stream decodes to codebook values
// of about unit spread), input and output scales of random sign and magnitude sqrt(0.7/sqrt(k))
// times 0.7..1.3 (so W = suh H W-hat H svh / 128 has entries of about 0.7/sqrt(k) and activations
// stay O(1)), zero on padded features; bias in +-0.1.
void add_linear_exl3(Tensors& t, const LinearPlan& lp, std::uint64_t seed) {
  const int kp = pad128(lp.k), np = pad128(lp.n), words = 8 * lp.exl3_bits2;  // 16 K words per 16x16 tile
  TensorData tr{lp.prefix + ".trellis", DType::i16, {kp / 16, np / 16, words}, {}};
  tr.bytes.resize(std::size_t(kp / 16) * std::size_t(np / 16) * std::size_t(words) * 2);
  fill_random(tr.bytes, seed);
  t.list.push_back(std::move(tr));
  Rng r(stream_seed(seed, 6, 0));
  const float mag = float(std::sqrt(0.7 / std::sqrt(double(lp.k))));
  auto scales = [&](int real, int padded) {
    std::vector<half_bits> v(static_cast<std::size_t>(padded), 0);
    for (int i = 0; i < real; ++i)
      v[std::size_t(i)] = float_to_half((r.next() & 1 ? -mag : mag) * (0.7f + 0.6f * r.uniform()));
    return v;
  };
  const std::vector<half_bits> suh = scales(lp.k, kp), svh = scales(lp.n, np);
  t.list.push_back(make_tensor(lp.prefix + ".suh", DType::f16, {kp}, suh.data(), suh.size()));
  t.list.push_back(make_tensor(lp.prefix + ".svh", DType::f16, {np}, svh.data(), svh.size()));
  t.list.push_back(make_tensor(lp.prefix + ".mul1", DType::i32, {}, &kMul1Marker, 1));
  if (lp.bias) {
    std::vector<half_bits> b(std::size_t(lp.n), 0);
    for (auto& x : b) x = float_to_half(-0.1f + 0.2f * r.uniform());
    t.list.push_back(make_tensor(lp.prefix + ".bias", DType::f16, {lp.n}, b.data(), b.size()));
  }
}

// The work list in module order: each item makes a few tensors.
struct Item {
  enum Kind { embedding, norm, linear } kind;
  std::string name;            // norm / embedding tensor name
  const LinearPlan* lin = nullptr;
  int size = 0;                // norm: elements (0 = hidden)
};

// An FP16 linear: uniform weights of variance 1/k (activations stay O(1)), bias in +-0.1.
void add_dense(Tensors& t, const LinearPlan& lp, std::uint64_t seed) {
  const float a = float(std::sqrt(3.0 / lp.k));
  add_f16(t, lp.prefix + ".weight", {lp.n, lp.k}, seed, -a, a);
  if (lp.bias) add_f16(t, lp.prefix + ".bias", {lp.n}, seed ^ 0x5bd1e995u, -0.1f, 0.1f);
}

std::vector<TensorSpec> specs_of(const Item& it, const ModelConfig& c, bool fp16) {
  if (it.kind == Item::embedding)
    return {{it.name, DType::f16, {c.vocab_size, c.hidden_size}}};
  if (it.kind == Item::norm) return {{it.name, DType::f16, {it.size > 0 ? it.size : c.hidden_size}}};
  const LinearPlan& lp = *it.lin;
  if (fp16 || (lp.exl3_bits2 == 0 && lp.layout.groups() == 0)) {  // FP16 model, or an EXL3 model's FP16 head
    std::vector<TensorSpec> s = {{lp.prefix + ".weight", DType::f16, {lp.n, lp.k}}};
    if (lp.bias) s.push_back({lp.prefix + ".bias", DType::f16, {lp.n}});
    return s;
  }
  if (lp.exl3_bits2 > 0) {
    const std::int64_t kp = pad128(lp.k), np = pad128(lp.n);
    std::vector<TensorSpec> s = {{lp.prefix + ".trellis", DType::i16, {kp / 16, np / 16, 8 * lp.exl3_bits2}},
                                 {lp.prefix + ".suh", DType::f16, {kp}},
                                 {lp.prefix + ".svh", DType::f16, {np}},
                                 {lp.prefix + ".mul1", DType::i32, {}}};
    if (lp.bias) s.push_back({lp.prefix + ".bias", DType::f16, {lp.n}});
    return s;
  }
  const std::int64_t n_pad = (lp.n + 31) / 32 * 32, g = lp.layout.groups();
  std::int64_t q_rows = 0;
  for (int i = 0; i < g; ++i) q_rows += lp.layout.rows[i] * lp.layout.bits[i] / 32;
  std::vector<TensorSpec> s = {{lp.prefix + ".q_weight", DType::i32, {q_rows, n_pad}},
                               {lp.prefix + ".q_scale", DType::i32, {g, n_pad / 8}},
                               {lp.prefix + ".q_scale_max", DType::f16, {g}},
                               {lp.prefix + ".q_groups", DType::i16, {2 * g}},
                               {lp.prefix + ".q_invperm", DType::i32, {lp.k}}};
  if (lp.bias) s.push_back({lp.prefix + ".bias", DType::f16, {n_pad}});
  return s;
}

void check_output(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty()) throw Error(ErrorKind::invalid_argument, "no output folder given", "", "-o");
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw Error(ErrorKind::invalid_argument, "the output path exists and is not a folder", dir.string(), "-o");
    if (!fs::is_empty(dir, ec))
      throw Error(ErrorKind::invalid_argument, "the output folder already exists and is not empty", dir.string(), "-o");
  }
}

}  // namespace

SynthResult synth_model(const SynthOptions& o, const SynthProgressFn& progress) {
  const ModelConfig cfg = plan::preset_config(o.preset);  // throws with the list of names
  const bool exl3 = o.format == SynthFormat::exl3 && !o.fp16;
  const SynthPlan plan = exl3 ? plan_synth_exl3(cfg, o.bpw, o.head_bits, o.seed) : plan_synth(cfg, o.bpw, o.head_bits, o.seed);
  if (o.threads > 0) set_cpu_threads(o.threads);
  const fs::path dir = o.output_dir.has_filename() ? o.output_dir : o.output_dir.parent_path();
  check_output(dir);
  const fs::path partial = dir.string() + ".partial";
  std::error_code ec;
  fs::remove_all(partial, ec);  // a previous interrupted run
  fs::create_directories(partial, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create the output folder: " + ec.message(), partial.string());

  std::vector<Item> items;
  items.push_back({Item::embedding, "model.embed_tokens.weight"});
  std::size_t first = 0;  // the layer's first linear in plan.decoder
  for (int i = 0; i < cfg.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const std::size_t count = decoder_projections(cfg, i).size();
    items.push_back({Item::norm, p + "input_layernorm.weight"});
    for (std::size_t j = 0; j < 4; ++j) items.push_back({Item::linear, "", &plan.decoder[first + j]});
    if (cfg.family.qk_norm) {
      items.push_back({Item::norm, p + "self_attn.q_norm.weight", nullptr, cfg.head_dim});
      items.push_back({Item::norm, p + "self_attn.k_norm.weight", nullptr, cfg.head_dim});
    }
    items.push_back({Item::norm, p + "post_attention_layernorm.weight"});
    if (cfg.family.sandwich_norms) {
      items.push_back({Item::norm, p + "pre_feedforward_layernorm.weight"});
      items.push_back({Item::norm, p + "post_feedforward_layernorm.weight"});
    }
    for (std::size_t j = 4; j < count; ++j) items.push_back({Item::linear, "", &plan.decoder[first + j]});
    first += count;
  }
  items.push_back({Item::norm, "model.norm.weight"});
  items.push_back({Item::linear, "", &plan.head});
  std::vector<TensorSpec> specs;
  for (const Item& it : items)
    for (TensorSpec& s : specs_of(it, cfg, o.fp16)) specs.push_back(std::move(s));
  std::uint64_t total = 0;
  for (const TensorSpec& s : specs) total += s.nbytes();

  SynthResult res;
  try {
    SafetensorsStreamWriter writer(partial, specs, o.max_shard_bytes);
    std::future<void> pending;
    std::uint64_t done = 0;
    std::string last;
    auto finish_pending = [&] {
      if (pending.valid()) pending.get();
      if (progress && !last.empty()) progress(SynthProgress{done, total, last});
    };
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Item& it = items[i];
      auto t = std::make_shared<Tensors>();
      const std::uint64_t s = stream_seed(o.seed, 100 + i, 0);
      if (it.kind == Item::embedding) add_f16(*t, it.name, {cfg.vocab_size, cfg.hidden_size}, s, -0.05f, 0.05f);
      else if (it.kind == Item::norm) {
        // Around the identity: w near 1, or near 0 where the family multiplies by 1 + w.
        const float mid = cfg.family.norm == NormKind::rms_one_plus ? 0.0f : 1.0f;
        add_f16(*t, it.name, {it.size > 0 ? it.size : cfg.hidden_size}, s, mid - 0.1f, mid + 0.1f);
      }
      else if (o.fp16 || (exl3 && it.lin->exl3_bits2 == 0) || (!exl3 && it.lin->layout.groups() == 0))
        add_dense(*t, *it.lin, s);  // FP16 model, FP16 head, the router
      else if (exl3) add_linear_exl3(*t, *it.lin, s);
      else add_linear(*t, *it.lin, s, perm_seed(o.seed, it.lin->prefix));
      finish_pending();
      std::uint64_t bytes = 0;
      for (const TensorData& d : t->list) bytes += d.bytes.size();
      pending = std::async(std::launch::async, [&writer, t] {
        for (const TensorData& d : t->list) writer.write(d.name, d.bytes.data(), d.bytes.size());
      });
      done += bytes;
      last = t->list.back().name;
    }
    finish_pending();
    if (!writer.done()) throw Error(ErrorKind::internal, "not every planned tensor was written", partial.string());
    res.files = writer.files();
    write_file_atomic(partial / "tokenizer.json", synth_tokenizer_json(cfg.vocab_size));
    write_file_atomic(partial / "tokenizer_config.json", synth_tokenizer_config_json(cfg.max_position_embeddings));
    write_file_atomic(partial / "generation_config.json",
                      "{\n  \"bos_token_id\": " + std::to_string(synth_bos_id(cfg.vocab_size)) +
                          ",\n  \"eos_token_id\": " + std::to_string(synth_eos_id(cfg.vocab_size)) + "\n}\n");
    write_file_atomic(partial / "config.json", synth_config_json(cfg, exl3 ? std::round(plan.nominal_bpw * 100.0) / 100.0 : o.bpw, o.head_bits, o.seed,
                                                                o.preset, o.fp16, o.format));
    if (fs::exists(dir, ec)) fs::remove(dir, ec);  // an empty folder (checked above)
    fs::rename(partial, dir, ec);
    if (ec) throw Error(ErrorKind::io, "cannot rename " + partial.string() + " into place: " + ec.message(), dir.string());
  } catch (...) {
    fs::remove_all(partial, ec);
    throw;
  }
  for (auto& f : res.files) f = dir / f.filename();
  res.dir = dir;
  res.decoder_bpw = plan.decoder_bpw;
  res.head_bpw = plan.head_bpw;
  res.bytes = total;
  return res;
}

}  // namespace exl::synth
