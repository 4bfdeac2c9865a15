// The family part of config.json (config_family.cpp): FamilyDescription and per-layer attention.
#pragma once
#include "config_fields.h"
#include "exl/model_config.h"

namespace exl::format_detail {

// Fills c.family, c.layer_attention, c.rope_local (and the window) for c.model_type; the Llama
// fields, c.rope and c.sliding_window as configured are read before.
void read_family(const Fields& f, ModelConfig& c);

}  // namespace exl::format_detail
