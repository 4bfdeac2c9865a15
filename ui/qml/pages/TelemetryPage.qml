// Live figures: decode speed against the bandwidth bound, the token rate and the VRAM meter.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

Item {
    id: page
    required property AppContext app
    readonly property TelemetryModel telemetry: app.telemetry

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 12

        RowLayout {
            spacing: 32
            Repeater {
                model: [
                    { name: qsTr("Decode"), value: page.telemetry.decodeTokensPerSecond.toFixed(1) + " tok/s" },
                    { name: qsTr("Prefill"), value: page.telemetry.prefillTokensPerSecond.toFixed(0) + " tok/s" },
                    { name: qsTr("Bandwidth bound"), value: page.telemetry.boundTokensPerSecond.toFixed(1) + " tok/s" },
                    { name: qsTr("Of the bound"), value: (page.telemetry.efficiency * 100).toFixed(0) + " %" }
                ]
                delegate: ColumnLayout {
                    required property var modelData
                    spacing: 0
                    Label { text: modelData.name; opacity: 0.7 }
                    Label { text: modelData.value; font.pointSize: 18; font.bold: true }
                }
            }
        }

        ThroughputChart {
            Layout.fillWidth: true
            Layout.fillHeight: true
            telemetry: page.telemetry
            dark: page.app.settings.theme === "dark"
        }

        VramMeter {
            Layout.fillWidth: true
            telemetry: page.telemetry
            onCpu: page.app.onCpu
        }
    }
}
