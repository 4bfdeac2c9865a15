// The paged KV cache's bookkeeping (see page_cache.h for the rules it keeps).
#include "page_cache.h"

#include <algorithm>
#include <string>

#include "exl/error.h"

namespace exl {
namespace {

std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

Error internal(const std::string& what) { return Error(ErrorKind::internal, "page cache: " + what); }

}  // namespace

std::uint64_t default_page_hash(std::uint64_t prev, std::span<const std::int32_t> tokens) {
  std::uint64_t h = mix64(prev ^ 0x9e3779b97f4a7c15ull);
  for (std::int32_t t : tokens) h = mix64(h ^ std::uint32_t(t));
  return h;
}

PageCache::PageCache(int num_pages, int page_tokens, PageHashFn hash)
    : page_tokens_(page_tokens), hash_(hash ? std::move(hash) : PageHashFn(default_page_hash)) {
  if (num_pages <= 0 || page_tokens <= 0)
    throw Error(ErrorKind::invalid_argument, "a paged cache needs at least one page of at least one token");
  pages_.resize(std::size_t(num_pages));
}

PageCache::Sequence& PageCache::seq_ref(SeqId seq) {
  if (seq < 0 || seq >= int(seqs_.size()) || !seqs_[std::size_t(seq)].live)
    throw internal("unknown sequence " + std::to_string(seq));
  return seqs_[std::size_t(seq)];
}

const PageCache::Sequence& PageCache::seq_ref(SeqId seq) const {
  return const_cast<PageCache*>(this)->seq_ref(seq);
}

PageCache::SeqId PageCache::create_sequence() {
  for (std::size_t i = 0; i < seqs_.size(); ++i)
    if (!seqs_[i].live) {
      seqs_[i] = Sequence{true, next_serial_++, 0, {}};
      return SeqId(i);
    }
  seqs_.push_back(Sequence{true, next_serial_++, 0, {}});
  return SeqId(seqs_.size() - 1);
}

void PageCache::release_sequence(SeqId seq) {
  Sequence& s = seq_ref(seq);
  for (std::int32_t p : s.pages) unref(p);
  s = Sequence{};
}

int PageCache::length(SeqId seq) const { return seq_ref(seq).length; }

std::span<const std::int32_t> PageCache::page_table(SeqId seq) const { return seq_ref(seq).pages; }

std::vector<std::int32_t> PageCache::tokens(SeqId seq) const {
  const Sequence& s = seq_ref(seq);
  std::vector<std::int32_t> out;
  out.reserve(std::size_t(s.length));
  for (std::size_t i = 0; int(out.size()) < s.length; ++i) {
    const auto& t = pages_[std::size_t(s.pages[i])].tokens;
    const std::size_t n = std::min(t.size(), std::size_t(s.length) - out.size());
    out.insert(out.end(), t.begin(), t.begin() + std::ptrdiff_t(n));
  }
  return out;
}

void PageCache::erase_entry(std::unordered_multimap<std::uint64_t, int>& m, std::uint64_t key, int p) {
  auto [b, e] = m.equal_range(key);
  for (auto it = b; it != e; ++it)
    if (it->second == p) {
      m.erase(it);
      return;
    }
}

void PageCache::unindex(int p) {
  Page& pg = pages_[std::size_t(p)];
  if (pg.hashed) erase_entry(full_, pg.hash, p);
  if (pg.id != 0) erase_entry(children_, pg.parent, p);
  pg.hashed = false;
  pg.hash = 0;
}

void PageCache::cut(int p, int keep) {
  Page& pg = pages_[std::size_t(p)];
  if (int(pg.tokens.size()) <= keep) return;
  unindex(p);
  pg.tokens.resize(std::size_t(keep));
  if (keep == 0) {
    pg.id = 0;
    return;
  }
  pg.id = next_id_++;  // pages that followed the old contents no longer follow this one
  children_.emplace(pg.parent, p);
}

void PageCache::unref(int p) {
  Page& pg = pages_[std::size_t(p)];
  if (pg.refs <= 0) throw internal("page " + std::to_string(p) + " released more often than referenced");
  --pg.refs;
  pg.last_use = ++clock_;
}

int PageCache::allocate_page() {
  const int p = try_allocate_page();
  if (p < 0) throw full();
  return p;
}

Error PageCache::full() const {
  return Error(ErrorKind::out_of_memory, "the KV cache is full: all " + std::to_string(pages_.size()) + " pages of " +
                                             std::to_string(page_tokens_) + " tokens are in use");
}

int PageCache::try_allocate_page() {
  int best = -1;
  for (int p = 0; p < int(pages_.size()); ++p) {
    const Page& pg = pages_[std::size_t(p)];
    if (pg.refs != 0) continue;
    if (pg.id == 0) {  // empty: take it at once
      best = p;
      break;
    }
    if (best < 0 || pg.last_use < pages_[std::size_t(best)].last_use) best = p;
  }
  if (best < 0) return -1;
  Page& pg = pages_[std::size_t(best)];
  if (pg.id != 0) {
    ++evictions_;
    unindex(best);
  }
  pg = Page{};
  pg.refs = 1;
  pg.last_use = ++clock_;
  return best;
}

int PageCache::attach_prefix(SeqId seq, std::span<const std::int32_t> tokens, int max_tokens) {
  Sequence& s = seq_ref(seq);
  if (s.length != 0 || !s.pages.empty()) throw internal("attach_prefix needs an empty sequence");
  const int limit = std::clamp(max_tokens, 0, int(tokens.size()));
  const std::size_t P = std::size_t(page_tokens_);
  std::uint64_t parent = 0, parent_hash = 0;
  int pos = 0;
  auto attach = [&](int p) {
    Page& pg = pages_[std::size_t(p)];
    ++pg.refs;
    pg.last_use = ++clock_;
    s.pages.push_back(p);
  };
  while (pos + page_tokens_ <= limit) {
    const auto block = tokens.subspan(std::size_t(pos), P);
    const std::uint64_t h = hash_(parent_hash, block);
    int found = -1;
    auto [b, e] = full_.equal_range(h);
    for (auto it = b; it != e && found < 0; ++it) {
      const Page& pg = pages_[std::size_t(it->second)];
      if (pg.parent == parent && std::equal(block.begin(), block.end(), pg.tokens.begin(), pg.tokens.end()))
        found = it->second;
    }
    if (found < 0) break;
    attach(found);
    parent = pages_[std::size_t(found)].id;
    parent_hash = h;
    pos += page_tokens_;
  }
  // The partly matching page: the longest common run among the pages that follow the prefix.
  if (pos < limit) {
    const auto rest = tokens.subspan(std::size_t(pos), std::min(P, std::size_t(limit - pos)));
    int best = -1;
    std::size_t best_len = 0;
    auto [b, e] = children_.equal_range(parent);
    for (auto it = b; it != e; ++it) {
      const auto& t = pages_[std::size_t(it->second)].tokens;
      const std::size_t n = std::size_t(std::mismatch(rest.begin(), rest.end(), t.begin(), t.end()).first - rest.begin());
      if (n > best_len || (n == best_len && n > 0 && pages_[std::size_t(it->second)].refs == 0 &&
                           pages_[std::size_t(best)].refs > 0)) {
        best = it->second;
        best_len = n;
      }
    }
    if (best >= 0 && best_len > 0) {
      attach(best);
      pos += int(best_len);
    }
  }
  s.length = pos;
  return pos;
}

void PageCache::reserve(SeqId seq, int n, PageStorage& storage) {
  Sequence& s = seq_ref(seq);
  if (n <= 0) return;
  const int end = s.length + n;
  const int first = s.length / page_tokens_, last = (end - 1) / page_tokens_;
  for (int i = first; i <= last; ++i) {
    const int offset = i == first ? s.length % page_tokens_ : 0;
    if (i < int(s.pages.size())) {
      const int p = s.pages[std::size_t(i)];
      const Page& held = pages_[std::size_t(p)];
      if (int(held.tokens.size()) <= offset) continue;  // nothing to overwrite
      if (held.refs == 1 && held.writer == s.serial) {  // its own rollback
        cut(p, offset);
        continue;
      }
      // Shared, or cached K/V of another request: continue in a copy of the first `offset` positions.
      const int np = try_allocate_page();
      if (np < 0) {
        if (pages_[std::size_t(p)].refs > 1) throw full();
        cut(p, offset);  // the only user: give up the cached tail rather than fail
        continue;
      }
      if (offset > 0) {
        storage.copy_page(np, p);
        ++copies_;
      }
      Page& src = pages_[std::size_t(p)];
      Page& dst = pages_[std::size_t(np)];
      dst.tokens.assign(src.tokens.begin(), src.tokens.begin() + offset);
      if (offset > 0) {
        dst.parent = src.parent;
        dst.parent_hash = src.parent_hash;
        dst.id = next_id_++;
        children_.emplace(dst.parent, np);
      }
      unref(p);
      s.pages[std::size_t(i)] = np;
    } else {
      s.pages.push_back(allocate_page());
    }
  }
}

void PageCache::commit(SeqId seq, std::span<const std::int32_t> ids) {
  Sequence& s = seq_ref(seq);
  std::size_t done = 0;
  while (done < ids.size()) {
    const int i = s.length / page_tokens_, offset = s.length % page_tokens_;
    if (i >= int(s.pages.size())) throw internal("commit past the reserved pages");
    const int p = s.pages[std::size_t(i)];
    Page& pg = pages_[std::size_t(p)];
    if (int(pg.tokens.size()) != offset) throw internal("commit into a page that was not reserved");
    if (offset == 0) {
      const Page* prev = i > 0 ? &pages_[std::size_t(s.pages[std::size_t(i - 1)])] : nullptr;
      pg.parent = prev ? prev->id : 0;
      pg.parent_hash = prev ? prev->hash : 0;
      pg.id = next_id_++;
      children_.emplace(pg.parent, p);
    }
    const std::size_t n = std::min(ids.size() - done, std::size_t(page_tokens_ - offset));
    pg.tokens.insert(pg.tokens.end(), ids.begin() + std::ptrdiff_t(done), ids.begin() + std::ptrdiff_t(done + n));
    pg.last_use = ++clock_;
    pg.writer = s.serial;
    if (int(pg.tokens.size()) == page_tokens_) {
      pg.hash = hash_(pg.parent_hash, pg.tokens);
      pg.hashed = true;
      full_.emplace(pg.hash, p);
    }
    done += n;
    s.length += int(n);
  }
}

void PageCache::truncate(SeqId seq, int length) {
  Sequence& s = seq_ref(seq);
  if (length < 0 || length > s.length)
    throw Error(ErrorKind::invalid_argument, "truncate_cache: length " + std::to_string(length) + " outside 0.." +
                                                 std::to_string(s.length));
  s.length = length;
  const std::size_t keep = std::size_t((length + page_tokens_ - 1) / page_tokens_);
  while (s.pages.size() > keep) {
    unref(s.pages.back());
    s.pages.pop_back();
  }
}

PageCacheStats PageCache::stats() const {
  PageCacheStats st;
  st.pages = int(pages_.size());
  for (const Page& pg : pages_) {
    if (pg.refs > 0) ++st.referenced;
    else if (pg.id != 0) ++st.cached;
    else ++st.free;
  }
  st.evictions = evictions_;
  st.copies = copies_;
  return st;
}

void PageCache::check() const {
  std::vector<int> refs(pages_.size(), 0);
  for (const Sequence& s : seqs_) {
    if (!s.live) continue;
    if (int(s.pages.size()) < (s.length + page_tokens_ - 1) / page_tokens_) throw internal("sequence lacks pages");
    for (std::size_t i = 0; i < s.pages.size(); ++i) {
      ++refs[std::size_t(s.pages[i])];
      const int used = std::clamp(s.length - int(i) * page_tokens_, 0, page_tokens_);
      if (int(pages_[std::size_t(s.pages[i])].tokens.size()) < used) throw internal("sequence past its page's K/V");
    }
  }
  std::size_t hashed = 0, indexed = 0;
  for (std::size_t p = 0; p < pages_.size(); ++p) {
    const Page& pg = pages_[p];
    if (pg.refs != refs[p]) throw internal("page " + std::to_string(p) + " reference count is wrong");
    if (int(pg.tokens.size()) > page_tokens_) throw internal("page overfull");
    if ((pg.id == 0) != pg.tokens.empty()) throw internal("page identity out of step with its contents");
    if (pg.hashed != (int(pg.tokens.size()) == page_tokens_)) throw internal("full page not hashed");
    if (pg.hashed && pg.hash != hash_(pg.parent_hash, pg.tokens)) throw internal("stale page hash");
    hashed += pg.hashed;
    indexed += pg.id != 0;
  }
  if (full_.size() != hashed || children_.size() != indexed) throw internal("index out of step with the pages");
}

void ActiveSequence::open(int pages, int page_tokens, int capacity) {
  close();
  cache_ = std::make_unique<PageCache>(pages, page_tokens);
  seq_ = cache_->create_sequence();
  capacity_ = capacity;
}

void ActiveSequence::close() {
  cache_.reset();
  seq_ = 0;
  capacity_ = 0;
}

void ActiveSequence::truncate(int length) {
  if (!cache_) {
    if (length != 0) throw Error(ErrorKind::invalid_argument, "truncate_cache before allocate_cache");
    return;
  }
  cache_->truncate(seq_, length);
}

int ActiveSequence::reuse_prefix(std::span<const std::int32_t> tokens, int max_reuse) {
  if (!cache_) throw Error(ErrorKind::invalid_argument, "reuse_prefix before allocate_cache");
  cache_->release_sequence(seq_);
  seq_ = cache_->create_sequence();
  return cache_->attach_prefix(seq_, tokens, std::min(max_reuse, capacity_));
}

int ActiveSequence::check_step(int n) const {
  if (!cache_) throw Error(ErrorKind::invalid_argument, "forward before allocate_cache");
  const int length = cache_->length(seq_);
  if (length + n > capacity_)
    throw Error(ErrorKind::invalid_argument, "the KV cache holds " + std::to_string(capacity_) + " tokens; " +
                                                 std::to_string(length + n) + " needed");
  return length;
}

}  // namespace exl
