#include "telemetrymodel.h"

#include <cmath>

#include <algorithm>

#include <QtCharts/QXYSeries>
#include <exl/gpu_power.h>

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void dropOlderThan(QList<QPointF> &points, double t)
{
    while (!points.isEmpty() && points.constFirst().x() < t)
        points.removeFirst();
}
}  // namespace

TelemetryModel::TelemetryModel(QObject *parent)
    : QObject(parent)
{
}

double TelemetryModel::efficiency() const
{
    if (m_last.boundTokensPerSecond <= 0 || m_last.decodeTokensPerSecond <= 0)
        return 0.0;
    return m_last.decodeTokensPerSecond / m_last.boundTokensPerSecond;
}

double TelemetryModel::vramUsedGiB() const
{
    return m_last.vramUsedBytes / kGiB;
}

double TelemetryModel::vramTotalGiB() const
{
    return m_last.vramTotalBytes / kGiB;
}

double TelemetryModel::vramWeightsGiB() const
{
    return std::min(m_last.vramWeightsBytes, m_last.vramUsedBytes) / kGiB;
}

double TelemetryModel::vramCacheGiB() const
{
    return std::clamp<qint64>(m_last.vramCacheBytes, 0, m_last.vramUsedBytes - std::min(m_last.vramWeightsBytes, m_last.vramUsedBytes)) / kGiB;
}

double TelemetryModel::vramOtherGiB() const
{
    return std::max(0.0, vramUsedGiB() - vramWeightsGiB() - vramCacheGiB());
}

double TelemetryModel::vramFreeGiB() const
{
    return std::max<qint64>(0, m_last.vramTotalBytes - m_last.vramUsedBytes) / kGiB;
}

QVariantList TelemetryModel::gpus() const
{
    QVariantList out;
    const GpuStatus &g = m_last.gpu;
    if (!m_last.cpuBackend && !m_last.remote && m_last.vramTotalBytes > 0) {
        out.append(QVariantMap{
            {QStringLiteral("index"), g.index},
            {QStringLiteral("name"), g.name},
            {QStringLiteral("engine"), true},
            {QStringLiteral("totalGiB"), vramTotalGiB()},
            {QStringLiteral("usedGiB"), vramUsedGiB()},
            {QStringLiteral("weightsGiB"), vramWeightsGiB()},
            {QStringLiteral("cacheGiB"), vramCacheGiB()},
            {QStringLiteral("otherGiB"), vramOtherGiB()},
            {QStringLiteral("freeGiB"), vramFreeGiB()},
        });
    }
    for (const GpuMemorySample &o : g.otherGpus) {
        if (o.totalBytes <= 0)
            continue;
        const qint64 used = std::clamp<qint64>(o.usedBytes, 0, o.totalBytes);
        // A GPU of the engine's layer split: its weights and cache, the rest of its use as "other".
        const qint64 weights = o.engine ? std::clamp<qint64>(o.weightsBytes, 0, used) : 0;
        const qint64 cache = o.engine ? std::clamp<qint64>(o.cacheBytes, 0, used - weights) : 0;
        out.append(QVariantMap{
            {QStringLiteral("index"), o.index},
            {QStringLiteral("name"), o.name},
            {QStringLiteral("engine"), o.engine},
            {QStringLiteral("totalGiB"), o.totalBytes / kGiB},
            {QStringLiteral("usedGiB"), used / kGiB},
            {QStringLiteral("weightsGiB"), weights / kGiB},
            {QStringLiteral("cacheGiB"), cache / kGiB},
            {QStringLiteral("otherGiB"), (used - weights - cache) / kGiB},
            {QStringLiteral("freeGiB"), (o.totalBytes - used) / kGiB},
        });
    }
    return out;
}

QString TelemetryModel::likelyReason(const TelemetrySample &s)
{
    if (s.remote || s.decodeTokensPerSecond <= 0 || s.boundTokensPerSecond <= 0)
        return {};
    const double fraction = s.decodeTokensPerSecond / s.boundTokensPerSecond;
    if (fraction >= kShortfall)
        return {};
    if (s.cpuBackend)
        return tr("Running on the CPU: unpacking the quantized weights takes longer than reading them, so the "
                  "processor's arithmetic, not its memory bandwidth, sets the speed.");
    const GpuStatus &g = s.gpu;
    const QString clocks = g.smClockMhz > 0 && g.smClockMaxMhz > 0
                               ? tr(" (SM clock %1 of %2 MHz)").arg(g.smClockMhz).arg(g.smClockMaxMhz)
                               : QString();
    namespace why = exl::gpu_clock_reason;
    if (g.clockReasonsKnown) {
        if (g.clockReasons & (why::sw_thermal | why::hw_thermal))
            return tr("The GPU is slowed down to stay within its temperature limit%1: check its cooling.").arg(clocks);
        if (g.clockReasons & (why::power_cap | why::hw_power_brake))
            return tr("The GPU runs at its power limit%1.").arg(clocks);
        if (g.clockReasons & why::hw_slowdown)
            return tr("The GPU's hardware slowdown is active (temperature or power supply)%1.").arg(clocks);
        if (g.clockReasons & why::application_clocks)
            return tr("The GPU's application clocks are set below their maximum%1.").arg(clocks);
    }
    if (g.otherProcesses > 0)
        return tr("Other processes use the GPU (%1) and share its memory bandwidth.").arg(g.otherProcesses);
    if (g.utilizationPercent >= 0 && g.utilizationPercent < 70)
        return tr("The GPU is idle %1 % of the time: the host does not keep it busy between tokens (host-side "
                  "stalls).").arg(100 - g.utilizationPercent);
    if (s.boundTokensPerSecond > 2000.0)
        return tr("The model is small: fixed costs per token (kernel launches, synchronisation) outweigh reading "
                  "its weights.");
    return tr("The decode kernels themselves: they reach %1 % of the memory bandwidth on this model's layer shapes.")
        .arg(qRound(fraction * 100.0));
}

double TelemetryModel::windowEnd() const
{
    return std::max(m_last.timeSeconds, kWindowSeconds);
}

double TelemetryModel::windowStart() const
{
    return windowEnd() - kWindowSeconds;
}

double TelemetryModel::peakTokensPerSecond() const
{
    double peak = 0.0;
    for (const QPointF &p : m_observed)
        peak = std::max(peak, p.y());
    for (const QPointF &p : m_bound)
        peak = std::max(peak, p.y());
    return peak;
}

void TelemetryModel::addSample(const TelemetrySample &sample)
{
    m_last = sample;
    // Samples without decoding (load, prefill, idle) update the meters but not the graph.
    if (sample.decodeTokensPerSecond > 0) {
        m_observed.append({sample.timeSeconds, sample.decodeTokensPerSecond});
        if (sample.boundTokensPerSecond > 0)
            m_bound.append({sample.timeSeconds, sample.boundTokensPerSecond});
    }
    const double start = sample.timeSeconds - kWindowSeconds;
    dropOlderThan(m_observed, start);
    dropOlderThan(m_bound, start);
    Q_EMIT updated();
}

void TelemetryModel::clear()
{
    m_last = {};
    m_observed.clear();
    m_bound.clear();
    Q_EMIT updated();
}

void TelemetryModel::fillSeries(QAbstractSeries *observed, QAbstractSeries *bound) const
{
    // Seconds before the newest sample: the x axis reads -60 ... 0, the last minute.
    const double end = windowEnd();
    const auto relative = [end](const QList<QPointF> &points) {
        QList<QPointF> out;
        out.reserve(points.size());
        for (const QPointF &p : points)
            out.append({p.x() - end, p.y()});
        return out;
    };
    if (auto *series = qobject_cast<QXYSeries *>(observed))
        series->replace(relative(m_observed));
    if (auto *series = qobject_cast<QXYSeries *>(bound))
        series->replace(relative(m_bound));
}

double TelemetryModel::niceAxisMax(double value)
{
    if (!(value > 0))
        return 10.0;
    const double decade = std::pow(10.0, std::floor(std::log10(value)));
    for (const double step : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (step * decade >= value)
            return step * decade;
    return 10.0 * decade;
}
