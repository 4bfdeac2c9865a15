#include "telemetrymodel.h"

#include <algorithm>

#include <QtCharts/QXYSeries>

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
    if (auto *series = qobject_cast<QXYSeries *>(observed))
        series->replace(m_observed);
    if (auto *series = qobject_cast<QXYSeries *>(bound))
        series->replace(m_bound);
}
