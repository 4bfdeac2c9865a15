// Live engine figures for the telemetry panel: a window of decode speed samples plotted
// against the bandwidth-bound line, and the VRAM meter. Fed by InferenceService::telemetry.
#pragma once
#include <QObject>
#include <QPointF>
#include <QtQml/qqmlregistration.h>

#include "services/inferencetypes.h"

#include <QtCharts/QAbstractSeries>

class TelemetryModel : public QObject
{
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("Created by the application")
    Q_PROPERTY(double decodeTokensPerSecond READ decodeTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double prefillTokensPerSecond READ prefillTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double boundTokensPerSecond READ boundTokensPerSecond NOTIFY updated)
    Q_PROPERTY(double efficiency READ efficiency NOTIFY updated)
    Q_PROPERTY(double vramUsedGiB READ vramUsedGiB NOTIFY updated)
    Q_PROPERTY(double vramTotalGiB READ vramTotalGiB NOTIFY updated)
    Q_PROPERTY(bool hasVram READ hasVram NOTIFY updated)
    Q_PROPERTY(double vramWeightsGiB READ vramWeightsGiB NOTIFY updated)
    Q_PROPERTY(double vramCacheGiB READ vramCacheGiB NOTIFY updated)
    Q_PROPERTY(double vramOtherGiB READ vramOtherGiB NOTIFY updated)
    Q_PROPERTY(double vramFreeGiB READ vramFreeGiB NOTIFY updated)
    Q_PROPERTY(double powerWatts READ powerWatts NOTIFY updated)
    Q_PROPERTY(double windowStart READ windowStart NOTIFY updated)
    Q_PROPERTY(double windowEnd READ windowEnd NOTIFY updated)
    Q_PROPERTY(double peakTokensPerSecond READ peakTokensPerSecond NOTIFY updated)
    Q_PROPERTY(bool remote READ remote NOTIFY updated)
    Q_PROPERTY(double timeToFirstTokenMs READ timeToFirstTokenMs NOTIFY updated)
public:
    static constexpr double kWindowSeconds = 60.0;

    explicit TelemetryModel(QObject *parent = nullptr);

    double decodeTokensPerSecond() const { return m_last.decodeTokensPerSecond; }
    double prefillTokensPerSecond() const { return m_last.prefillTokensPerSecond; }
    double boundTokensPerSecond() const { return m_last.boundTokensPerSecond; }
    // Observed decode speed as a fraction of the bound (0 when either is unknown).
    double efficiency() const;
    double vramUsedGiB() const;
    double vramTotalGiB() const;
    bool hasVram() const { return m_last.vramTotalBytes > 0; }
    // The meter's parts: weights, KV cache, everything else in use (scratch, the CUDA context,
    // other processes), free; they add up to the total.
    double vramWeightsGiB() const;
    double vramCacheGiB() const;
    double vramOtherGiB() const;
    double vramFreeGiB() const;
    double powerWatts() const { return m_last.powerWatts; }  // <0: no reading (CPU, no NVML)
    double windowStart() const;
    double windowEnd() const;
    double peakTokensPerSecond() const;
    // The figures come from a remote endpoint, as observed by this app: no VRAM, no bound line.
    bool remote() const { return m_last.remote; }
    double timeToFirstTokenMs() const { return m_last.timeToFirstTokenMs; }

    const QList<QPointF> &observed() const { return m_observed; }
    const QList<QPointF> &bound() const { return m_bound; }

    // Copies the history into two QXYSeries of a ChartView (line series).
    Q_INVOKABLE void fillSeries(QAbstractSeries *observed, QAbstractSeries *bound) const;

public Q_SLOTS:
    void addSample(const TelemetrySample &sample);
    void clear();

Q_SIGNALS:
    void updated();

private:
    TelemetrySample m_last;
    QList<QPointF> m_observed;
    QList<QPointF> m_bound;
};
