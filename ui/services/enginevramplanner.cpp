#include "enginevramplanner.h"

#include <QFile>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <optional>
#include <unistd.h>

#include "exl/cuda.h"
#include "exl/error.h"

exl::plan::CacheSpec planCacheSpec(CacheKind kind)
{
    switch (kind) {
    case CacheKind::Fp16: return exl::plan::parse_cache("fp16");
    case CacheKind::Fp8: return exl::plan::parse_cache("fp8");
    case CacheKind::Q8: return exl::plan::parse_cache("q8");
    case CacheKind::Q6: return exl::plan::parse_cache("q6");
    case CacheKind::Q4: return exl::plan::parse_cache("q4");
    }
    return exl::plan::parse_cache("fp16");
}

namespace {

std::uint64_t systemMemoryBytes()
{
    QFile f(QStringLiteral("/proc/meminfo"));
    if (f.open(QIODevice::ReadOnly)) {
        const QString text = QString::fromLatin1(f.readAll());
        const auto m = QRegularExpression(QStringLiteral("MemTotal:\\s+(\\d+) kB")).match(text);
        if (m.hasMatch())
            return m.captured(1).toULongLong() * 1024;
    }
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) : 0;
}

}  // namespace

EngineVramPlanner::EngineVramPlanner(exl::plan::GpuSpec target, int smCount, bool systemMemory)
    : m_gpu(std::move(target)), m_gpus{m_gpu}, m_smCount(std::max(1, smCount)), m_systemMemory(systemMemory)
{
}

std::unique_ptr<EngineVramPlanner> EngineVramPlanner::forDevice(const QString &device)
{
    if (device != QLatin1String("cpu")) {
        int index = 0;
        if (device.startsWith(QLatin1String("cuda:")))
            index = device.mid(5).toInt();
        try {
            if (exl::cuda_available()) {
                const auto devices = exl::cuda_devices();
                std::vector<exl::plan::GpuSpec> gpus;
                for (const exl::CudaDeviceInfo &d : devices)
                    gpus.push_back(exl::plan::gpu_spec_for_device(d.name, d.total_bytes, d.peak_bandwidth_gbs));
                if (index >= 0 && index < int(devices.size())) {
                    auto planner = std::make_unique<EngineVramPlanner>(gpus[std::size_t(index)],
                                                                       devices[std::size_t(index)].sm_count, false);
                    planner->setGpus(std::move(gpus));
                    return planner;
                }
            }
        } catch (const std::exception &) {
            // No usable CUDA: plan for system memory below.
        }
    }
    exl::plan::GpuSpec g;
    g.name = "CPU (system memory)";
    g.memory_mib = systemMemoryBytes() / exl::plan::kMiB;
    g.bandwidth_gbs = exl::plan::host_copy_bandwidth_gbs();  // measured: the telemetry's bound uses it too
    g.fp16_tflops = 1.0;
    g.context_mib = 1;  // no CUDA context in system memory (0 would mean the GPU default)
    return std::make_unique<EngineVramPlanner>(g, 1, true);
}

std::shared_ptr<const exl::plan::ModelShape> EngineVramPlanner::folderShape(const QString &path) const
{
    {
        std::lock_guard lock(m_mutex);
        if (auto shape = m_shapes.value(path))
            return shape;
    }
    auto shape = std::make_shared<const exl::plan::ModelShape>(
        exl::plan::shape_from_folder(path.toStdString(), exl::plan::Layout::engine));
    std::lock_guard lock(m_mutex);
    m_shapes.insert(path, shape);
    return shape;
}

VramPlan EngineVramPlanner::plan(const VramPlanRequest &request) const
{
    VramPlan out;
    if (request.model.remote || request.model.path.isEmpty() || m_gpu.memory_mib == 0)
        return out;
    try {
        const std::shared_ptr<const exl::plan::ModelShape> folder = folderShape(request.model.path);
        // The draft model is planned from its folder as it is (no what-if bit width).
        std::shared_ptr<const exl::plan::ModelShape> draft;
        if (!request.draft.path.isEmpty() && !request.draft.remote)
            draft = folderShape(request.draft.path);
        // A what-if bit width re-plans the folder's config at that bpw (same head).
        std::optional<exl::plan::ModelShape> whatIf;
        // (The slider starts at the model's own bpw as the scanner reports it: that is no what-if.)
        const bool own = request.bpw <= 0 || std::fabs(request.bpw - request.model.bpw) < 0.005 ||
                         std::fabs(request.bpw - folder->decoder_bpw) < 0.005;
        if (!own)
            whatIf = exl::plan::shape_from_config(folder->config, request.bpw,
                                                  folder->head_bits > 0 ? folder->head_bits : 6,
                                                  exl::plan::Layout::engine);
        const exl::plan::ModelShape &shape = whatIf ? *whatIf : *folder;

        exl::plan::PlanOptions o;
        o.layout = exl::plan::Layout::engine;
        o.context = std::max(1, request.contextLength);
        o.cache = planCacheSpec(request.cacheKind);
        o.gpus = {m_gpu};
        const bool split = !request.gpuSplit.isEmpty() && !m_systemMemory;
        if (split) {
            o.gpus = m_gpus;  // a split places layers on the GPUs in CUDA order
            exl::plan::apply_split(request.gpuSplit.toStdString(), o);
        }
        o.sm_count = m_smCount;
        o.draft_tokens = std::max(1, request.draftTokens);
        const exl::plan::Plan p = exl::plan::make_plan(shape, o, draft.get());
        if (p.devices.empty())
            return out;
        out.available = true;
        QStringList names;
        // A split: the figures of every GPU it uses, added up.
        for (std::size_t i = 0; i < p.devices.size(); ++i) {
            const exl::plan::DevicePlan &d = p.devices[i];
            if (i > 0 && d.first_layer < 0 && !d.has_head)
                continue;
            out.weightsBytes += qint64(d.weights_bytes);
            out.cacheBytes += qint64(d.cache_bytes);
            out.scratchBytes += qint64(d.scratch_bytes + d.overhead_bytes);  // scratch, CUDA context, margins
            out.draftBytes += qint64(d.parts.draft);  // the planner's whole draft model, on the first device
            out.deviceBytes += qint64(d.gpu.total_bytes());
            names.append(QString::fromStdString(d.gpu.name));
            if (split)
                out.devices.append(VramPlanDevice{int(i), QString::fromStdString(d.gpu.name), d.first_layer, d.last_layer,
                                                  d.has_head, p.draft_device == int(i), qint64(d.used_bytes),
                                                  qint64(d.gpu.total_bytes())});
        }
        if (out.devices.size() < 2)
            out.devices.clear();  // one GPU used: the totals say it all
        out.fits = p.fits;
        std::int64_t largest = exl::plan::max_context(shape, o, draft.get());
        if (request.model.nativeContext > 0)
            largest = std::min<std::int64_t>(largest, request.model.nativeContext);
        out.largestContextThatFits = int(std::clamp<std::int64_t>(largest, 0, INT32_MAX));
        out.boundTokensPerSecond = p.decode_bound_tokens_per_s;
        out.boundEmptyTokensPerSecond = p.decode_bound_empty;
        out.speculativeTokensPerSecond = p.speculative_tokens_per_s;
        out.speculativeAcceptance = o.draft_acceptance;
        if (!m_systemMemory)
            out.target = names.join(QStringLiteral(" + "));
    } catch (const std::exception &) {
        // A folder the planner cannot read (no headers, unknown architecture): no estimate.
        return {};
    }
    return out;
}
