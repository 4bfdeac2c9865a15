// The CUDA emulator's scheduler, primitives and the subset of the CUDA runtime (and cuBLAS
// handle calls) the emulated sources use. See emu.h for the model.
#include "emu.h"

#include <cublas_v2.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <atomic>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace exl::emu {
namespace {

constexpr std::size_t k_stack_bytes = 256u << 10;
constexpr int k_optin_smem = 232448;  // an H200's opt-in shared memory per block
constexpr int k_default_smem = 48u << 10;

enum Kind : int { k_shfl_idx, k_shfl_up, k_shfl_down, k_shfl_xor, k_sync, k_mma8, k_mma16, k_ldm, k_ldm_t };
const char* kind_name(int k) {
  static const char* n[] = {"__shfl_sync",  "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__syncwarp",
                            "mma m16n8k8",  "mma m16n8k16",   "ldmatrix",         "ldmatrix.trans"};
  return k >= 0 && k < 9 ? n[k] : "?";
}

struct Slot {
  std::uint64_t v = 0;
  std::uint32_t a[4] = {}, b[2] = {};
  float c[4] = {};
  const void* addr = nullptr;
  std::uint32_t r[4] = {};
};
struct Warp {
  unsigned gen = 0;
  int arrived = 0;
  int kind = -1;
  unsigned mask = 0;
  Slot slot[2][32];
};
struct Barrier {
  unsigned gen = 0;
  int arrived = 0;
  int need = 0;
};
// ---- context switches between the scheduler and the threads' fibers ----
// x86-64: callee-saved registers, MXCSR and the x87 control word on the stack, the stack pointer
// in the context (no signal-mask system call, unlike swapcontext). Elsewhere: ucontext.
void fiber_main();
#if defined(__x86_64__)
extern "C" void exl_emu_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .globl exl_emu_switch
  .type exl_emu_switch, @function
exl_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size exl_emu_switch, .-exl_emu_switch
)");
struct Context {
  void* sp = nullptr;
};
extern "C" void exl_emu_fiber_entry() { fiber_main(); }
// A new fiber's stack as exl_emu_switch leaves one: the first switch "returns" into
// exl_emu_fiber_entry with the ABI's alignment (it never returns).
void make_context(Context& c, char* stack, std::size_t bytes) {
  auto top = (reinterpret_cast<std::uintptr_t>(stack) + bytes) & ~std::uintptr_t(15);
  auto* p = reinterpret_cast<std::uint64_t*>(top);
  *--p = 0;                                                         // (exl_emu_fiber_entry's return address)
  *--p = reinterpret_cast<std::uint64_t>(&exl_emu_fiber_entry);     // exl_emu_switch's ret
  for (int i = 0; i < 6; ++i) *--p = 0;                             // rbp, rbx, r12 .. r15
  *--p = 0x1f80u | (std::uint64_t(0x037fu) << 32);                  // MXCSR, x87 control word
  c.sp = p;
}
inline void switch_context(Context& from, Context& to) { exl_emu_switch(&from.sp, to.sp); }
#else
struct Context {
  ucontext_t uc{};
};
void make_context(Context& c, char* stack, std::size_t bytes) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = bytes;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, fiber_main, 0);
}
inline void switch_context(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
#endif

// What a parked fiber waits for: a 32-bit word to change from wait_value (a collective's or
// barrier's generation, a polled counter), or an mbarrier phase of parity wait_value to complete.
enum Wait : int { w_none, w_word, w_mbar };
struct Block;
struct Fiber {
  Context ctx{};
  char* stack = nullptr;
  Block* blk = nullptr;
  uint3 tid{};
  int block = 0, warp = 0, lane = 0;
  bool done = false, trapped = false;
  int wait = w_none;
  const void* wait_addr = nullptr;
  unsigned wait_value = 0;
  // for the deadlock report: a collective kind, 100 + a barrier id (what_value: its threads),
  // 200 an acquiring load, 300 an mbarrier
  int what = -1;
  unsigned what_value = 0;
  const void* last_acq = nullptr;
  std::uint64_t last_acq_value = 0;
};
struct Block {
  int index = 0;
  uint3 idx{};
  unsigned char* smem = nullptr;
  std::size_t smem_bytes = 0;
  std::vector<Warp> warps;
  Barrier bars[16];
  int live = 0;
  std::map<const void*, std::vector<unsigned char>> statics;
  std::vector<Fiber> fibers;
  std::vector<std::size_t> order;
};
struct Mbar {
  unsigned count = 0, pending = 0;
  long long tx = 0;
  unsigned phase = 0;
};
struct Copy {
  unsigned char* dst;
  const unsigned char* src;
  unsigned bytes;
  std::uint64_t* bar;
  std::uint64_t due;
  const Block* blk;
};
struct Launch {
  dim3 grid, block;
  std::size_t smem = 0;
  KernelBody body;
  std::vector<std::unique_ptr<Block>> active;
  int next_block = 0, total_blocks = 0;
  std::unordered_map<std::uint64_t*, Mbar> mbars;
  std::deque<Copy> copies;
  bool failed = false;
  std::string error;
};

// Allocations of the emulated device (bounds of bulk copies), by start address.
struct Alloc {
  std::size_t bytes;
  int device;  // -1: pinned host memory
};
constexpr int k_max_emu_devices = 8;
std::mutex g_alloc_mutex;
std::map<std::uintptr_t, Alloc> g_allocs;
std::size_t g_device_bytes[k_max_emu_devices] = {};
// Devices: EXL_CUDA_EMU_DEVICES (1 to 8, default 1), all alike, peers of each other; the current
// one per host thread.
int device_count() {
  static const int n = [] {
    const char* e = std::getenv("EXL_CUDA_EMU_DEVICES");
    return e ? std::max(1, std::min(k_max_emu_devices, std::atoi(e))) : 1;
  }();
  return n;
}
thread_local int g_device = 0;
std::mutex g_peer_mutex;
bool g_peer[k_max_emu_devices][k_max_emu_devices] = {};

// The grid running on this OS thread and its current fiber (fibers run on the thread that
// launched them; grids of different host threads take turns, g_launch_mutex).
thread_local Launch* g_launch = nullptr;
thread_local Fiber* g_cur = nullptr;
Context g_sched;
std::uint64_t g_progress = 0;
std::uint64_t g_round = 0;
std::uint64_t g_time_ns = 1000000000ull;
int g_sm_count = 4;
std::mt19937_64 g_rng(1);
Stats g_stats;
cudaError_t g_last_error = cudaSuccess;
std::map<const void*, int> g_func_smem;

void to_scheduler(Fiber& f) { switch_context(f.ctx, g_sched); }
void to_fiber(Fiber& f) { switch_context(g_sched, f.ctx); }

Fiber& cur() {
  if (!g_cur) {
    std::fprintf(stderr, "exl emu: a device function was called outside a launch\n");
    std::abort();
  }
  return *g_cur;
}
Block& cur_block() { return *cur().blk; }
Warp& cur_warp() { return cur_block().warps[std::size_t(cur().warp)]; }

// Fails the launch from inside a fiber (like a device-side error): the fiber never resumes.
[[noreturn]] void fail(const std::string& why) {
  Fiber& f = cur();
  if (!g_launch->failed) {
    g_launch->failed = true;
    g_launch->error = "block " + std::to_string(f.block) + " thread " + std::to_string(f.tid.x) + ": " + why;
  }
  f.trapped = true;
  to_scheduler(f);
  std::abort();  // not reached: a trapped fiber is never resumed
}

bool still_waiting(const Fiber& f) {
  switch (f.wait) {
    case w_word: return *static_cast<const unsigned*>(f.wait_addr) == f.wait_value;
    case w_mbar: {
      auto it = g_launch->mbars.find(static_cast<std::uint64_t*>(const_cast<void*>(f.wait_addr)));
      return it != g_launch->mbars.end() && (it->second.phase & 1u) == f.wait_value;
    }
    default: return false;
  }
}

// Parks the fiber until its condition may have changed (the scheduler skips it until then, or
// wakes everyone once when nobody can move).
void park(Fiber& f, Wait kind, const void* addr, unsigned value, int what, unsigned what_value) {
  f.wait = kind;
  f.wait_addr = addr;
  f.wait_value = value;
  f.what = what;
  f.what_value = what_value;
  to_scheduler(f);
  f.wait = w_none;
}

std::string smem_name(const Block& b, const void* p) {
  const auto* c = static_cast<const unsigned char*>(p);
  if (c >= b.smem && c < b.smem + b.smem_bytes) return "smem+" + std::to_string(c - b.smem);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

std::string describe(const Fiber& f) {
  const Block& b = *f.blk;
  if (f.what >= 300) return "mbarrier " + smem_name(b, f.wait_addr) + " parity " + std::to_string(f.what_value);
  if (f.what >= 200)
    return "acquire load at " + smem_name(b, f.wait_addr) + " (value " + std::to_string(f.what_value) + ")";
  if (f.what >= 100)
    return "bar.sync " + std::to_string(f.what - 100) + " (" + std::to_string(f.what_value) + " threads)";
  return std::string("warp collective ") + kind_name(f.what);
}

void fiber_main() {
  Fiber& f = *g_cur;
  g_launch->body();
  f.done = true;
  Block& b = *f.blk;
  --b.live;
  // An exited thread no longer counts towards __syncthreads.
  Barrier& b0 = b.bars[0];
  if (b0.arrived > 0 && b0.arrived >= b.live) {
    b0.arrived = 0;
    ++b0.gen;
  }
  ++g_progress;
  to_scheduler(f);
}

void complete_if_done(Mbar& m) {
  if (m.pending == 0 && m.tx == 0) {
    ++m.phase;
    m.pending = m.count;
    ++g_progress;
  }
}

Mbar& mbar_of(std::uint64_t* bar) {
  auto it = g_launch->mbars.find(bar);
  if (it == g_launch->mbars.end()) fail("mbarrier used before mbarrier.init");
  return it->second;
}


// A warp collective: the lane's slot is filled by `in`, the last lane to arrive runs `all`
// over the slots of the generation, every lane then reads its slot.
template <class In, class All>
Slot* collective(int kind, unsigned mask, In&& in, All&& all) {
  Fiber& f = cur();
  Warp& w = cur_warp();
  if (!(mask >> f.lane & 1u)) fail(std::string(kind_name(kind)) + " called by a lane outside its mask");
  if (w.arrived == 0) {
    w.kind = kind;
    w.mask = mask;
  } else if (w.kind != kind || w.mask != mask) {
    fail(std::string("divergent warp collectives: ") + kind_name(kind) + " while other lanes wait in " +
         kind_name(w.kind));
  }
  const unsigned g = w.gen;
  Slot* slots = w.slot[g & 1u];
  in(slots[f.lane]);
  ++g_progress;
  if (++w.arrived == __builtin_popcount(mask)) {
    all(slots);
    w.arrived = 0;
    ++w.gen;
  } else {
    while (w.gen == g) park(f, w_word, &w.gen, g, kind, 0);
  }
  return slots;
}

// fp16 bits -> float, by table (the emulated mma and fma convert every operand).
const std::vector<float> g_half_table = [] {
  std::vector<float> v(65536);
  for (unsigned i = 0; i < 65536; ++i) v[i] = __half2float(__ushort_as_half(static_cast<unsigned short>(i)));
  return v;
}();
float half_lo(std::uint32_t v) { return g_half_table[v & 0xffffu]; }
float half_hi(std::uint32_t v) { return g_half_table[v >> 16]; }

}  // namespace

unsigned char* dynamic_smem() { return cur_block().smem; }
void* block_static(const void* key, std::size_t bytes) {
  std::vector<unsigned char>& v = cur_block().statics[key];
  if (v.size() < bytes) v.assign(bytes, 0xa5);
  return v.data();
}

void yield(bool waiting) {
  Fiber& f = cur();
  if (!waiting) ++g_progress;
  to_scheduler(f);
}
void progress() { ++g_progress; }
void trap() { fail("__trap()"); }
std::uint64_t now_ns() { return g_time_ns; }
long long clock() { return static_cast<long long>(g_time_ns * 2); }

std::uint64_t shfl(unsigned mask, std::uint64_t v, int arg, int kind) {
  const int lane = cur().lane;
  const int width = arg >> 8, a = arg & 0xff;
  const Slot* slots = collective(kind, mask, [&](Slot& m) { m.v = v; }, [](Slot*) {});
  const int base = lane & ~(width - 1);
  int src = lane;
  switch (kind) {
    case k_shfl_idx: src = base + (a & (width - 1)); break;
    case k_shfl_up: src = lane - a >= base ? lane - a : lane; break;
    case k_shfl_down: src = lane + a < base + width ? lane + a : lane; break;
    default: src = (lane ^ a) < base + width ? lane ^ a : lane; break;
  }
  if (!(mask >> src & 1u)) fail("shuffle from a lane outside the mask");
  return slots[src].v;
}

void syncwarp(unsigned mask) { collective(k_sync, mask, [](Slot&) {}, [](Slot*) {}); }

int lane() { return cur().lane; }

// mma.sync m16n8k{8,16} row.col f32.f16.f16.f32: lane = 4 g + t holds A rows g, g + 8 (columns
// 2t, 2t + 1, and 2t + 8, 2t + 9 for k16), B column g (rows 2t, 2t + 1, and 2t + 8, 2t + 9),
// C/D rows g, g + 8, columns 2t, 2t + 1.
void mma_f16_f32(int k, float (&c)[4], const std::uint32_t* a, const std::uint32_t* b) {
  const Slot& s = collective(
      k == 16 ? k_mma16 : k_mma8, 0xffffffffu,
      [&](Slot& m) {
        for (int i = 0; i < (k == 16 ? 4 : 2); ++i) m.a[i] = a[i];
        for (int i = 0; i < (k == 16 ? 2 : 1); ++i) m.b[i] = b[i];
        for (int i = 0; i < 4; ++i) m.c[i] = c[i];
      },
      [k](Slot* sl) {
        float A[16][16], B[16][8], C[16][8];
        for (int l = 0; l < 32; ++l) {
          const int g = l >> 2, t = l & 3;
          const Slot& m = sl[l];
          A[g][2 * t] = half_lo(m.a[0]); A[g][2 * t + 1] = half_hi(m.a[0]);
          A[g + 8][2 * t] = half_lo(m.a[1]); A[g + 8][2 * t + 1] = half_hi(m.a[1]);
          B[2 * t][g] = half_lo(m.b[0]); B[2 * t + 1][g] = half_hi(m.b[0]);
          if (k == 16) {
            A[g][2 * t + 8] = half_lo(m.a[2]); A[g][2 * t + 9] = half_hi(m.a[2]);
            A[g + 8][2 * t + 8] = half_lo(m.a[3]); A[g + 8][2 * t + 9] = half_hi(m.a[3]);
            B[2 * t + 8][g] = half_lo(m.b[1]); B[2 * t + 9][g] = half_hi(m.b[1]);
          }
          C[g][2 * t] = m.c[0]; C[g][2 * t + 1] = m.c[1]; C[g + 8][2 * t] = m.c[2]; C[g + 8][2 * t + 1] = m.c[3];
        }
        for (int l = 0; l < 32; ++l) {
          const int g = l >> 2, t = l & 3;
          const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
          for (int i = 0; i < 4; ++i) {
            double d = 0.0;  // (the products of fp16 values are exact in double)
            for (int kk = 0; kk < k; ++kk) d += double(A[rows[i]][kk]) * double(B[kk][cols[i]]);
            sl[l].c[i] = float(d + double(C[rows[i]][cols[i]]));
          }
        }
      })[cur().lane];
  for (int i = 0; i < 4; ++i) c[i] = s.c[i];
}

// ldmatrix.x4: lanes 8i .. 8i + 7 give the row addresses of matrix i (8 halves each); lane 4g + t
// receives of matrix i row g, halves 2t and 2t + 1 (trans: column g, rows 2t and 2t + 1).
void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_addr, bool trans) {
  const Slot& s = collective(
      trans ? k_ldm_t : k_ldm, 0xffffffffu, [&](Slot& m) { m.addr = row_addr; },
      [trans](Slot* sl) {
        std::uint16_t M[4][8][8];
        for (int i = 0; i < 4; ++i)
          for (int row = 0; row < 8; ++row) std::memcpy(M[i][row], sl[8 * i + row].addr, 16);
        for (int l = 0; l < 32; ++l) {
          const int g = l >> 2, t = l & 3;
          for (int i = 0; i < 4; ++i) {
            const std::uint16_t lo = trans ? M[i][2 * t][g] : M[i][g][2 * t];
            const std::uint16_t hi = trans ? M[i][2 * t + 1][g] : M[i][g][2 * t + 1];
            sl[l].r[i] = std::uint32_t(lo) | std::uint32_t(hi) << 16;
          }
        }
      })[cur().lane];
  for (int i = 0; i < 4; ++i) r[i] = s.r[i];
}

void bar_sync(int id, int threads) {
  Fiber& f = cur();
  Block& b = cur_block();
  if (id < 0 || id >= 16) fail("bar.sync with a barrier id outside 0..15");
  Barrier& bar = b.bars[id];
  const int need = threads > 0 ? threads : b.live;
  if (bar.arrived == 0) bar.need = need;
  else if (bar.need != need) fail("bar.sync " + std::to_string(id) + " with different thread counts");
  const unsigned g = bar.gen;
  ++g_progress;
  if (++bar.arrived >= bar.need) {
    bar.arrived = 0;
    ++bar.gen;
    return;
  }
  while (bar.gen == g) park(f, w_word, &bar.gen, g, 100 + id, unsigned(need));
}

void fence() {}

unsigned ld_acquire(const unsigned* p) {
  Fiber& f = cur();
  unsigned v = *p;
  if (f.last_acq == p && v == unsigned(f.last_acq_value)) {
    // The same value again at the same address: a poll. Sleep until it changes (or the
    // scheduler finds nobody can move and wakes everyone once).
    park(f, w_word, p, v, 200, v);
    v = *p;
  }
  if (f.last_acq != p || v != unsigned(f.last_acq_value)) ++g_progress;
  f.last_acq = p;
  f.last_acq_value = v;
  return v;
}

void mbar_init(std::uint64_t* bar, unsigned count) {
  if (count == 0) fail("mbarrier.init with count 0");
  Mbar& m = g_launch->mbars[bar];
  m.count = m.pending = count;
  m.tx = 0;
  m.phase = 0;
  *bar = 0;
}
void mbar_arrive(std::uint64_t* bar, unsigned expect) {
  Mbar& m = mbar_of(bar);
  if (m.pending == 0) fail("mbarrier " + smem_name(cur_block(), bar) + ": more arrivals than its count");
  m.tx += expect;
  --m.pending;
  ++g_progress;
  complete_if_done(m);
}
bool mbar_test_parity(std::uint64_t* bar, unsigned parity) {
  Mbar& m = mbar_of(bar);
  if ((m.phase & 1u) != parity) {
    ++g_progress;
    return true;
  }
  park(cur(), w_mbar, bar, parity, 300, parity);
  return (mbar_of(bar).phase & 1u) != parity;
}
void bulk_copy(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
  Block& b = cur_block();
  auto* d = static_cast<unsigned char*>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if (bytes == 0 || bytes % 16 || reinterpret_cast<std::uintptr_t>(dst) % 16 || s % 16)
    fail("cp.async.bulk of " + std::to_string(bytes) + " bytes from " + smem_name(cur_block(), src) + " to " + smem_name(cur_block(), dst) +
         ": size and addresses must be multiples of 16");
  if (d < b.smem || d + bytes > b.smem + b.smem_bytes)
    fail("cp.async.bulk writes outside the block's shared memory (" + smem_name(cur_block(), dst) + ", " + std::to_string(bytes) +
         " bytes)");
  {
    std::lock_guard<std::mutex> lock(g_alloc_mutex);
    auto it = g_allocs.upper_bound(s);
    if (it == g_allocs.begin() || s + bytes > std::prev(it)->first + std::prev(it)->second.bytes) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%p", src);
      fail("cp.async.bulk reads " + std::to_string(bytes) + " bytes at " + buf + ", outside any device allocation");
    }
  }
  mbar_of(bar);
  std::uniform_int_distribution<int> delay(0, 3);
  g_launch->copies.push_back(Copy{d, static_cast<const unsigned char*>(src), bytes, bar, g_round + unsigned(delay(g_rng)), &b});
  ++g_stats.bulk_copies;
  ++g_progress;
}

std::uint32_t hfma2(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  auto one = [](float x, float y, float z) {
    return std::uint32_t(__half_as_ushort(__float2half_rn(static_cast<float>(double(x) * double(y) + double(z)))));
  };
  return one(half_lo(a), half_lo(b), half_lo(c)) | one(half_hi(a), half_hi(b), half_hi(c)) << 16;
}

void configure(int sm_count, std::uint64_t seed) {
  g_sm_count = std::max(1, sm_count);
  g_rng.seed(seed);
}
Stats stats() { return g_stats; }

namespace {

std::vector<char*> g_free_stacks;
std::mutex g_launch_mutex;

// Blocks of `threads` threads and `smem` bytes that one multiprocessor holds at once.
int blocks_per_sm(int threads, std::size_t smem) {
  const int by_threads = 2048 / std::max(1, threads);
  const int by_smem = smem ? int((k_optin_smem + 1024) / (smem + 1024)) : 32;
  return std::max(0, std::min({by_threads, by_smem, 32}));
}

void start_block(Launch& L, int index) {
  auto bp = std::make_unique<Block>();
  Block& b = *bp;
  const int threads = int(L.block.x * L.block.y * L.block.z);
  b.index = index;
  b.idx = make_uint3(unsigned(index) % L.grid.x, unsigned(index) / L.grid.x % L.grid.y,
                     unsigned(index) / (L.grid.x * L.grid.y));
  const std::size_t smem_alloc = (std::max<std::size_t>(L.smem, 16) + 127) & ~std::size_t(127);
  b.smem = static_cast<unsigned char*>(std::aligned_alloc(128, smem_alloc));
  std::memset(b.smem, 0xff, smem_alloc);  // NaN in fp16 and fp32: unwritten data shows
  b.smem_bytes = L.smem;
  b.warps.resize(std::size_t((threads + 31) / 32));
  b.live = threads;
  b.fibers.resize(std::size_t(threads));
  b.order.resize(std::size_t(threads));
  std::iota(b.order.begin(), b.order.end(), std::size_t(0));
  for (int t = 0; t < threads; ++t) {
    Fiber& f = b.fibers[std::size_t(t)];
    f.blk = &b;
    f.block = index;
    f.tid = make_uint3(unsigned(t) % L.block.x, unsigned(t) / L.block.x % L.block.y,
                       unsigned(t) / (L.block.x * L.block.y));
    f.warp = t / 32;
    f.lane = t % 32;
    if (g_free_stacks.empty()) {
      f.stack = new char[k_stack_bytes];
    } else {
      f.stack = g_free_stacks.back();
      g_free_stacks.pop_back();
    }
    make_context(f.ctx, f.stack, k_stack_bytes);
  }
  L.active.push_back(std::move(bp));
}

void end_block(Launch& L, Block& b) {
  for (Fiber& f : b.fibers) g_free_stacks.push_back(f.stack);
  for (auto it = L.mbars.begin(); it != L.mbars.end();) {
    const auto* p = reinterpret_cast<const unsigned char*>(it->first);
    it = p >= b.smem && p < b.smem + b.smem_bytes ? L.mbars.erase(it) : std::next(it);
  }
  std::free(b.smem);
}

// Runs a grid to completion: blocks start as the emulated multiprocessors hold them (a grid
// that fits runs all at once), each round every thread that can move runs until its next
// primitive.
cudaError_t run_grid(dim3 grid, dim3 block, std::size_t smem, const void* kernel, const KernelBody& body) {
  std::lock_guard<std::mutex> lock(g_launch_mutex);
  const int threads = int(block.x * block.y * block.z);
  const int blocks = int(grid.x * grid.y * grid.z);
  if (threads <= 0 || threads > 1024 || blocks <= 0) return cudaErrorInvalidConfiguration;
  auto lim = g_func_smem.find(kernel);
  const int limit = lim == g_func_smem.end() ? k_default_smem : std::max(k_default_smem, lim->second);
  if (smem > std::size_t(limit)) return cudaErrorInvalidValue;
  const int resident = std::max(1, blocks_per_sm(threads, smem)) * g_sm_count;
  Launch L;
  L.grid = grid;
  L.block = block;
  L.smem = smem;
  L.body = body;
  L.total_blocks = blocks;
  g_launch = &L;
  gridDim = grid;
  blockDim = block;
  ++g_stats.launches;
  int stall = 0;
  while (!L.failed && (L.next_block < L.total_blocks || !L.active.empty())) {
    while (int(L.active.size()) < resident && L.next_block < L.total_blocks) {
      start_block(L, L.next_block++);
      ++g_progress;
    }
    ++g_round;
    g_time_ns += 1000;  // a microsecond per round
    const std::uint64_t before = g_progress;
    for (std::size_t i = 0; i < L.copies.size();) {
      Copy& c = L.copies[i];
      if (c.due > g_round) { ++i; continue; }
      std::memcpy(c.dst, c.src, c.bytes);
      auto it = L.mbars.find(c.bar);
      if (it != L.mbars.end()) {
        it->second.tx -= c.bytes;
        complete_if_done(it->second);
      }
      L.copies.erase(L.copies.begin() + std::ptrdiff_t(i));
    }
    std::shuffle(L.active.begin(), L.active.end(), g_rng);
    const bool force = stall > 0;
    for (auto& bp : L.active) {
      Block& b = *bp;
      std::shuffle(b.order.begin(), b.order.end(), g_rng);
      blockIdx = b.idx;
      for (std::size_t t : b.order) {
        Fiber& f = b.fibers[t];
        if (f.done || f.trapped) continue;  // (after a trap the round goes on: the other lanes print too)
        if (!force && still_waiting(f)) continue;
        g_cur = &f;
        threadIdx = f.tid;
        to_fiber(f);
        g_cur = nullptr;
      }
    }
    if (L.failed) break;
    for (std::size_t i = 0; i < L.active.size();) {
      Block& b = *L.active[i];
      if (b.live > 0) { ++i; continue; }
      for (const Copy& c : L.copies)
        if (c.blk == &b) {
          L.failed = true;
          L.error = "block " + std::to_string(b.index) + " exited with bulk copies in flight";
        }
      end_block(L, b);
      L.active.erase(L.active.begin() + std::ptrdiff_t(i));
      ++g_progress;
    }
    if (g_progress != before || !L.copies.empty()) {
      stall = 0;
      continue;
    }
    // Nobody moved: wake everyone once; then let the kernels' 10-second traps fire; then give up.
    ++stall;
    if (stall == 2) g_time_ns += 20000000000ull;
    if (stall >= 4) {
      L.failed = true;
      L.error = "deadlock: no thread can make progress; waits (first waiting lane of each warp):";
      for (const auto& bp : L.active)
        for (std::size_t w = 0; w < bp->warps.size(); ++w)
          for (int l = 0; l < 32 && w * 32 + std::size_t(l) < bp->fibers.size(); ++l) {
            const Fiber& f = bp->fibers[w * 32 + std::size_t(l)];
            if (f.done || f.wait == w_none) continue;
            L.error += "\n  block " + std::to_string(bp->index) + " warp " + std::to_string(w) + " lane " +
                       std::to_string(l) + ": " + describe(f);
            break;
          }
    }
  }
  for (auto& bp : L.active) end_block(L, *bp);
  L.active.clear();
  g_launch = nullptr;
  if (L.failed) {
    std::fflush(stdout);
    std::fprintf(stderr, "exl emu: launch failed: %s\n", L.error.c_str());
    return cudaErrorLaunchFailure;
  }
  return cudaSuccess;
}

// Streams: work runs at once, except on a stream being captured, where it is recorded into the
// graph (replayed in order by cudaGraphLaunch).
using Op = std::function<cudaError_t()>;
struct EmuStream {
  bool capturing = false;
  std::vector<Op> graph;
};
struct EmuGraph {
  std::vector<Op> ops;
};
cudaError_t submit(cudaStream_t s, Op op) {
  auto* st = reinterpret_cast<EmuStream*>(s);
  if (st && st->capturing) {
    st->graph.push_back(std::move(op));
    return cudaSuccess;
  }
  return op();
}

}  // namespace

cudaError_t launch(dim3 grid, dim3 block, std::size_t smem, cudaStream_t stream, const void* kernel, KernelBody body) {
  if (g_cur) {
    std::fprintf(stderr, "exl emu: a launch from inside a kernel\n");
    return cudaErrorNotSupported;
  }
  return submit(stream, [=] { return run_grid(grid, block, smem, kernel, body); });
}

namespace {
cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess) g_last_error = e;
  return e;
}
void* emu_alloc(std::size_t bytes, bool host) {
  void* p = std::aligned_alloc(256, (std::max<std::size_t>(bytes, 1) + 255) & ~std::size_t(255));
  if (!p) return nullptr;
  std::memset(p, 0xa5, bytes);  // device memory starts as garbage
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  g_allocs[reinterpret_cast<std::uintptr_t>(p)] = Alloc{bytes, host ? -1 : g_device};
  if (!host) g_device_bytes[g_device] += bytes;
  return p;
}
cudaError_t emu_free(void* p) {
  if (!p) return cudaSuccess;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  auto it = g_allocs.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == g_allocs.end()) return cudaErrorInvalidValue;
  if (it->second.device >= 0) g_device_bytes[it->second.device] -= it->second.bytes;
  g_allocs.erase(it);
  std::free(p);
  return cudaSuccess;
}
char g_event_token;  // every event (the emulator's work is done when it is enqueued)
}  // namespace

}  // namespace exl::emu

using namespace exl::emu;

uint3 threadIdx, blockIdx;
dim3 gridDim, blockDim;

// ---- the CUDA runtime subset (synchronous: every stream is the host thread) ----
extern "C" {
cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = emu_alloc(bytes, false);
  return *p ? cudaSuccess : record(cudaErrorMemoryAllocation);
}
cudaError_t cudaFree(void* p) { return record(emu_free(p)); }
cudaError_t cudaMallocHost(void** p, size_t bytes) {
  *p = emu_alloc(bytes, true);
  return *p ? cudaSuccess : record(cudaErrorMemoryAllocation);
}
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int) { return cudaMallocHost(p, bytes); }
cudaError_t cudaFreeHost(void* p) { return record(emu_free(p)); }
cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, enum cudaMemcpyKind) {
  if (n) std::memmove(dst, src, n);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, enum cudaMemcpyKind k, cudaStream_t s) {
  return submit(s, [=] { return cudaMemcpy(dst, src, n, k); });
}
cudaError_t cudaMemset(void* p, int v, size_t n) {
  if (n) std::memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t s) {
  return submit(s, [=] { return cudaMemset(p, v, n); });
}
cudaError_t cudaStreamCreate(cudaStream_t* s) {
  *s = reinterpret_cast<cudaStream_t>(new EmuStream);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) { return cudaStreamCreate(s); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete reinterpret_cast<EmuStream*>(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  const auto* st = reinterpret_cast<EmuStream*>(s);
  return st && st->capturing ? record(cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode) {
  auto* st = reinterpret_cast<EmuStream*>(s);
  if (!st || st->capturing) return record(cudaErrorIllegalState);
  st->capturing = true;
  st->graph.clear();
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
  auto* st = reinterpret_cast<EmuStream*>(s);
  if (!st || !st->capturing) return record(cudaErrorIllegalState);
  auto* graph = new EmuGraph;
  graph->ops = std::move(st->graph);
  st->graph.clear();
  st->capturing = false;
  *g = reinterpret_cast<cudaGraph_t>(graph);
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus* status) {
  const auto* st = reinterpret_cast<EmuStream*>(s);
  *status = st && st->capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long) {
  auto* exec = new EmuGraph(*reinterpret_cast<EmuGraph*>(g));
  *e = reinterpret_cast<cudaGraphExec_t>(exec);
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  const auto* exec = reinterpret_cast<const EmuGraph*>(e);
  return record(submit(s, [exec] {
    for (const Op& op : exec->ops)
      if (const cudaError_t r = op(); r != cudaSuccess) return r;
    return cudaSuccess;
  }));
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  delete reinterpret_cast<EmuGraph*>(g);
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
  delete reinterpret_cast<EmuGraph*>(e);
  return cudaSuccess;
}
cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
cudaError_t cudaProfilerStop(void) { return cudaSuccess; }
cudaError_t cudaDeviceCanAccessPeer(int* can, int d, int peer) {
  if (d < 0 || d >= device_count() || peer < 0 || peer >= device_count()) return record(cudaErrorInvalidDevice);
  *can = d != peer ? 1 : 0;
  return cudaSuccess;
}
cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int) {
  if (peer < 0 || peer >= device_count() || peer == g_device) return record(cudaErrorInvalidDevice);
  std::lock_guard<std::mutex> lock(g_peer_mutex);
  if (g_peer[g_device][peer]) return record(cudaErrorPeerAccessAlreadyEnabled);
  g_peer[g_device][peer] = true;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* p, int) {
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof p->name, "EXL CUDA emulator (CPU)");
  p->totalGlobalMem = size_t(64) << 30;
  p->multiProcessorCount = g_sm_count;
  p->major = 9;
  p->minor = 0;
  p->sharedMemPerBlock = k_default_smem;
  p->sharedMemPerBlockOptin = k_optin_smem;
  p->sharedMemPerMultiprocessor = k_optin_smem + 1024;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->warpSize = 32;
  p->l2CacheSize = 60 << 20;
  p->memoryBusWidth = 5120;
  p->regsPerBlock = 65536;
  p->regsPerMultiprocessor = 65536;
  p->cooperativeLaunch = 1;
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = reinterpret_cast<cudaEvent_t>(&g_event_token);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.0f;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  *d = g_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) {
  if (d < 0 || d >= device_count()) return record(cudaErrorInvalidDevice);
  g_device = d;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceCount(int* n) {
  *n = device_count();
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int* v, enum cudaDeviceAttr a, int) {
  switch (a) {
    case cudaDevAttrMultiProcessorCount: *v = g_sm_count; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = k_optin_smem; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = k_optin_smem + 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = k_default_smem; break;
    case cudaDevAttrClockRate: *v = 1980000; break;
    case cudaDevAttrL2CacheSize: *v = 60 << 20; break;
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrCooperativeLaunch: *v = 1; break;
    case cudaDevAttrMemoryClockRate: *v = 2619000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *v = 5120; break;
    default: *v = 0; break;
  }
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void* f, enum cudaFuncAttribute a, int v) {
  if (a == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (v > k_optin_smem) return record(cudaErrorInvalidValue);
    g_func_smem[f] = v;
  }
  return cudaSuccess;
}
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* a, const void* f) {
  *a = cudaFuncAttributes{};
  a->maxThreadsPerBlock = 1024;
  a->numRegs = 64;  // (a typical count: the GEMV's blocks per multiprocessor follow from it)
  auto it = g_func_smem.find(f);
  a->maxDynamicSharedSizeBytes = it == g_func_smem.end() ? k_default_smem : it->second;
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void*, int threads, size_t smem) {
  *n = blocks_per_sm(threads, smem);
  return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, const void* f, int threads, size_t smem,
                                                                   unsigned int) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, threads, smem);
}
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  *total = size_t(64) << 30;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  *free_bytes = *total - std::min(*total, g_device_bytes[g_device]);
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) {
  const cudaError_t e = g_last_error;
  g_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return g_last_error; }
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorLaunchFailure: return "unspecified launch failure (emulator: see its message above)";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    default: return "emulated CUDA error";
  }
}
const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorEmulated"; }

// cuBLAS: the calls the module makes, as plain loops on the handle's stream (column-major;
// fp16 and fp32 data, double accumulation).
struct EmuBlas {
  cudaStream_t stream = nullptr;
};
namespace {
double blas_load(const void* p, cudaDataType t, std::size_t i) {
  switch (t) {
    case CUDA_R_16F: return double(__half2float(static_cast<const __half*>(p)[i]));
    case CUDA_R_32F: return double(static_cast<const float*>(p)[i]);
    case CUDA_R_64F: return static_cast<const double*>(p)[i];
    default: return NAN;
  }
}
void blas_store(void* p, cudaDataType t, std::size_t i, double v) {
  switch (t) {
    case CUDA_R_16F: static_cast<__half*>(p)[i] = __float2half_rn(float(v)); break;
    case CUDA_R_32F: static_cast<float*>(p)[i] = float(v); break;
    case CUDA_R_64F: static_cast<double*>(p)[i] = v; break;
    default: break;
  }
}
bool blas_type_ok(cudaDataType t) { return t == CUDA_R_16F || t == CUDA_R_32F || t == CUDA_R_64F; }
// C = alpha op(A) op(B) + beta C (beta 0: C not read). op(A) and op(B) are first converted to
// float rows along k, so the inner product runs over contiguous memory.
void gemm(bool ta, bool tb, int m, int n, int k, double alpha, const void* A, cudaDataType at, long long lda,
          const void* B, cudaDataType bt, long long ldb, double beta, void* C, cudaDataType ct, long long ldc) {
  std::vector<float> a(std::size_t(m) * k), b(std::size_t(n) * k);
  for (int i = 0; i < m; ++i)
    for (int l = 0; l < k; ++l)
      a[std::size_t(i) * k + l] = float(blas_load(A, at, std::size_t(ta ? l + i * lda : i + l * lda)));
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < k; ++l)
      b[std::size_t(j) * k + l] = float(blas_load(B, bt, std::size_t(tb ? j + l * ldb : l + j * ldb)));
  for (int j = 0; j < n; ++j) {
    const float* bj = b.data() + std::size_t(j) * k;
    for (int i = 0; i < m; ++i) {
      const float* ai = a.data() + std::size_t(i) * k;
      double acc = 0.0;
      for (int l = 0; l < k; ++l) acc += double(ai[l]) * double(bj[l]);
      const std::size_t c = std::size_t(i + j * ldc);
      blas_store(C, ct, c, alpha * acc + (beta != 0.0 ? beta * blas_load(C, ct, c) : 0.0));
    }
  }
}
cublasStatus_t blas_submit(cublasHandle_t h, std::function<void()> fn) {
  const cudaError_t e = submit(reinterpret_cast<EmuBlas*>(h)->stream, [fn] {
    fn();
    return cudaSuccess;
  });
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}
}  // namespace
cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
  *h = reinterpret_cast<cublasHandle_t>(new EmuBlas);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
  delete reinterpret_cast<EmuBlas*>(h);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
  reinterpret_cast<EmuBlas*>(h)->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t, void*, size_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* A, cudaDataType at, int lda, const void* B, cudaDataType bt,
                            int ldb, const void* beta, void* C, cudaDataType ct, int ldc, cublasComputeType_t ctype,
                            cublasGemmAlgo_t) {
  if (!blas_type_ok(at) || !blas_type_ok(bt) || !blas_type_ok(ct) || ctype != CUBLAS_COMPUTE_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  const double al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  return blas_submit(h, [=] {
    gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc);
  });
}
cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  const double al = *alpha, be = *beta;
  return blas_submit(h, [=] {
    gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, al, A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, be, C, CUDA_R_32F,
         ldc);
  });
}
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float* alpha, const float* A, int lda, long long sa,
                                         const float* B, int ldb, long long sb, const float* beta, float* C, int ldc,
                                         long long sc, int batches) {
  const double al = *alpha, be = *beta;
  return blas_submit(h, [=] {
    for (int i = 0; i < batches; ++i)
      gemm(ta != CUBLAS_OP_N, tb != CUBLAS_OP_N, m, n, k, al, A + i * sa, CUDA_R_32F, lda, B + i * sb, CUDA_R_32F, ldb,
           be, C + i * sc, CUDA_R_32F, ldc);
  });
}
// C = alpha op(A) op(A)^T + beta C on the `uplo` triangle (op(A): n x k).
cublasStatus_t cublasDsyrk_v2(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                              const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc) {
  const double al = *alpha, be = *beta;
  return blas_submit(h, [=] {
    auto a = [&](int i, int l) { return trans == CUBLAS_OP_N ? A[i + std::size_t(l) * lda] : A[l + std::size_t(i) * lda]; };
    for (int j = 0; j < n; ++j)
      for (int i = uplo == CUBLAS_FILL_MODE_LOWER ? j : 0; i < (uplo == CUBLAS_FILL_MODE_LOWER ? n : j + 1); ++i) {
        double acc = 0.0;
        for (int l = 0; l < k; ++l) acc += a(i, l) * a(j, l);
        double& c = C[i + std::size_t(j) * ldc];
        c = al * acc + (be != 0.0 ? be * c : 0.0);
      }
  });
}
// Solves op(A) X = alpha B (left) or X op(A) = alpha B (right), X over B (m x n); A triangular.
cublasStatus_t cublasDtrsm_v2(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
                              cublasDiagType_t diag, int m, int n, const double* alpha, const double* A, int lda,
                              double* B, int ldb) {
  const double al = *alpha;
  return blas_submit(h, [=] {
    const int na = side == CUBLAS_SIDE_LEFT ? m : n;
    // M = op(A) as a dense matrix (the other triangle zero).
    std::vector<double> M(std::size_t(na) * na, 0.0);
    for (int j = 0; j < na; ++j)
      for (int i = 0; i < na; ++i) {
        const bool in = uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j;
        if (!in) continue;
        const double v = i == j && diag == CUBLAS_DIAG_UNIT ? 1.0 : A[i + std::size_t(j) * lda];
        if (trans == CUBLAS_OP_N) M[i + std::size_t(j) * na] = v;
        else M[j + std::size_t(i) * na] = v;
      }
    const bool lower = (uplo == CUBLAS_FILL_MODE_LOWER) == (trans == CUBLAS_OP_N);
    std::vector<double> x(static_cast<std::size_t>(na));
    // Solves T x = b with T = M (left) or M^T (right; then lower-ness flips).
    auto solve = [&](bool transpose) {
      const bool lo = transpose ? !lower : lower;
      auto t = [&](int i, int j) { return transpose ? M[j + std::size_t(i) * na] : M[i + std::size_t(j) * na]; };
      for (int s = 0; s < na; ++s) {
        const int i = lo ? s : na - 1 - s;
        double v = x[std::size_t(i)];
        for (int j = 0; j < na; ++j)
          if (lo ? j < i : j > i) v -= t(i, j) * x[std::size_t(j)];
        x[std::size_t(i)] = v / t(i, i);
      }
    };
    if (side == CUBLAS_SIDE_LEFT) {
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < m; ++i) x[std::size_t(i)] = al * B[i + std::size_t(j) * ldb];
        solve(false);
        for (int i = 0; i < m; ++i) B[i + std::size_t(j) * ldb] = x[std::size_t(i)];
      }
    } else {  // X M = alpha B  <=>  M^T X^T = alpha B^T, row by row
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) x[std::size_t(j)] = al * B[i + std::size_t(j) * ldb];
        solve(true);
        for (int j = 0; j < n; ++j) B[i + std::size_t(j) * ldb] = x[std::size_t(j)];
      }
    }
  });
}
const char* cublasGetStatusString(cublasStatus_t) { return "cuBLAS is not emulated"; }
const char* cublasGetStatusName(cublasStatus_t) { return "CUBLAS_STATUS_NOT_SUPPORTED"; }
}
