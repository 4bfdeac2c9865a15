// Decode tokens/s over the last minute against the bandwidth-bound line (Qt Charts).
import QtQuick
import QtCharts
import ExlStudio

ChartView {
    id: chart
    required property TelemetryModel telemetry
    property bool dark: false

    antialiasing: true
    legend.alignment: Qt.AlignBottom
    theme: dark ? ChartView.ChartThemeDark : ChartView.ChartThemeLight
    backgroundRoundness: 0
    Accessible.role: Accessible.Chart
    Accessible.name: qsTr("Throughput graph")

    ValueAxis {
        id: timeAxis
        min: chart.telemetry.windowStart
        max: chart.telemetry.windowEnd
        titleText: qsTr("Time (s)")
        labelFormat: "%.0f"
    }
    ValueAxis {
        id: rateAxis
        min: 0
        max: Math.max(10, chart.telemetry.peakTokensPerSecond * 1.15)
        titleText: qsTr("Tokens/s")
        labelFormat: "%.0f"
    }
    LineSeries {
        id: observed
        name: qsTr("Observed decode speed")
        axisX: timeAxis
        axisY: rateAxis
        width: 2
        color: "#00897b"
    }
    LineSeries {
        id: bound
        name: qsTr("Bandwidth bound")
        axisX: timeAxis
        axisY: rateAxis
        width: 2
        style: Qt.DashLine
        color: "#ef6c00"
    }

    Connections {
        target: chart.telemetry
        function onUpdated() { chart.telemetry.fillSeries(observed, bound) }
    }
    Component.onCompleted: telemetry.fillSeries(observed, bound)
}
