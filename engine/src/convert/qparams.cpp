// Candidate quantization options (spec §7.3), their group layouts and bit counts (§7.6).
#include <cmath>
#include <cstdio>

#include "exl/convert.h"
#include "exl/error.h"

namespace exl {
namespace {

QuantOption opt(std::initializer_list<QuantPart> parts) { return QuantOption{std::vector<QuantPart>(parts)}; }
// Shorthands: one part, or two parts (p of the rows at b1, the rest at b2).
QuantOption one(int b, int g) { return opt({{b, 1.0, g}}); }
QuantOption two(double p, int b1, int g1, int b2, int g2) { return opt({{b1, p, g1}, {b2, 1.0 - p, g2}}); }

BlockOption attn(QuantOption q, QuantOption k, QuantOption v, QuantOption o) {
  return {{"q_proj", std::move(q)}, {"k_proj", std::move(k)}, {"v_proj", std::move(v)}, {"o_proj", std::move(o)}};
}
BlockOption mlp(QuantOption g, QuantOption u, QuantOption d) {
  return {{"gate_proj", std::move(g)}, {"up_proj", std::move(u)}, {"down_proj", std::move(d)}};
}

std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string QuantOption::describe() const {
  std::string s;
  for (const QuantPart& p : parts) {
    if (!s.empty()) s += "/";
    s += fmt_num(p.prop) + ":" + std::to_string(p.bits) + "b_" + std::to_string(p.group_size) + "g";
  }
  return s + " s4";
}

GroupLayout group_layout(const QuantOption& option, int k) {
  if (k <= 0 || k % 32 != 0)
    throw Error(ErrorKind::invalid_argument, "in_features " + std::to_string(k) + " is not a positive multiple of 32");
  if (option.parts.empty()) throw Error(ErrorKind::invalid_argument, "empty quantization option");
  GroupLayout out;
  long remaining = k;
  int prev_bits = 99;
  for (const QuantPart& p : option.parts) {
    if (p.group_size < 32 || p.group_size % 32 != 0 || p.bits > prev_bits)
      throw Error(ErrorKind::invalid_argument, "malformed option " + option.describe());
    prev_bits = p.bits;
    const double want = std::min(double(k) * p.prop, double(remaining));
    const long groups = want > 0 ? long(std::ceil(want / p.group_size)) : 0;
    for (long g = 0; g < groups && remaining > 0; ++g) {
      const int rows = int(std::min<long>(p.group_size, remaining));
      out.bits.push_back(p.bits);
      out.rows.push_back(rows);
      remaining -= rows;
    }
  }
  if (remaining > 0)
    throw Error(ErrorKind::invalid_argument, "option " + option.describe() + " does not cover " + std::to_string(k) + " rows");
  return out;
}

std::uint64_t linear_total_bits(const GroupLayout& layout, int k, int n, int bias_len) {
  const std::uint64_t n_pad = (std::uint64_t(n) + 31) / 32 * 32;
  std::uint64_t bits = 0;
  for (int g = 0; g < layout.groups(); ++g) bits += std::uint64_t(layout.rows[g]) * n_pad * std::uint64_t(layout.bits[g]);
  const std::uint64_t G = std::uint64_t(layout.groups());
  bits += G * 16 + G * 32 + G * n_pad * 4 + std::uint64_t(k) * 32 + 16 * std::uint64_t(bias_len);
  return bits;
}

std::uint64_t linear_total_bits(const QuantOption& option, int k, int n, int bias_len) {
  return linear_total_bits(group_layout(option, k), k, n, bias_len);
}

const std::vector<BlockOption>& attention_options() {
  static const std::vector<BlockOption> t = [] {
    const QuantOption a0 = two(0.05, 3, 64, 2, 64), a1 = two(0.1, 3, 64, 2, 64), a1v = two(0.25, 3, 64, 2, 64);
    const QuantOption b128 = two(0.1, 4, 128, 3, 128), b64 = two(0.1, 4, 64, 3, 64);
    const QuantOption c128 = two(0.1, 5, 128, 4, 128), c64 = two(0.1, 5, 64, 4, 64), c32 = two(0.1, 5, 32, 4, 32);
    const QuantOption d128 = two(0.1, 6, 128, 5, 128), d32 = two(0.1, 6, 32, 5, 32);
    std::vector<BlockOption> v;
    v.push_back(attn(a0, a0, a0, a0));
    v.push_back(attn(a1, a1, a1v, a1));
    v.push_back(attn(a1, a1, b128, a1));
    v.push_back(attn(a1, a1, b128, b128));
    v.push_back(attn(b128, b128, b128, b128));
    v.push_back(attn(b128, b128, b64, b128));
    v.push_back(attn(one(4, 128), one(4, 128), one(4, 128), one(4, 128)));
    v.push_back(attn(one(4, 128), one(4, 128), one(4, 64), one(4, 128)));
    v.push_back(attn(one(4, 64), one(4, 64), one(4, 32), one(4, 64)));
    v.push_back(attn(one(4, 32), one(4, 32), one(4, 32), one(4, 32)));
    v.push_back(attn(c128, c128, c64, c128));
    v.push_back(attn(c64, c64, c32, c64));
    v.push_back(attn(c64, c64, one(5, 64), c64));
    v.push_back(attn(c32, c32, one(5, 32), c32));
    v.push_back(attn(d128, d128, one(6, 128), d128));
    v.push_back(attn(d32, d32, one(6, 32), d32));
    v.push_back(attn(one(6, 128), one(6, 128), one(6, 128), one(6, 128)));
    v.push_back(attn(one(6, 32), one(6, 32), one(8, 32), one(6, 32)));
    v.push_back(attn(one(8, 128), one(8, 128), one(8, 128), one(8, 128)));
    return v;
  }();
  return t;
}

const std::vector<BlockOption>& mlp_options() {
  static const std::vector<BlockOption> t = [] {
    auto three = [](int b1, double p1, int g1, int b2, double p2, int g2, int b3, double p3, int g3) {
      return opt({{b1, p1, g1}, {b2, p2, g2}, {b3, p3, g3}});
    };
    std::vector<BlockOption> v;
    v.push_back(mlp(two(0.05, 3, 64, 2, 64), two(0.05, 3, 64, 2, 64), three(6, 0.05, 32, 3, 0.2, 64, 2, 0.75, 64)));
    v.push_back(mlp(two(0.1, 3, 64, 2, 64), two(0.25, 3, 64, 2, 64), three(6, 0.05, 32, 3, 0.2, 64, 2, 0.75, 64)));
    v.push_back(mlp(two(0.1, 3, 64, 2, 64), two(0.3, 3, 64, 2, 64), two(0.05, 5, 32, 3, 32)));
    v.push_back(mlp(two(0.1, 3, 64, 2, 64), two(0.3, 3, 64, 2, 64), two(0.05, 5, 32, 4, 32)));
    v.push_back(mlp(two(0.1, 4, 128, 3, 128), two(0.25, 4, 128, 3, 128), three(8, 0.05, 32, 4, 0.1, 128, 3, 0.85, 128)));
    v.push_back(mlp(two(0.1, 4, 32, 3, 32), two(0.25, 4, 32, 3, 32), three(8, 0.05, 32, 4, 0.1, 32, 3, 0.85, 32)));
    v.push_back(mlp(two(0.1, 4, 32, 3, 32), two(0.25, 4, 32, 3, 32), two(0.05, 8, 32, 4, 128)));
    v.push_back(mlp(one(4, 128), one(4, 32), two(0.05, 8, 32, 4, 128)));
    v.push_back(mlp(one(4, 32), one(4, 32), two(0.05, 8, 32, 4, 32)));
    v.push_back(mlp(two(0.1, 5, 128, 4, 128), two(0.25, 5, 128, 4, 128), three(8, 0.05, 32, 5, 0.1, 128, 4, 0.85, 128)));
    v.push_back(mlp(two(0.1, 5, 32, 4, 32), two(0.25, 5, 32, 4, 32), three(8, 0.05, 32, 5, 0.1, 32, 4, 0.85, 32)));
    v.push_back(mlp(two(0.1, 6, 128, 5, 128), two(0.25, 6, 128, 5, 128), three(8, 0.05, 32, 6, 0.1, 128, 5, 0.85, 128)));
    v.push_back(mlp(two(0.1, 6, 32, 5, 32), two(0.25, 6, 32, 5, 32), three(8, 0.05, 32, 6, 0.1, 32, 5, 0.85, 32)));
    v.push_back(mlp(one(6, 128), one(6, 128), two(0.05, 8, 32, 6, 128)));
    v.push_back(mlp(two(0.1, 8, 128, 6, 128), two(0.1, 8, 128, 6, 128), two(0.15, 8, 128, 6, 128)));
    v.push_back(mlp(two(0.1, 8, 128, 6, 128), two(0.1, 8, 128, 6, 128), one(8, 128)));
    v.push_back(mlp(one(8, 128), one(8, 128), one(8, 128)));
    return v;
  }();
  return t;
}

QuantOption head_option(int head_bits) {
  switch (head_bits) {
    case 2: return two(0.3, 4, 32, 2, 32);
    case 3: return two(0.15, 4, 32, 3, 32);
    case 4: return two(0.15, 6, 32, 4, 32);
    case 5: return two(0.15, 6, 128, 5, 128);
    case 6: return two(0.15, 8, 128, 6, 128);
    case 8: return one(8, 128);
    default:
      throw Error(ErrorKind::invalid_argument, "head bits must be 2, 3, 4, 5, 6 or 8 (got " + std::to_string(head_bits) + ")");
  }
}

}  // namespace exl
