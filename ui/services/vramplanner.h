// The VRAM fit calculator's source of truth. The app uses EngineVramPlanner (the engine's
// planner, engine/src/plan); the UI never does this arithmetic itself. The simulated engine
// uses FakeVramPlanner; UnavailableVramPlanner shows the calculator disabled.
#pragma once
#include "inferencetypes.h"

struct VramPlanRequest {
    ModelInfo model;
    double bpw = 0.0;  // what-if bit width; 0 keeps the model's own
    int contextLength = 4096;
    CacheKind cacheKind = CacheKind::Fp16;
    int draftTokens = 0;
};

struct VramPlan {
    bool available = false;  // false: no planner, nothing below is meaningful
    qint64 weightsBytes = 0;
    qint64 cacheBytes = 0;
    qint64 scratchBytes = 0;
    qint64 deviceBytes = 0;  // capacity of the device (system memory on the CPU backend)
    bool fits = false;
    int largestContextThatFits = 0;
    double boundTokensPerSecond = 0.0;  // bandwidth-bound decode speed
    QString target;  // the device planned for (a GPU's name; empty: system memory or unknown)
};

class VramPlanner
{
public:
    virtual ~VramPlanner() = default;
    virtual VramPlan plan(const VramPlanRequest &request) const = 0;
};

// No planner yet: the calculator is shown disabled.
class UnavailableVramPlanner : public VramPlanner
{
public:
    VramPlan plan(const VramPlanRequest &) const override { return {}; }
};

// Simulated figures for the fake engine (demo, tests, screenshots); not a real estimate.
class FakeVramPlanner : public VramPlanner
{
public:
    explicit FakeVramPlanner(qint64 deviceBytes, double bandwidthBytesPerSecond)
        : m_deviceBytes(deviceBytes), m_bandwidth(bandwidthBytesPerSecond) {}
    VramPlan plan(const VramPlanRequest &request) const override;

private:
    qint64 m_deviceBytes;
    double m_bandwidth;
};
