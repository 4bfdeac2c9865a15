// VRAM in use against the device total (from the engine; not estimated).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: root
    required property TelemetryModel telemetry
    property bool onCpu: false
    spacing: 4

    Label {
        text: root.onCpu ? qsTr("Running on the CPU: no VRAM in use.")
              : root.telemetry.hasVram ? qsTr("VRAM: %1 of %2 GiB in use").arg(root.telemetry.vramUsedGiB.toFixed(1)).arg(root.telemetry.vramTotalGiB.toFixed(0))
              : qsTr("VRAM: no reading yet")
    }
    ProgressBar {
        Layout.fillWidth: true
        visible: !root.onCpu
        from: 0
        to: Math.max(1, root.telemetry.vramTotalGiB)
        value: root.telemetry.vramUsedGiB
        Accessible.name: qsTr("VRAM in use")
    }
}
