// One GPU's memory as the driver reports it (not estimated): a stacked bar of the weights, the
// KV cache, everything else in use (scratch, the CUDA context, other processes) and what is
// free. `gpu` is an entry of TelemetryModel.gpus (a GPU the engine does not use shows all its
// use as "other").
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: root
    required property var gpu
    readonly property real total: Math.max(0.001, gpu.totalGiB)
    spacing: 4

    Label {
        objectName: "gpuLabel"
        text: (root.gpu.engine ? qsTr("GPU %1 (%2, the engine's): %3 of %4 in use")
                               : qsTr("GPU %1 (%2): %3 of %4 in use"))
              .arg(root.gpu.index).arg(root.gpu.name).arg(Units.size(root.gpu.usedGiB)).arg(Units.size(root.gpu.totalGiB, 0))
    }
    Rectangle {
        Layout.fillWidth: true
        implicitHeight: 16
        radius: 3
        color: "#e0e0e0"
        clip: true
        Accessible.role: Accessible.ProgressBar
        Accessible.name: qsTr("VRAM in use")
        Row {
            anchors.fill: parent
            Rectangle { objectName: "weightsBar"; height: parent.height; width: parent.width * root.gpu.weightsGiB / root.total; color: "#00897b" }
            Rectangle { objectName: "cacheBar"; height: parent.height; width: parent.width * root.gpu.cacheGiB / root.total; color: "#5c6bc0" }
            Rectangle { objectName: "otherBar"; height: parent.height; width: parent.width * root.gpu.otherGiB / root.total; color: "#ffa726" }
        }
    }
    Flow {
        Layout.fillWidth: true
        spacing: 16
        Repeater {
            objectName: "legend"
            model: (root.gpu.engine ? [
                { name: qsTr("Weights"), color: "#00897b", key: "weightsGiB" },
                { name: qsTr("Cache"), color: "#5c6bc0", key: "cacheGiB" }
            ] : []).concat([
                { name: qsTr("Other"), color: "#ffa726", key: "otherGiB" },
                { name: qsTr("Free"), color: "#e0e0e0", key: "freeGiB" }
            ])
            delegate: RowLayout {
                required property var modelData
                spacing: 4
                Rectangle { width: 10; height: 10; radius: 2; color: modelData.color }
                Label { text: qsTr("%1 %2").arg(modelData.name).arg(Units.size(root.gpu[modelData.key])) }
            }
        }
    }
}
