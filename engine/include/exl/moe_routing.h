// Watching the experts a mixture-of-experts router picks (tests, tools): a callback installed for
// the calling thread, which the CPU backend calls after routing each sparse layer of a forward
// step, with the chosen experts [tokens, top_k] of that step's tokens in descending weight.
#pragma once
#include <cstdint>
#include <functional>

namespace exl {

using MoeRoutingObserver = std::function<void(int layer, int tokens, int top_k, const std::int32_t* experts)>;

// Installs an observer for the calling thread while it lives (the previous one comes back after).
class ScopedMoeRoutingObserver {
 public:
  explicit ScopedMoeRoutingObserver(MoeRoutingObserver observer);
  ~ScopedMoeRoutingObserver();
  ScopedMoeRoutingObserver(const ScopedMoeRoutingObserver&) = delete;
  ScopedMoeRoutingObserver& operator=(const ScopedMoeRoutingObserver&) = delete;

 private:
  MoeRoutingObserver previous_;
};

// The calling thread's observer, or nullptr.
const MoeRoutingObserver* moe_routing_observer();

}  // namespace exl
