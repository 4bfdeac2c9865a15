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
    // The draft model loaded beside the model for speculative decoding (path empty: none, drafting
    // by n-gram lookup takes no memory). Its weights and its own cache, as long as the model's,
    // count on the device the model is on.
    ModelInfo draft{};
    QString gpuSplit{};  // as LoadOptions::gpuSplit
};

// One GPU of a split plan: the layers placed there and its memory.
struct VramPlanDevice {
    int index = 0;        // CUDA ordinal
    QString name;
    int firstLayer = -1;  // -1: no layers
    int lastLayer = -1;
    bool head = false;
    bool draft = false;   // the draft model goes here
    qint64 usedBytes = 0;
    qint64 totalBytes = 0;
    bool operator==(const VramPlanDevice &) const = default;
};

struct VramPlan {
    bool available = false;  // false: no planner, nothing below is meaningful
    qint64 weightsBytes = 0;
    qint64 cacheBytes = 0;
    qint64 scratchBytes = 0;
    qint64 draftBytes = 0;   // the draft model: weights, cache and its share of scratch (0: none)
    qint64 deviceBytes = 0;  // capacity of the device (system memory on the CPU backend)
    bool fits = false;
    int largestContextThatFits = 0;
    double boundTokensPerSecond = 0.0;  // bandwidth-bound decode speed at the full context
    double boundEmptyTokensPerSecond = 0.0;  // the same at an empty context (the telemetry's bound right after loading)
    double speculativeTokensPerSecond = 0.0;  // the same with the draft model, accepting that share: 0: none
    double speculativeAcceptance = 0.0;       // of drafted tokens (the planner's assumption)
    QString target;  // the device planned for (a GPU's name; empty: system memory or unknown)
    QList<VramPlanDevice> devices;  // a split over several GPUs: each GPU it uses (empty: one device)
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
