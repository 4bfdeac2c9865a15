// The paged KV cache's bookkeeping on its own (no model): reference counts, least-recently-used
// eviction, prefix matching through the hash chain (with forced hash collisions), copy on write
// after a rollback, and a random walk over all of it. A fake storage keeps, per cache row, the
// token id "whose K/V" it holds, so every check can read a sequence back through its page table.
#include <algorithm>
#include <random>

#include "exl/error.h"
#include "exl_test.h"
#include "runtime/page_cache.h"

using namespace exl;

namespace {

// Rows of "K/V": row r holds the id written there (-1 = never written).
struct FakeStorage final : PageStorage {
  FakeStorage(int pages, int page_tokens) : page_tokens(page_tokens), rows(std::size_t(pages * page_tokens), -1) {}
  void copy_page(int dst, int src) override {
    std::copy_n(rows.begin() + src * page_tokens, page_tokens, rows.begin() + dst * page_tokens);
    ++copies;
  }
  int page_tokens;
  std::vector<std::int32_t> rows;
  int copies = 0;
};

// What a backend's forward does: reserve, write the K/V rows through the page table, commit.
void append(PageCache& c, FakeStorage& s, PageCache::SeqId seq, std::span<const std::int32_t> ids) {
  c.reserve(seq, int(ids.size()), s);
  const auto table = c.page_table(seq);
  const int P = c.page_tokens();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const int pos = c.length(seq) + int(i);
    s.rows[std::size_t(table[std::size_t(pos / P)] * P + pos % P)] = ids[i];
  }
  c.commit(seq, ids);
}

// The sequence's K/V as the attention would read them.
std::vector<std::int32_t> read_back(const PageCache& c, const FakeStorage& s, PageCache::SeqId seq) {
  std::vector<std::int32_t> out;
  const auto table = c.page_table(seq);
  const int P = c.page_tokens();
  for (int pos = 0; pos < c.length(seq); ++pos) out.push_back(s.rows[std::size_t(table[std::size_t(pos / P)] * P + pos % P)]);
  return out;
}

std::vector<std::int32_t> iota_ids(int n, int first) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) v[std::size_t(i)] = first + i;
  return v;
}

}  // namespace

EXL_TEST(page_cache, refcounts_and_sharing) {
  PageCache c(8, 4);
  FakeStorage s(8, 4);
  const auto ids = iota_ids(10, 100);
  const auto a = c.create_sequence();
  append(c, s, a, ids);
  CHECK_EQ(c.stats().referenced, 3);
  // A second sequence with the same prompt shares the two full pages and the partial one.
  const auto b = c.create_sequence();
  CHECK_EQ(c.attach_prefix(b, ids, 9), 9);
  CHECK_EQ(c.stats().referenced, 3);
  c.check();
  CHECK(read_back(c, s, b) == std::vector<std::int32_t>(ids.begin(), ids.begin() + 9));
  c.release_sequence(a);
  CHECK_EQ(c.stats().referenced, 3);  // b still uses them
  c.release_sequence(b);
  const auto st = c.stats();
  CHECK_EQ(st.referenced, 0);
  CHECK_EQ(st.cached, 3);
  CHECK_EQ(st.free, 5);
  c.check();
  // Released pages stay matchable.
  const auto d = c.create_sequence();
  CHECK_EQ(c.attach_prefix(d, ids, 100), 10);
  CHECK(read_back(c, s, d) == ids);
  c.check();
}

EXL_TEST(page_cache, lru_eviction) {
  PageCache c(4, 4);
  FakeStorage s(4, 4);
  const auto x = iota_ids(8, 0), y = iota_ids(8, 50), z = iota_ids(8, 90);
  for (const std::vector<std::int32_t>* ids : std::initializer_list<const std::vector<std::int32_t>*>{&x, &y}) {
    const auto q = c.create_sequence();
    append(c, s, q, *ids);
    c.release_sequence(q);
  }
  CHECK_EQ(c.stats().cached, 4);
  // Touch x again: y becomes the least recently used.
  auto q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, x, 8), 8);
  c.release_sequence(q);
  q = c.create_sequence();
  append(c, s, q, z);  // needs two pages: y's go
  c.release_sequence(q);
  CHECK_EQ(c.stats().evictions, 2u);
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, y, 8), 0);
  c.release_sequence(q);
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, x, 8), 8);
  CHECK(read_back(c, s, q) == x);
  c.release_sequence(q);
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, z, 8), 8);
  CHECK(read_back(c, s, q) == z);
  c.check();
}

EXL_TEST(page_cache, full_pool_is_a_clear_error_and_keeps_the_sequence) {
  PageCache c(2, 4);
  FakeStorage s(2, 4);
  const auto a = c.create_sequence();
  append(c, s, a, iota_ids(6, 0));
  CHECK_THROWS_ERROR(append(c, s, a, iota_ids(4, 10)), ErrorKind::out_of_memory, "KV cache is full");
  CHECK_EQ(c.length(a), 6);
  c.check();
  CHECK(read_back(c, s, a) == iota_ids(6, 0));
  append(c, s, a, iota_ids(2, 10));  // what still fits
  CHECK_EQ(c.length(a), 8);
  c.check();
}

EXL_TEST(page_cache, rollback_copies_a_shared_page_and_rewrites_an_own_one) {
  PageCache c(8, 4);
  FakeStorage s(8, 4);
  const auto ids = iota_ids(10, 200);
  const auto a = c.create_sequence();
  append(c, s, a, ids);
  const auto b = c.create_sequence();
  CHECK_EQ(c.attach_prefix(b, ids, 10), 10);
  // b rolls back into the shared middle page and writes other ids there: a must not see them.
  c.truncate(b, 6);
  CHECK_EQ(c.stats().referenced, 3);
  const std::vector<std::int32_t> other = {7, 8, 9};
  append(c, s, b, other);
  CHECK_EQ(s.copies, 1);
  CHECK(read_back(c, s, a) == ids);
  std::vector<std::int32_t> want_b(ids.begin(), ids.begin() + 6);
  want_b.insert(want_b.end(), other.begin(), other.end());
  CHECK(read_back(c, s, b) == want_b);
  CHECK(c.page_table(a)[0] == c.page_table(b)[0]);  // the untouched first page stays shared
  CHECK(c.page_table(a)[1] != c.page_table(b)[1]);
  c.check();
  // A page only b uses is rewritten in place: no copy.
  c.truncate(b, 7);
  append(c, s, b, std::vector<std::int32_t>{42, 43});
  CHECK_EQ(s.copies, 1);
  want_b.resize(7);
  want_b.insert(want_b.end(), {42, 43});
  CHECK(read_back(c, s, b) == want_b);
  c.check();
  // The old contents of a rewritten page are no longer matched.
  c.release_sequence(b);
  const auto d = c.create_sequence();
  std::vector<std::int32_t> probe(ids.begin(), ids.begin() + 6);
  probe.insert(probe.end(), other.begin(), other.end());
  CHECK_EQ(c.attach_prefix(d, probe, 9), 7);  // page 0, then 204 205 7 of b's rewritten page (its 8 is gone)
  c.check();
}

EXL_TEST(page_cache, a_partly_matched_cached_page_is_copied_not_cut) {
  PageCache c(8, 4);
  FakeStorage s(8, 4);
  const auto first = iota_ids(7, 10);  // pages [10..13] [14 15 16]
  auto q = c.create_sequence();
  append(c, s, q, first);
  c.release_sequence(q);
  // A new request shares 10..14 and goes on differently: the cached page with 14 15 16 is copied.
  const std::vector<std::int32_t> second = {10, 11, 12, 13, 14, 99, 98};
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, second, 7), 5);
  append(c, s, q, std::span<const std::int32_t>(second).subspan(5));
  CHECK_EQ(s.copies, 1);
  CHECK(read_back(c, s, q) == second);
  c.release_sequence(q);
  // Both continuations stay cached.
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, first, 7), 7);
  CHECK(read_back(c, s, q) == first);
  c.release_sequence(q);
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, second, 7), 7);
  CHECK(read_back(c, s, q) == second);
  c.check();
  // With no page to spare (one page in all), the only user rewrites the page in place.
  PageCache one(1, 8);
  FakeStorage s1(1, 8);
  q = one.create_sequence();
  append(one, s1, q, first);
  one.release_sequence(q);
  q = one.create_sequence();
  CHECK_EQ(one.attach_prefix(q, second, 7), 5);
  append(one, s1, q, std::span<const std::int32_t>(second).subspan(5));
  CHECK(read_back(one, s1, q) == second);
  CHECK_EQ(s1.copies, 0);
  one.check();
}

EXL_TEST(page_cache, hash_collisions_are_resolved_by_comparing_tokens) {
  // Every page hashes alike: matching must rely on the tokens and the predecessor page.
  PageCache c(16, 4, [](std::uint64_t, std::span<const std::int32_t>) { return std::uint64_t(7); });
  FakeStorage s(16, 4);
  const auto x = iota_ids(12, 0);
  std::vector<std::int32_t> y = {50, 51, 52, 53, 4, 5, 6, 7, 8, 9, 10, 11};  // x's later blocks after another first block
  for (const std::vector<std::int32_t>* ids : std::initializer_list<const std::vector<std::int32_t>*>{&x, &y}) {
    const auto q = c.create_sequence();
    append(c, s, q, *ids);
    c.release_sequence(q);
  }
  c.check();
  auto q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, x, 12), 12);
  CHECK(read_back(c, s, q) == x);
  c.release_sequence(q);
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, y, 12), 12);
  CHECK(read_back(c, s, q) == y);
  c.release_sequence(q);
  // x's first block followed by y's second block: only the first page is a true prefix match,
  // and y's pages (same hash, same tokens later) must not be taken for x's continuation.
  std::vector<std::int32_t> mixed = {0, 1, 2, 3, 4, 5, 6, 99};
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, mixed, 8), 7);
  CHECK(read_back(c, s, q) == std::vector<std::int32_t>(mixed.begin(), mixed.begin() + 7));
  CHECK(c.page_table(q)[0] != c.page_table(q)[1]);
  c.release_sequence(q);
  std::vector<std::int32_t> alien = {9, 9, 9, 9, 4, 5, 6, 7};
  q = c.create_sequence();
  CHECK_EQ(c.attach_prefix(q, alien, 8), 0);
  c.check();
}

EXL_TEST(page_cache, random_walk_keeps_every_sequence_intact) {
  std::mt19937 rng(1234);
  for (int pool : {3, 6, 12}) {
    PageCache c(pool, 4);
    FakeStorage s(pool, 4);
    struct Live {
      PageCache::SeqId id;
      std::vector<std::int32_t> ids;
    };
    std::vector<Live> live;
    auto rnd = [&](int n) { return int(rng() % std::uint32_t(n)); };
    for (int step = 0; step < 4000; ++step) {
      const int op = rnd(10);
      if (live.empty() || (op == 0 && live.size() < 3)) {
        // A new request: a prefix of an earlier one (or not) plus new ids, from a small alphabet.
        std::vector<std::int32_t> prompt;
        if (!live.empty() && rnd(2)) {
          const auto& src = live[std::size_t(rnd(int(live.size())))].ids;
          prompt.assign(src.begin(), src.begin() + rnd(int(src.size()) + 1));
        }
        for (int i = rnd(6); i > 0; --i) prompt.push_back(rnd(3));
        Live l{c.create_sequence(), {}};
        const int reused = c.attach_prefix(l.id, prompt, int(prompt.size()));
        l.ids.assign(prompt.begin(), prompt.begin() + reused);
        CHECK(read_back(c, s, l.id) == l.ids);
        live.push_back(l);
        try {
          append(c, s, l.id, std::span<const std::int32_t>(prompt).subspan(std::size_t(reused)));
          l.ids = prompt;
          live.back() = l;
        } catch (const Error& e) {
          CHECK(e.kind() == ErrorKind::out_of_memory);
        }
      } else if (op <= 2) {
        const std::size_t i = std::size_t(rnd(int(live.size())));
        c.release_sequence(live[i].id);
        live.erase(live.begin() + std::ptrdiff_t(i));
      } else if (op <= 5) {
        Live& l = live[std::size_t(rnd(int(live.size())))];
        const int n = rnd(int(l.ids.size()) + 1);
        c.truncate(l.id, n);
        l.ids.resize(std::size_t(n));
      } else {
        Live& l = live[std::size_t(rnd(int(live.size())))];
        std::vector<std::int32_t> more;
        for (int i = 1 + rnd(5); i > 0; --i) more.push_back(rnd(3));
        try {
          append(c, s, l.id, more);
          l.ids.insert(l.ids.end(), more.begin(), more.end());
        } catch (const Error& e) {
          CHECK(e.kind() == ErrorKind::out_of_memory);
        }
      }
      c.check();
      for (const Live& l : live) {
        CHECK_EQ(c.length(l.id), int(l.ids.size()));
        CHECK(read_back(c, s, l.id) == l.ids);
        CHECK(c.tokens(l.id) == l.ids);
      }
    }
  }
}

// A backend's active sequence (what the CPU and CUDA backends answer for the Backend's cache calls):
// clear errors before a cache exists, the capacity check before a step, prefix reuse, and a fresh
// sequence after reopening.
EXL_TEST(page_cache, active_sequence_of_a_backend) {
  ActiveSequence a;
  CHECK(!a.is_open());
  CHECK_EQ(a.length(), 0);
  CHECK_EQ(a.capacity(), 0);
  a.truncate(0);  // nothing to forget
  CHECK_THROWS_ERROR(a.truncate(1), ErrorKind::invalid_argument, "truncate_cache before allocate_cache");
  const auto ids = iota_ids(6, 500);
  CHECK_THROWS_ERROR(a.reuse_prefix(ids, 6), ErrorKind::invalid_argument, "reuse_prefix before allocate_cache");
  CHECK_THROWS_ERROR(a.check_step(1), ErrorKind::invalid_argument, "forward before allocate_cache");

  FakeStorage s(4, 4);
  a.open(4, 4, 7);
  CHECK(a.is_open());
  CHECK_EQ(a.capacity(), 7);
  CHECK_EQ(a.page_tokens(), 4);
  CHECK_EQ(a.check_step(7), 0);
  CHECK_THROWS_ERROR(a.check_step(8), ErrorKind::invalid_argument, "the KV cache holds 7 tokens; 8 needed");
  // A step as a backend takes it: reserve, write through the page table, commit.
  a.reserve(6, s);
  const auto table = a.page_table();
  for (int pos = 0; pos < 6; ++pos) s.rows[std::size_t(table[std::size_t(pos / 4)] * 4 + pos % 4)] = ids[std::size_t(pos)];
  a.commit(ids);
  CHECK_EQ(a.length(), 6);
  CHECK_THROWS_ERROR(a.check_step(2), ErrorKind::invalid_argument, "the KV cache holds 7 tokens; 8 needed");
  a.truncate(3);
  CHECK_EQ(a.length(), 3);
  CHECK_EQ(a.check_step(4), 3);
  // A new sequence on the cached prefix, never longer than asked for; the released page past the
  // truncation keeps its K/V, so all 6 ids match again.
  CHECK_EQ(a.reuse_prefix(ids, 2), 2);
  CHECK_EQ(a.reuse_prefix(ids, 6), 6);
  CHECK_EQ(a.length(), 6);
  CHECK_EQ(a.reuse_prefix(iota_ids(6, 900), 6), 0);  // nothing of another prompt

  a.open(2, 4, 5);  // a new allocation: an empty sequence on new pages
  CHECK_EQ(a.length(), 0);
  CHECK_EQ(a.capacity(), 5);
  a.close();
  CHECK(!a.is_open());
  CHECK_EQ(a.capacity(), 0);
  CHECK_THROWS_ERROR(a.check_step(1), ErrorKind::invalid_argument, "forward before allocate_cache");
}
