// VRAM from the engine (not estimated): a stacked bar of the weights, the KV cache, everything
// else in use (scratch, the CUDA context, other processes) and what is free.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: root
    required property TelemetryModel telemetry
    property bool onCpu: false
    readonly property real total: Math.max(0.001, telemetry.vramTotalGiB)
    spacing: 4

    Label {
        text: root.onCpu ? qsTr("Running on the CPU: no VRAM in use.")
              : root.telemetry.hasVram ? qsTr("VRAM: %1 of %2 GiB in use").arg(root.telemetry.vramUsedGiB.toFixed(1)).arg(root.telemetry.vramTotalGiB.toFixed(0))
              : qsTr("VRAM: no reading yet")
    }
    Rectangle {
        Layout.fillWidth: true
        implicitHeight: 16
        radius: 3
        visible: !root.onCpu
        color: "#e0e0e0"
        clip: true
        Accessible.role: Accessible.ProgressBar
        Accessible.name: qsTr("VRAM in use")
        Row {
            anchors.fill: parent
            Rectangle { height: parent.height; width: parent.width * root.telemetry.vramWeightsGiB / root.total; color: "#00897b" }
            Rectangle { height: parent.height; width: parent.width * root.telemetry.vramCacheGiB / root.total; color: "#5c6bc0" }
            Rectangle { height: parent.height; width: parent.width * root.telemetry.vramOtherGiB / root.total; color: "#ffa726" }
        }
    }
    Flow {
        Layout.fillWidth: true
        visible: !root.onCpu && root.telemetry.hasVram
        spacing: 16
        Repeater {
            model: [
                { name: qsTr("Weights"), color: "#00897b", key: "vramWeightsGiB" },
                { name: qsTr("Cache"), color: "#5c6bc0", key: "vramCacheGiB" },
                { name: qsTr("Other"), color: "#ffa726", key: "vramOtherGiB" },
                { name: qsTr("Free"), color: "#e0e0e0", key: "vramFreeGiB" }
            ]
            delegate: RowLayout {
                required property var modelData
                spacing: 4
                Rectangle { width: 10; height: 10; radius: 2; color: modelData.color }
                Label { text: qsTr("%1 %2 GiB").arg(modelData.name).arg(root.telemetry[modelData.key].toFixed(1)) }
            }
        }
    }
}
