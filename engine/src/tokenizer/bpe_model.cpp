#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "tokenizer/utf8.h"

namespace exl::tok {

namespace {
constexpr std::size_t kCacheMaxWordBytes = 256;
// About 120 bytes an entry (node, key, ids, bucket): 16384 words hold a long conversation's
// vocabulary in about 2 MB. (At 200,000 a server fed varied text grew by the cache for an hour
// or more, about 24 MB, before the first clear: issue 51's RSS creep.)
constexpr std::size_t kCacheMaxEntries = 16'384;
constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581

struct Symbol {
  std::int32_t id;
  int prev, next;
  bool alive;
};
struct QueuedMerge {
  std::int32_t rank;
  int pos;
  std::int32_t new_id;
  bool operator<(const QueuedMerge& o) const {  // max-heap: lowest rank, then leftmost, on top
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};
}  // namespace

BpeModel::BpeModel(const JsonCtx& c, const json& model) {
  const std::string p = "model";
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  const json& vocab = required(c, model, "vocab", p);
  if (!vocab.is_object()) c.fail("model.vocab", "expected an object of token -> id");
  std::int64_t max_id = -1;
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    auto id = static_cast<std::int32_t>(as_int(c, it.value(), "model.vocab[\"" + it.key() + "\"]", 0, 1 << 30));
    vocab_[it.key()] = id;
    max_id = std::max<std::int64_t>(max_id, id);
  }
  if (max_id >= std::int64_t(vocab_.size()) * 2 + 1024)
    c.fail("model.vocab", "token ids are too sparse (largest id " + std::to_string(max_id) + " for " +
                              std::to_string(vocab_.size()) + " tokens)");
  id_to_token_.resize(static_cast<std::size_t>(max_id + 1));
  for (const auto& [tok, id] : vocab_) {
    if (!id_to_token_[id].empty() && id_to_token_[id] != tok)
      c.fail("model.vocab", "id " + std::to_string(id) + " is used by two tokens");
    id_to_token_[id] = tok;
  }

  continuing_prefix_ = opt_string(c, model, "continuing_subword_prefix", p);
  end_suffix_ = opt_string(c, model, "end_of_word_suffix", p);
  byte_fallback_ = opt_bool(c, model, "byte_fallback", p, false);
  fuse_unk_ = opt_bool(c, model, "fuse_unk", p, false);
  ignore_merges_ = opt_bool(c, model, "ignore_merges", p, false);
  if (const json* unk = member(c, model, "unk_token", p)) {
    std::string u = as_string(c, *unk, "model.unk_token");
    auto it = vocab_.find(u);
    if (it == vocab_.end()) c.fail("model.unk_token", "unk token '" + u + "' is not in the vocabulary");
    unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    if (auto it = vocab_.find(std::string_view(name)); it != vocab_.end()) byte_ids_[b] = it->second;
  }

  // With fuse_unk, a run of unknown characters must not be cut: "▁" itself has to be known.
  split_at_metaspace_ = continuing_prefix_.empty() && end_suffix_.empty() &&
                        (!fuse_unk_ || vocab_.count(std::string(kMetaspace)) > 0);
  for (const auto& [tok, id] : vocab_) {
    for (std::size_t pos = tok.find(kMetaspace, 1); pos != std::string::npos && split_at_metaspace_;
         pos = tok.find(kMetaspace, pos + 1))
      if (pos < 3 || tok.compare(pos - 3, 3, kMetaspace) != 0) split_at_metaspace_ = false;
    if (!split_at_metaspace_) break;
  }

  const json* merges = member(c, model, "merges", p);
  if (!merges) return;
  as_array(c, *merges, "model.merges");
  merges_.reserve(merges->size());
  for (std::size_t i = 0; i < merges->size(); ++i) {
    const json& m = (*merges)[i];
    const std::string mp = idx_path("model.merges", i);
    std::string a, b;
    if (m.is_string()) {
      const auto& s = m.get_ref<const std::string&>();
      auto sp = s.find(' ');
      if (sp == std::string::npos) c.fail(mp, "merge '" + s + "' is not two tokens separated by a space");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      c.fail(mp, "expected \"a b\" or [\"a\", \"b\"]");
    }
    auto ia = vocab_.find(a), ib = vocab_.find(b);
    if (ia == vocab_.end()) c.fail(mp, "merge names unknown token '" + a + "'");
    if (ib == vocab_.end()) c.fail(mp, "merge names unknown token '" + b + "'");
    std::string merged = a;
    if (!continuing_prefix_.empty() && b.rfind(continuing_prefix_, 0) == 0)
      merged += b.substr(continuing_prefix_.size());
    else
      merged += b;
    auto im = vocab_.find(merged);
    if (im == vocab_.end()) c.fail(mp, "merged token '" + merged + "' is not in the vocabulary");
    merges_[pair_key(ia->second, ib->second)] = Merge{static_cast<std::int32_t>(i), im->second};
  }
}

std::optional<std::int32_t> BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::string_view BpeModel::id_to_token(std::int32_t id) const {
  if (id < 0 || id >= size()) return {};
  return id_to_token_[id];
}

void BpeModel::tokenize(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto it = vocab_.find(word); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (split_at_metaspace_ && word.size() > kCacheMaxWordBytes) {
    std::size_t begin = 0;
    for (std::size_t pos = word.find(kMetaspace, 1); pos != std::string_view::npos; pos = word.find(kMetaspace, pos + 1)) {
      if (pos >= 3 && word.compare(pos - 3, 3, kMetaspace) == 0) continue;  // inside a run of "▁"
      tokenize_piece(word.substr(begin, pos - begin), out);
      begin = pos;
    }
    tokenize_piece(word.substr(begin), out);
    return;
  }
  tokenize_piece(word, out);
}

void BpeModel::tokenize_piece(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.empty()) return;
  const bool cacheable = word.size() <= kCacheMaxWordBytes;
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (auto it = cache_.find(word); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<std::int32_t> ids;
  merge_word(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (cache_.size() >= kCacheMaxEntries) cache_.clear();
    cache_.emplace(std::string(word), std::move(ids));
  }
}

void BpeModel::merge_word(std::string_view w, std::vector<std::int32_t>& out) const {
  std::vector<Symbol> syms;
  syms.reserve(w.size());
  std::int32_t pending_unk = -1;  // unk waiting to be fused or added
  auto add = [&](std::int32_t id) {
    int idx = static_cast<int>(syms.size());
    syms.push_back(Symbol{id, idx - 1, -1, true});
    if (idx > 0) syms[idx - 1].next = idx;
  };
  std::string buf;
  for (std::size_t i = 0; i < w.size();) {
    std::size_t n = utf8_valid_len(w, i);
    if (n == 0) n = 1;
    const bool first = i == 0, last = i + n >= w.size();
    std::string_view s = w.substr(i, n);
    if ((!first && !continuing_prefix_.empty()) || (last && !end_suffix_.empty())) {
      buf.clear();
      if (!first) buf += continuing_prefix_;
      buf += s;
      if (last) buf += end_suffix_;
      s = buf;
    }
    i += n;
    if (auto it = vocab_.find(s); it != vocab_.end()) {
      if (pending_unk >= 0) add(pending_unk), pending_unk = -1;
      add(it->second);
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char b : s) all = all && byte_ids_[b] >= 0;
      if (all) {
        if (pending_unk >= 0) add(pending_unk), pending_unk = -1;
        for (unsigned char b : s) add(byte_ids_[b]);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk >= 0 && !fuse_unk_) add(pending_unk);
      pending_unk = *unk_id_;
    }
    // Without an unk token the character is dropped, as HF does.
  }
  if (pending_unk >= 0) add(pending_unk);

  std::priority_queue<QueuedMerge> queue;
  auto push_pair = [&](int pos) {
    int nx = syms[pos].next;
    if (nx < 0) return;
    auto it = merges_.find(pair_key(syms[pos].id, syms[nx].id));
    if (it != merges_.end()) queue.push(QueuedMerge{it->second.rank, pos, it->second.new_id});
  };
  for (int i = 0; i + 1 < static_cast<int>(syms.size()); ++i) push_pair(i);
  while (!queue.empty()) {
    QueuedMerge top = queue.top();
    queue.pop();
    Symbol& cur = syms[top.pos];
    if (!cur.alive || cur.next < 0) continue;
    const int right = cur.next;
    auto it = merges_.find(pair_key(cur.id, syms[right].id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;
    cur.id = top.new_id;
    syms[right].alive = false;
    cur.next = syms[right].next;
    if (cur.next >= 0) syms[cur.next].prev = top.pos;
    if (cur.prev >= 0) push_pair(cur.prev);
    push_pair(top.pos);
  }
  for (const auto& s : syms)
    if (s.alive) out.push_back(s.id);
}

}  // namespace exl::tok
