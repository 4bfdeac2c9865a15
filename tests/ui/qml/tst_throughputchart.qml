// ThroughputChart: the two line series (observed decode speed, bandwidth bound) are fed from the
// TelemetryModel as samples arrive, samples without decoding add no point, the time axis follows
// the model's one-minute window, the rate axis its peak, and clearing the model empties them.
import QtQuick
import QtCharts
import QtTest
import ExlStudio

Item {
    id: root
    width: 800
    height: 500

    Component { id: chartComponent; ThroughputChart { width: 700; height: 400; telemetry: testTelemetry } }

    TestCase {
        name: "ThroughputChart"
        when: windowShown

        function init() { testTelemetry.clear() }
        function make() {
            const c = createTemporaryObject(chartComponent, root, {})
            verify(c)
            return c
        }
        function points(series) {
            const out = []
            for (let i = 0; i < series.count; ++i) out.push([series.at(i).x, series.at(i).y])
            return out
        }

        function test_twoNamedSeries() {
            const c = make()
            compare(c.count, 2)
            compare(c.series(0).name, "Observed decode speed")
            compare(c.series(1).name, "Bandwidth bound")
            compare(c.series(0).count, 0)
            compare(c.series(1).count, 0)
            // Always the last minute, in seconds before now; empty: 10 tokens/s tall.
            compare(c.series(0).axisX.min, -60)
            compare(c.series(0).axisX.max, 0)
            compare(c.series(0).axisY.max, 10)
        }

        function test_samplesBecomePoints() {
            const c = make()
            testHelper.addTelemetry(1, 50, 200)
            testHelper.addTelemetry(2, 62.5, 200)
            testHelper.addTelemetry(3, 0, 200)       // not decoding: no point
            // Seconds before the newest sample (t = 3).
            compare(points(c.series(0)), [[-2, 50], [-1, 62.5]])
            compare(points(c.series(1)), [[-2, 200], [-1, 200]])
            // The peak with room (220), up to a round top whose fifths are round too.
            compare(c.series(0).axisY.max, 250)
            compare(c.series(0).axisX.min, -60)
            compare(c.series(0).axisX.max, 0)
        }

        function test_filledFromTheModelWhenCreated() {
            testHelper.addTelemetry(5, 30, 0)        // no bound known: observed only
            testHelper.addTelemetry(6, 31, 0)
            const c = make()
            compare(points(c.series(0)), [[-1, 30], [0, 31]])
            compare(c.series(1).count, 0)
            compare(c.series(0).axisY.max, 50)
        }

        function test_windowMovesOn() {
            const c = make()
            testHelper.addTelemetry(10, 40, 100)
            testHelper.addTelemetry(50, 45, 100)
            testHelper.addTelemetry(100, 48, 100)   // the last minute is now 40..100 s
            compare(c.series(0).axisX.min, -60)
            compare(c.series(0).axisX.max, 0)
            compare(points(c.series(0)), [[-50, 45], [0, 48]])
            compare(points(c.series(1)), [[-50, 100], [0, 100]])
        }

        function test_clearEmptiesTheChart() {
            const c = make()
            testHelper.addTelemetry(1, 50, 200)
            compare(c.series(0).count, 1)
            testTelemetry.clear()
            compare(c.series(0).count, 0)
            compare(c.series(1).count, 0)
            compare(c.series(0).axisY.max, 10)
        }
    }
}
