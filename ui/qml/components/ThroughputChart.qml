// Decode tokens/s over the last minute against the bandwidth-bound line (Qt Charts).
import QtQuick
import QtCharts
import ExlStudio

ChartView {
    id: chart
    required property TelemetryModel telemetry
    property bool dark: false
    // The bandwidth-bound line (not for a remote model: its server's bandwidth is unknown).
    property bool showBound: true

    antialiasing: true
    legend.alignment: Qt.AlignBottom
    theme: dark ? ChartView.ChartThemeDark : ChartView.ChartThemeLight
    backgroundRoundness: 0
    Accessible.role: Accessible.Chart
    Accessible.name: qsTr("Throughput graph")

    // The last minute, in seconds before now; ticks every 10 s.
    ValueAxis {
        id: timeAxis
        min: -60
        max: 0
        tickCount: 7
        titleText: qsTr("Seconds ago")
        labelFormat: "%.0f"
    }
    // Round ticks: the top is 1, 2, 2.5 or 5 times a power of ten, in five steps.
    ValueAxis {
        id: rateAxis
        min: 0
        max: chart.telemetry.rateAxisMax
        tickCount: 6
        titleText: qsTr("Tokens/s")
        labelFormat: chart.telemetry.rateAxisMax < 10 ? "%.1f" : "%.0f"
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
        visible: chart.showBound
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
