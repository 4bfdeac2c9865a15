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
    // A draft model: its simulated weights and a cache as long as the model's.
    double draftPerToken = 0.0;
    if (!request.draft.path.isEmpty() && request.draft.parameters > 0) {
        draftPerToken = 2.0 * 4096 * (request.draft.parameters / 1e9) * cacheBytesPerElement(request.cacheKind);
        out.draftBytes = qint64(request.draft.parameters * request.draft.bpw / 8.0 + draftPerToken * request.contextLength);
    }
    out.deviceBytes = m_deviceBytes;
    const qint64 used = out.weightsBytes + out.cacheBytes + out.scratchBytes + out.draftBytes;
    out.fits = used <= m_deviceBytes;
    const qint64 fixed = out.weightsBytes + out.scratchBytes + (out.draftBytes - qint64(draftPerToken * request.contextLength));
    const qint64 room = m_deviceBytes - fixed;
    out.largestContextThatFits = room > 0 ? int(std::min<double>(room / (perToken + draftPerToken), request.model.nativeContext)) : 0;
    out.boundTokensPerSecond = m_bandwidth / double(out.weightsBytes + out.cacheBytes / 2);
    out.boundEmptyTokensPerSecond = m_bandwidth / double(out.weightsBytes);
    return out;
}
