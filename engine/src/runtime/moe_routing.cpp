// The per-thread observer of mixture-of-experts routing (exl/moe_routing.h).
#include "exl/moe_routing.h"

#include <utility>

namespace exl {
namespace {
thread_local MoeRoutingObserver current;
}  // namespace

ScopedMoeRoutingObserver::ScopedMoeRoutingObserver(MoeRoutingObserver observer) : previous_(std::move(current)) {
  current = std::move(observer);
}

ScopedMoeRoutingObserver::~ScopedMoeRoutingObserver() { current = std::move(previous_); }

const MoeRoutingObserver* moe_routing_observer() { return current ? &current : nullptr; }

}  // namespace exl
