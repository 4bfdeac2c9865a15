#include "vramplanner.h"

namespace {
double cacheBytesPerElement(CacheKind kind)
{
    switch (kind) {
    case CacheKind::Fp16: return 2.0;
    case CacheKind::Fp8: return 1.0;
    case CacheKind::Q8: return 1.0 + 1.0 / 16;
    case CacheKind::Q6: return 0.75 + 1.0 / 16;
    case CacheKind::Q4: return 0.5 + 1.0 / 16;
    }
    return 2.0;
}
}  // namespace

VramPlan FakeVramPlanner::plan(const VramPlanRequest &request) const
{
    VramPlan out;
    if (request.model.parameters <= 0)
        return out;
    out.available = true;
    const double bpw = request.bpw > 0 ? request.bpw : request.model.bpw;
    out.weightsBytes = qint64(request.model.parameters * bpw / 8.0);
    // Simulated cache: K and V, 4096 values per token for every billion parameters.
    const double perToken = 2.0 * 4096 * (request.model.parameters / 1e9) * cacheBytesPerElement(request.cacheKind);
    out.cacheBytes = qint64(perToken * request.contextLength);
    out.scratchBytes = 512LL * 1024 * 1024 + request.draftTokens * 64LL * 1024 * 1024;
    out.deviceBytes = m_deviceBytes;
    const qint64 used = out.weightsBytes + out.cacheBytes + out.scratchBytes;
    out.fits = used <= m_deviceBytes;
    const qint64 room = m_deviceBytes - out.weightsBytes - out.scratchBytes;
    out.largestContextThatFits = room > 0 ? int(std::min<double>(room / perToken, request.model.nativeContext)) : 0;
    out.boundTokensPerSecond = m_bandwidth / double(out.weightsBytes + out.cacheBytes / 2);
    return out;
}
