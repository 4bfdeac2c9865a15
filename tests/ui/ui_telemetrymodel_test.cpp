// TelemetryModel: the graph's window, meters, efficiency and the series it fills.
#include <QSignalSpy>
#include <QTest>
#include <QtCharts/QLineSeries>

#include "viewmodels/telemetrymodel.h"

namespace {
TelemetrySample sample(double t, double decode, double bound, qint64 used = 0, qint64 total = 0)
{
    TelemetrySample s;
    s.timeSeconds = t;
    s.decodeTokensPerSecond = decode;
    s.boundTokensPerSecond = bound;
    s.vramUsedBytes = used;
    s.vramTotalBytes = total;
    return s;
}
constexpr qint64 kGiB = 1024LL * 1024 * 1024;
}  // namespace

class TelemetryModelTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void plotsDecodeSamplesOnly()
    {
        TelemetryModel model;
        QSignalSpy updated(&model, &TelemetryModel::updated);
        model.addSample(sample(1.0, 0.0, 200.0, 6 * kGiB, 24 * kGiB));  // load: meters only
        QCOMPARE(model.observed().size(), 0);
        QVERIFY(model.hasVram());
        QCOMPARE(model.vramUsedGiB(), 6.0);
        QCOMPARE(model.vramTotalGiB(), 24.0);
        model.addSample(sample(2.0, 150.0, 200.0, 6 * kGiB, 24 * kGiB));
        model.addSample(sample(2.25, 160.0, 200.0, 6 * kGiB, 24 * kGiB));
        QCOMPARE(model.observed().size(), 2);
        QCOMPARE(model.bound().size(), 2);
        QCOMPARE(model.observed().last(), QPointF(2.25, 160.0));
        QCOMPARE(model.efficiency(), 0.8);
        QCOMPARE(model.peakTokensPerSecond(), 200.0);
        QCOMPARE(updated.size(), 3);
    }

    void vramMeterPartsAddUp()
    {
        TelemetryModel model;
        TelemetrySample s = sample(1.0, 0.0, 0.0, 10 * kGiB, 24 * kGiB);
        s.vramWeightsBytes = 5 * kGiB;
        s.vramCacheBytes = 2 * kGiB;
        model.addSample(s);
        QCOMPARE(model.vramWeightsGiB(), 5.0);
        QCOMPARE(model.vramCacheGiB(), 2.0);
        QCOMPARE(model.vramOtherGiB(), 3.0);
        QCOMPARE(model.vramFreeGiB(), 14.0);
        // Parts the backend over-reports never exceed what is in use.
        s.vramWeightsBytes = 9 * kGiB;
        s.vramCacheBytes = 4 * kGiB;
        model.addSample(s);
        QCOMPARE(model.vramWeightsGiB(), 9.0);
        QCOMPARE(model.vramCacheGiB(), 1.0);
        QCOMPARE(model.vramOtherGiB(), 0.0);
        // The CPU: nothing.
        model.addSample(sample(2.0, 0.0, 0.0));
        QVERIFY(!model.hasVram());
        QCOMPARE(model.vramWeightsGiB() + model.vramCacheGiB() + model.vramOtherGiB() + model.vramFreeGiB(), 0.0);
    }

    void keepsOneMinuteWindow()
    {
        TelemetryModel model;
        for (int i = 0; i <= 400; ++i)
            model.addSample(sample(i * 0.25, 100.0 + i % 7, 180.0));
        QCOMPARE(model.windowEnd(), 100.0);
        QCOMPARE(model.windowStart(), 40.0);
        QVERIFY(model.observed().constFirst().x() >= 40.0);
        QCOMPARE(model.observed().size(), 241);  // 40.0 .. 100.0 every 0.25 s
        QCOMPARE(model.windowStart(), model.windowEnd() - TelemetryModel::kWindowSeconds);
    }

    void earlyWindowStartsAtZero()
    {
        TelemetryModel model;
        model.addSample(sample(5.0, 50.0, 0.0));
        QCOMPARE(model.windowStart(), 0.0);
        QCOMPARE(model.efficiency(), 0.0);  // no bound known
        QCOMPARE(model.bound().size(), 0);
        QVERIFY(!model.hasVram());          // CPU backend
    }

    void fillsChartSeries()
    {
        TelemetryModel model;
        model.addSample(sample(1.0, 40.0, 90.0));
        model.addSample(sample(1.5, 45.0, 90.0));
        QLineSeries observed;
        QLineSeries bound;
        model.fillSeries(&observed, &bound);
        QCOMPARE(observed.count(), 2);
        QCOMPARE(observed.at(1), QPointF(1.5, 45.0));
        QCOMPARE(bound.count(), 2);
        model.clear();
        model.fillSeries(&observed, &bound);
        QCOMPARE(observed.count(), 0);
        QCOMPARE(model.decodeTokensPerSecond(), 0.0);
    }
};

QTEST_MAIN(TelemetryModelTest)
#include "ui_telemetrymodel_test.moc"
