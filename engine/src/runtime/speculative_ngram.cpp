// Prompt-lookup (n-gram) drafting (spec §9.7) and the draft-vocabulary check.
#include <cstring>

#include "exl/error.h"
#include "exl/generator.h"

namespace exl {
namespace {

std::string key_of(std::span<const std::int32_t> ids) {
  std::string k(ids.size() * sizeof(std::int32_t), '\0');
  if (!ids.empty()) std::memcpy(k.data(), ids.data(), k.size());
  return k;
}

}  // namespace

NgramDrafter::NgramDrafter(int max_ngram) : n_(max_ngram) {
  if (max_ngram < 2) throw Error(ErrorKind::invalid_argument, "max_ngram must be >= 2");
}

void NgramDrafter::append(std::int32_t id) {
  ctx_.push_back(id);
  const std::size_t end = ctx_.size() - 1;  // id's position; contexts end just before it
  for (std::size_t len = 1; len < std::size_t(n_) && len <= end; ++len) {
    Node& node = table_[key_of(std::span<const std::int32_t>(ctx_).subspan(end - len, len))];
    int count = 0;
    bool found = false;
    for (auto& [next, c] : node.counts)
      if (next == id) {
        count = ++c;
        found = true;
        break;
      }
    if (!found) node.counts.emplace_back(id, count = 1);
    if (count >= node.best_count) {  // ties go to the most recent continuation
      node.best = id;
      node.best_count = count;
    }
  }
}

void NgramDrafter::append(std::span<const std::int32_t> ids) {
  for (std::int32_t id : ids) append(id);
}

std::vector<std::int32_t> NgramDrafter::draft(int k) const {
  std::vector<std::int32_t> tail(ctx_.end() - std::min<std::ptrdiff_t>(std::ptrdiff_t(ctx_.size()), n_ - 1),
                                 ctx_.end());
  std::vector<std::int32_t> out;
  if (tail.empty()) return out;
  for (int i = 0; i < k; ++i) {
    std::int32_t next = tail.back();  // no match: repeat the last token
    for (std::size_t len = std::min<std::size_t>(tail.size(), std::size_t(n_ - 1)); len > 0; --len) {
      const auto it = table_.find(key_of(std::span<const std::int32_t>(tail).subspan(tail.size() - len)));
      if (it != table_.end() && it->second.best >= 0) {
        next = it->second.best;
        break;
      }
    }
    out.push_back(next);
    tail.push_back(next);
    if (tail.size() > std::size_t(n_ - 1)) tail.erase(tail.begin());
  }
  return out;
}

void check_draft_vocabulary(const Tokenizer& target, const Tokenizer& draft) {
  if (target.vocab_size() != draft.vocab_size())
    throw Error(ErrorKind::invalid_argument, "the draft model's vocabulary has " + std::to_string(draft.vocab_size()) +
                                                 " tokens, the target's " + std::to_string(target.vocab_size()));
  for (int id = 0; id < target.vocab_size(); ++id)
    if (target.piece(id) != draft.piece(id))
      throw Error(ErrorKind::invalid_argument, "the draft model's vocabulary differs from the target's at token " +
                                                   std::to_string(id) + " ('" + draft.piece(id) + "' vs '" +
                                                   target.piece(id) + "')");
}

}  // namespace exl
