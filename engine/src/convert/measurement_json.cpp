// measurement.json in ExLlamaV2's format (spec §1.5): per block, every measured option with its
// accuracy, total bits and per-projection qparams.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <tuple>
#include <sstream>
#include <nlohmann/json.hpp>

#include "exl/convert.h"
#include "exl/error.h"

namespace exl {
namespace {

using nlohmann::json;

json qparams_to_json(const QuantOption& o) {
  json gs = json::object(), bits = json::array(), prop = json::array();
  for (const QuantPart& p : o.parts) {
    gs[std::to_string(p.bits)] = p.group_size;
    bits.push_back(p.bits);
    prop.push_back(p.prop);
  }
  return {{"group_size", gs}, {"bits", bits}, {"bits_prop", prop}, {"scale_bits", 4}};
}

QuantOption qparams_from_json(const json& j, const std::string& file, const std::string& where) {
  try {
    QuantOption o;
    const json& bits = j.at("bits");
    const json& prop = j.at("bits_prop");
    const json& gs = j.at("group_size");
    if (!bits.is_array() || !prop.is_array() || bits.size() != prop.size() || bits.empty())
      throw Error(ErrorKind::format, "bits / bits_prop must be arrays of equal, non-zero length", file, where);
    if (j.contains("scale_bits") && j.at("scale_bits").get<int>() != 4)
      throw Error(ErrorKind::unsupported, "only 4-bit scales are supported", file, where);
    for (std::size_t i = 0; i < bits.size(); ++i) {
      QuantPart p;
      p.bits = bits[i].get<int>();
      p.prop = prop[i].get<double>();
      p.group_size = gs.at(std::to_string(p.bits)).get<int>();
      if (p.bits != 2 && p.bits != 3 && p.bits != 4 && p.bits != 5 && p.bits != 6 && p.bits != 8)
        throw Error(ErrorKind::format, "bit width " + std::to_string(p.bits) + " not in {2,3,4,5,6,8}", file, where);
      o.parts.push_back(p);
    }
    return o;
  } catch (const json::exception& e) {
    throw Error(ErrorKind::format, std::string("malformed qparams: ") + e.what(), file, where);
  }
}

const char* const kAttn[] = {"q_proj", "k_proj", "v_proj", "o_proj"};
const char* const kMlp[] = {"gate_proj", "up_proj", "down_proj"};

}  // namespace

std::string measurement_to_json(const Measurement& m) {
  json meas = json::object();
  for (const MeasuredBlock& b : m.blocks) {
    json arr = json::array();
    for (const MeasuredOption& o : b.options) {
      json e = {{"accuracy", o.accuracy}, {"total_bits", o.total_bits}};
      for (const auto& [name, q] : o.option) e[name] = qparams_to_json(q);
      arr.push_back(std::move(e));
    }
    meas[b.key] = std::move(arr);
  }
  json root = {{"measurement", meas}, {"last_module_idx", int(m.blocks.size()) * 2}};
  return root.dump(4);
}

Measurement measurement_from_json(const std::string& text, const std::string& file) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::format, std::string("invalid JSON: ") + e.what(), file);
  }
  if (!root.is_object() || !root.contains("measurement") || !root["measurement"].is_object())
    throw Error(ErrorKind::format, "no \"measurement\" object", file, "measurement");
  // Order blocks by layer index, attention before MLP (JSON objects are unordered).
  std::vector<std::tuple<int, int, std::string>> keys;
  for (const auto& [key, val] : root["measurement"].items()) {
    if (val.is_null()) continue;
    int layer = -1;
    int kind = -1;
    if (std::sscanf(key.c_str(), "model.layers.%d.", &layer) == 1) {
      if (key.ends_with(".self_attn")) kind = 0;
      if (key.ends_with(".mlp")) kind = 1;
    }
    if (kind < 0) throw Error(ErrorKind::unsupported, "unsupported measured module", file, key);
    keys.emplace_back(layer, kind, key);
  }
  std::sort(keys.begin(), keys.end());
  Measurement m;
  for (const auto& [layer, kind, key] : keys) {
    const json& arr = root["measurement"][key];
    if (!arr.is_array() || arr.empty()) throw Error(ErrorKind::format, "expected a non-empty list of options", file, key);
    MeasuredBlock b;
    b.key = key;
    for (const json& e : arr) {
      MeasuredOption o;
      try {
        o.accuracy = e.at("accuracy").get<double>();
        o.total_bits = e.at("total_bits").get<std::uint64_t>();
      } catch (const json::exception& ex) {
        throw Error(ErrorKind::format, std::string("malformed option: ") + ex.what(), file, key);
      }
      if (kind == 0) {
        for (const char* p : kAttn) o.option.emplace_back(p, qparams_from_json(e.value(p, json()), file, key + "." + p));
      } else {
        for (const char* p : kMlp) {
          if (!e.contains(p) && std::string(p) == "gate_proj") continue;  // gateless architectures
          o.option.emplace_back(p, qparams_from_json(e.value(p, json()), file, key + "." + p));
        }
      }
      b.options.push_back(std::move(o));
    }
    m.blocks.push_back(std::move(b));
  }
  if (m.blocks.empty()) throw Error(ErrorKind::format, "the measurement lists no blocks", file);
  return m;
}

Measurement read_measurement(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, "cannot open measurement file", path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return measurement_from_json(ss.str(), path.string());
}

}  // namespace exl
