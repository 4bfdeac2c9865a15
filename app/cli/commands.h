// The `exl` subcommands. Each returns the process exit status; errors are thrown as exl::Error
// and reported by main().
#pragma once
#include <filesystem>
#include <string>

#include "args.h"
#include "exl/synth.h"

namespace exl::cli {

int cmd_version();  // exl --version
int cmd_inspect(const Args& a);
int cmd_tokenize(const Args& a);
int cmd_detokenize(const Args& a);
int cmd_logits(const Args& a);
int cmd_generate(const Args& a);
int cmd_chat(const Args& a);
int cmd_ppl(const Args& a);
int cmd_bench(const Args& a);
int cmd_selftest(const Args& a);
int cmd_convert(const Args& a);
int cmd_fit(const Args& a);
int cmd_import(const Args& a);
int cmd_synth(const Args& a);
// --format exl2 (default) or exl3 of `exl synth` and `exl bench --synth`.
synth::SynthFormat synth_format(const Args& a);
int cmd_serve(const Args& a);
int cmd_template(const Args& a);
int cmd_pull(const Args& a);    // Hugging Face Hub: cmd_hub.cpp
int cmd_search(const Args& a);
int cmd_repo(const Args& a);
int cmd_ls(const Args& a);
// "ORG/NAME[:BRANCH]" that is not a local path; config.json of that Hub revision (HF_ENDPOINT, HF_TOKEN).
bool looks_like_hub_ref(const std::string& text);
std::string hub_config_json(const std::string& ref);
// A folder with the revision's config.json and its safetensors files holding only their headers (sparse, full
// size): what the planner reads, without the weights.
void hub_skeleton(const std::string& ref, const std::filesystem::path& dir);

}  // namespace exl::cli
