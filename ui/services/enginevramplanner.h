// The VRAM fit calculator on the engine's planner (engine/src/plan, the same arithmetic as
// `exl fit`): exact weight bytes from the model folder's safetensors headers, or a what-if bit
// width on the folder's config; the KV cache, scratch and overhead of our CUDA backend; the
// largest context that fits and the bandwidth-bound decode speed; a draft model's weights and
// cache beside the model when one is chosen. The target is the device the
// app runs on: the CUDA device (its name, memory and bandwidth from the driver, refined by the
// planner's GPU table), or, on the CPU backend, system memory at a nominal bandwidth.
#pragma once
#include <QHash>
#include <QString>
#include <memory>
#include <mutex>

#include "exl/plan.h"
#include "vramplanner.h"

// The planner's cache description of the app's cache choice.
exl::plan::CacheSpec planCacheSpec(CacheKind kind);

class EngineVramPlanner : public VramPlanner
{
public:
    EngineVramPlanner(exl::plan::GpuSpec target, int smCount, bool systemMemory);
    // For the app's device option ("auto", "cpu", "cuda", "cuda:N"): the CUDA device when the
    // module and a device are usable, else system memory.
    static std::unique_ptr<EngineVramPlanner> forDevice(const QString &device);

    VramPlan plan(const VramPlanRequest &request) const override;
    const exl::plan::GpuSpec &target() const { return m_gpu; }
    // Every GPU of the machine in CUDA order, for a request's GPU split (default: the target only).
    void setGpus(std::vector<exl::plan::GpuSpec> gpus) { m_gpus = std::move(gpus); }
    bool systemMemory() const { return m_systemMemory; }

private:
    // The shape read from a model folder (headers only), cached by path. Throws when unreadable.
    std::shared_ptr<const exl::plan::ModelShape> folderShape(const QString &path) const;

    exl::plan::GpuSpec m_gpu;
    std::vector<exl::plan::GpuSpec> m_gpus;
    int m_smCount;
    bool m_systemMemory;
    // Shapes read from model folders (headers only), by path.
    mutable std::mutex m_mutex;
    mutable QHash<QString, std::shared_ptr<const exl::plan::ModelShape>> m_shapes;
};
