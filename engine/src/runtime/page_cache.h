// Host-side manager of a paged KV cache (spec §6.1 paged mode, §9.3): the pool of pages, one page
// table per sequence, reference counts, least-recently-used eviction of unreferenced pages, and
// prefix matching so a new request reuses the K/V of earlier ones (previous turns of a chat, a
// shared system prompt). It holds no K/V itself: a backend stores the K/V of page p in its rows
// [p * page_tokens, (p + 1) * page_tokens) and is asked to copy pages (copy on write).
//
// Rules that keep the cache consistent:
//  * A page records the ids whose K/V it holds (`tokens`); only commit() extends them, after the
//    backend wrote those K/V, so a failed or cancelled step never leaves a page claiming K/V it
//    does not have.
//  * Full pages are indexed by a hash chained over page-aligned blocks (the hash of a page covers
//    the whole prefix up to its end); every page with content is also indexed under its
//    predecessor, for matching the partly filled last page. A match always compares the tokens
//    and the predecessor's identity, so hash collisions never produce a wrong match.
//  * A page referenced by more than one sequence is never written: a sequence that must write
//    into it (after a rollback, or when it reused only part of it) gets a copy first. A page the
//    writing sequence filled itself and alone uses (a speculative rollback) is rewritten in place,
//    which drops what it held past the write position (and re-quantizes a partly filled block, as
//    a contiguous cache does). A cached page another request filled is copied too, so its K/V stay
//    reusable, unless no page is left (the one-page unpaged cache): then it is rewritten.
//  * Released pages keep their K/V and stay matchable until evicted (least recently used first).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "exl/error.h"

namespace exl {

constexpr int kPageTokens = 256;

// Where the K/V of the pages live.
class PageStorage {
 public:
  virtual ~PageStorage() = default;
  // Copies every layer's K and V rows of page `src` to page `dst`, bytes exactly.
  virtual void copy_page(int dst, int src) = 0;
};

// Hash of one full page given the hash of the prefix before it (0 for the first page).
using PageHashFn = std::function<std::uint64_t(std::uint64_t prev, std::span<const std::int32_t> tokens)>;
std::uint64_t default_page_hash(std::uint64_t prev, std::span<const std::int32_t> tokens);

struct PageCacheStats {
  int pages = 0;
  int referenced = 0;      // pages used by at least one sequence
  int cached = 0;          // unreferenced pages that still hold reusable K/V
  int free = 0;            // empty pages
  std::uint64_t evictions = 0;
  std::uint64_t copies = 0;  // copy-on-write page copies
};

class PageCache {
 public:
  using SeqId = int;

  // Throws Error(invalid_argument) unless num_pages and page_tokens are positive.
  explicit PageCache(int num_pages, int page_tokens = kPageTokens, PageHashFn hash = {});

  int page_tokens() const { return page_tokens_; }
  int num_pages() const { return int(pages_.size()); }

  SeqId create_sequence();
  // Drops the sequence's references; its pages stay cached for later prefix matches.
  void release_sequence(SeqId seq);

  int length(SeqId seq) const;
  // Physical page of each logical page of the sequence (may run one page past length() while a
  // step is reserved but not committed).
  std::span<const std::int32_t> page_table(SeqId seq) const;
  // The ids whose K/V the sequence holds (positions 0 .. length()-1).
  std::vector<std::int32_t> tokens(SeqId seq) const;

  // Attaches to an empty sequence the longest cached prefix of `tokens`, at most `max_tokens`
  // long: full pages through the hash chain, then the best partial match among the pages that
  // follow the matched prefix. Returns the new length (the number of reused tokens).
  int attach_prefix(SeqId seq, std::span<const std::int32_t> tokens, int max_tokens);

  // Makes positions [length, length + n) writable: pages are allocated (evicting the least
  // recently used unreferenced page when none is free) and a shared page the step would write
  // into is copied through `storage` first. Throws Error(out_of_memory) when every page is in use;
  // the sequence stays valid (length unchanged).
  void reserve(SeqId seq, int n, PageStorage& storage);
  // Records that positions [length, length + ids.size()) now hold the K/V of `ids` (after the
  // backend wrote them into the reserved pages); full pages enter the hash index.
  void commit(SeqId seq, std::span<const std::int32_t> ids);
  // Forgets positions >= length (rollback). Pages past the new end are released; the page the
  // end falls in is not touched until the sequence writes into it again.
  void truncate(SeqId seq, int length);

  PageCacheStats stats() const;
  // Throws Error(internal) when an invariant does not hold (for tests).
  void check() const;

 private:
  struct Page {
    int refs = 0;
    std::uint64_t last_use = 0;
    std::uint64_t id = 0;           // content identity; 0 = empty. Changes whenever held ids are dropped.
    std::uint64_t parent = 0;       // id of the page before it in the prefix (0: first page)
    std::uint64_t parent_hash = 0;  // chain hash of the prefix before it
    std::uint64_t hash = 0;         // chain hash up to its end (full pages only)
    std::uint64_t writer = 0;       // serial of the sequence that last committed into it
    bool hashed = false;
    std::vector<std::int32_t> tokens;
  };
  struct Sequence {
    bool live = false;
    std::uint64_t serial = 0;  // unique over the cache's life (slots are reused)
    int length = 0;
    std::vector<std::int32_t> pages;
  };

  Sequence& seq_ref(SeqId seq);
  const Sequence& seq_ref(SeqId seq) const;
  int allocate_page();
  int try_allocate_page();  // -1 when every page is referenced
  Error full() const;
  void unindex(int p);
  void cut(int p, int keep);  // drops held ids past `keep` of an unshared page
  void unref(int p);
  static void erase_entry(std::unordered_multimap<std::uint64_t, int>& m, std::uint64_t key, int p);

  int page_tokens_;
  PageHashFn hash_;
  std::vector<Page> pages_;
  std::vector<Sequence> seqs_;
  std::unordered_multimap<std::uint64_t, int> full_;      // chain hash -> full page
  std::unordered_multimap<std::uint64_t, int> children_;  // predecessor id -> page with content
  std::uint64_t clock_ = 0;
  std::uint64_t next_id_ = 1;
  std::uint64_t next_serial_ = 1;
  std::uint64_t evictions_ = 0;
  std::uint64_t copies_ = 0;
};

// A backend's page cache with its one active sequence: what the CPU and CUDA backends answer alike
// for the Backend's cache calls (cache_capacity, cache_length, truncate_cache, reuse_prefix) and
// the checks before a step.
class ActiveSequence {
 public:
  // A new cache of `pages` pages of `page_tokens` positions; the sequence may grow to `capacity`.
  void open(int pages, int page_tokens, int capacity);
  void close();  // no cache (a new model, or before a new allocation)
  bool is_open() const { return cache_ != nullptr; }
  int capacity() const { return capacity_; }
  int length() const { return cache_ ? cache_->length(seq_) : 0; }
  // Throws Error(invalid_argument) when there is no cache and `length` is not 0.
  void truncate(int length);
  // A new sequence on the longest cached prefix of `tokens` (at most max_reuse, at most the
  // capacity); returns its length. Throws Error(invalid_argument) without a cache.
  int reuse_prefix(std::span<const std::int32_t> tokens, int max_reuse);
  // Before a step of n positions: throws Error(invalid_argument) without a cache or when the
  // capacity is short; returns length().
  int check_step(int n) const;

  // The step's pages (valid while is_open()).
  void reserve(int n, PageStorage& storage) { cache_->reserve(seq_, n, storage); }
  std::span<const std::int32_t> page_table() const { return cache_->page_table(seq_); }
  void commit(std::span<const std::int32_t> ids) { cache_->commit(seq_, ids); }
  int page_tokens() const { return cache_->page_tokens(); }

 private:
  std::unique_ptr<PageCache> cache_;
  PageCache::SeqId seq_ = 0;
  int capacity_ = 0;
};

}  // namespace exl
