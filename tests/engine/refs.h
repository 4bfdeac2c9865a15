// Readers for the reference outputs in fixtures/refs (JSON descriptions + raw float32 blocks)
// and the logit comparisons the acceptance criteria use.
#pragma once
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "exl/kernels/half.h"
#include "exl_test.h"

namespace exl::test {

inline nlohmann::json read_json(const std::string& relative) {
  std::ifstream in(fixture(relative));
  if (!in) fail(__FILE__, __LINE__, "cannot read " + relative);
  return nlohmann::json::parse(in);
}

struct LogitBlock {
  std::string label;
  int rows = 0, cols = 0;
  std::vector<float> data;
  std::span<const float> row(int r) const { return {data.data() + std::size_t(r) * std::size_t(cols), std::size_t(cols)}; }
};

// One rows x cols block at `offset` bytes of `bin` (float32, or fp16 widened to float32); `where`
// names the file in the error of a short read.
inline LogitBlock read_block(std::ifstream& bin, const std::string& where, std::string label, int rows, int cols,
                             std::int64_t offset, bool fp16 = false) {
  LogitBlock lb;
  lb.label = std::move(label);
  lb.rows = rows;
  lb.cols = cols;
  lb.data.resize(std::size_t(rows) * std::size_t(cols));
  bin.seekg(std::streamoff(offset));
  if (fp16) {
    std::vector<half_bits> h(lb.data.size());
    bin.read(reinterpret_cast<char*>(h.data()), std::streamsize(h.size() * 2));
    for (std::size_t i = 0; i < h.size(); ++i) lb.data[i] = half_to_float(h[i]);
  } else {
    bin.read(reinterpret_cast<char*>(lb.data.data()), std::streamsize(lb.data.size() * 4));
  }
  if (!bin) fail(__FILE__, __LINE__, "short read in " + where + " block " + lb.label);
  return lb;
}

// The blocks a description lists ({"blocks": [{label, shape, offset_bytes}]}), keyed by label.
inline std::map<std::string, LogitBlock> read_blocks(const nlohmann::json& desc, std::ifstream& bin,
                                                     const std::string& where, bool fp16 = false) {
  std::map<std::string, LogitBlock> out;
  for (const auto& b : desc["blocks"]) {
    LogitBlock lb = read_block(bin, where, b["label"], b["shape"][0], b["shape"][1],
                               b["offset_bytes"].get<std::int64_t>(), fp16);
    out[lb.label] = std::move(lb);
  }
  return out;
}

// Reads refs/<name>.json and refs/<name>.bin into blocks keyed by label.
inline std::map<std::string, LogitBlock> read_logit_blocks(const std::string& name) {
  std::ifstream bin(fixture("refs/" + name + ".bin"), std::ios::binary);
  return read_blocks(read_json("refs/" + name + ".json"), bin, name + ".bin");
}

struct Prompt {
  std::string name;
  std::vector<std::int32_t> ids;
};

inline std::vector<Prompt> read_prompts() {
  const auto j = read_json("refs/prompts.json");
  std::vector<Prompt> out;
  for (const auto& p : j["prompts"]) out.push_back({p["name"], p["ids"].get<std::vector<std::int32_t>>()});
  return out;
}

inline int top1(std::span<const float> x) {
  int b = 0;
  for (std::size_t i = 1; i < x.size(); ++i)
    if (x[i] > x[std::size_t(b)]) b = int(i);
  return b;
}

inline float top1_top2_gap(std::span<const float> x) {
  float a = -INFINITY, b = -INFINITY;
  for (float v : x) {
    if (v > a) {
      b = a;
      a = v;
    } else if (v > b) {
      b = v;
    }
  }
  return a - b;
}

// KL(p_ref || p_ours) of the softmaxes, in double.
inline double kl_divergence(std::span<const float> ref, std::span<const float> ours) {
  auto log_softmax = [](std::span<const float> x) {
    double mx = -INFINITY;
    for (float v : x) mx = std::max(mx, double(v));
    double s = 0;
    for (float v : x) s += std::exp(double(v) - mx);
    std::vector<double> out(x.size());
    const double lse = mx + std::log(s);
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = double(x[i]) - lse;
    return out;
  };
  const auto lp = log_softmax(ref), lq = log_softmax(ours);
  double kl = 0;
  for (std::size_t i = 0; i < lp.size(); ++i) kl += std::exp(lp[i]) * (lp[i] - lq[i]);
  return kl;
}

inline double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
  return m;
}

inline double relative_l2(std::span<const float> ref, std::span<const float> ours) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = double(ours[i]) - double(ref[i]);
    num += d * d;
    den += double(ref[i]) * double(ref[i]);
  }
  return std::sqrt(num / den);
}

}  // namespace exl::test
