// The planner's JSON (schema "exl.plan/1"), read by the app and printed by `exl fit --json`.
// Fields are only ever added; existing names and meanings stay.
#include <nlohmann/json.hpp>

#include "exl/plan.h"

namespace exl::plan {

std::string plan_to_json(const ModelShape& m, const PlanOptions& o, const Plan& p, std::int64_t max_ctx,
                         double max_bpw_value, const ModelShape* draft) {
  using nlohmann::json;
  json devices = json::array();
  for (const DevicePlan& d : p.devices) {
    const DeviceComponents& c = d.parts;
    json layers = d.first_layer >= 0 ? json::array({d.first_layer, d.last_layer}) : json::array();
    devices.push_back({{"name", d.gpu.name},
                       {"total_bytes", d.gpu.total_bytes()},
                       {"weights_bytes", d.weights_bytes},
                       {"cache_bytes", d.cache_bytes},
                       {"scratch_bytes", d.scratch_bytes},
                       {"overhead_bytes", d.overhead_bytes},
                       {"draft_bytes", c.draft},
                       {"used_bytes", d.used_bytes},
                       {"free_bytes", d.free_bytes},
                       {"budget_bytes", d.budget_bytes},
                       {"bandwidth_gbs", d.gpu.bandwidth_gbs},
                       {"layers", layers},
                       {"has_head", d.has_head},
                       {"components",
                        {{"layers", c.weights}, {"embedding", c.embedding}, {"head", c.head}, {"cache", c.cache},
                         {"cache_temp", c.cache_temp}, {"scratch", c.scratch}, {"rope", c.rope}, {"logits", c.logits},
                         {"cublas_workspace", c.cublas}, {"cuda_context", c.context},
                         {"allocation_rounding", c.rounding}, {"fragmentation_margin", c.margin},
                         {"draft", c.draft}}}});
  }
  json line = json::array();
  for (const ThroughputPoint& t : p.line)
    line.push_back({{"position", t.position}, {"bytes_per_token", t.bytes_per_token}, {"tokens_per_s", t.tokens_per_s}});
  json layer_bytes = json::array();
  for (const ModuleBytes& l : m.layers) layer_bytes.push_back(l.device);
  json j{{"schema", "exl.plan/1"},
         {"layout", layout_name(o.layout)},
         {"model",
          {{"name", m.name}, {"exact", m.exact}, {"bpw", m.decoder_bpw}, {"head_bits", m.head_bits},
           {"layers", m.config.num_layers}, {"layer_bytes", layer_bytes}, {"head_bytes", m.head.device},
           {"embedding_bytes", m.embedding.device}, {"linear_params", m.linear_params}}},
         {"settings",
          {{"context", o.context}, {"cache_tokens", p.cache_tokens}, {"cache", o.cache.name},
           {"cache_k_bits", o.cache.k_bits}, {"cache_v_bits", o.cache.v_bits}, {"batch", o.batch},
           {"max_chunk", o.max_chunk}, {"split", o.gpu_split_gb.empty() ? "auto" : "manual"},
           {"gpu_split_gb", o.gpu_split_gb}}},
         {"devices", devices},
         {"fits", p.fits},
         {"verdict", verdict_name(p.verdict)},
         {"problem", p.problem},
         {"margin_bytes", p.margin_bytes},
         {"host_bytes", p.host_bytes},
         {"max_context", max_ctx},
         {"max_bpw", max_bpw_value},
         {"bytes_per_token", p.bytes_per_token},
         {"decode_bound_tokens_per_s", p.decode_bound_tokens_per_s},
         {"decode_bound_tokens_per_s_empty", p.decode_bound_empty},
         {"prefill_bound_tokens_per_s", p.prefill_bound_tokens_per_s},
         {"throughput", line}};
  if (draft) {
    j["draft"] = {{"name", draft->name}, {"bpw", draft->decoder_bpw}, {"draft_tokens", o.draft_tokens},
                  {"acceptance", o.draft_acceptance},
                  {"bytes_per_token", decode_bytes_per_token(*draft, o, o.context)}};
    j["speculative_tokens_per_s"] = p.speculative_tokens_per_s;
    j["draft_device"] = p.draft_device;
  }
  return j.dump(2);
}

}  // namespace exl::plan
