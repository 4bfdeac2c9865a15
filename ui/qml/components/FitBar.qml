// The VRAM fit readout: a stacked bar (weights, cache, scratch, draft model, free), the verdict, the
// largest context that fits and the bound decode speed. Disabled when the planner has no estimate for the model.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: root
    property var fit: ({})
    property bool onCpu: false
    readonly property bool available: fit.available === true
    readonly property real total: available ? Math.max(fit.deviceGiB, fit.usedGiB) : 1
    readonly property real draftGiB: available && fit.draftGiB !== undefined ? fit.draftGiB : 0

    enabled: available
    spacing: 6

    Rectangle {
        Layout.fillWidth: true
        Layout.preferredHeight: 28
        radius: 4
        color: "#e0e0e0"
        clip: true
        Accessible.role: Accessible.Chart
        Accessible.name: verdict.text
        Row {
            anchors.fill: parent
            Rectangle { objectName: "weightsBar"; height: parent.height; width: root.available ? parent.width * root.fit.weightsGiB / root.total : 0; color: "#00897b" }
            Rectangle { height: parent.height; width: root.available ? parent.width * root.fit.cacheGiB / root.total : 0; color: "#5c6bc0" }
            Rectangle { height: parent.height; width: root.available ? parent.width * root.fit.scratchGiB / root.total : 0; color: "#ffa726" }
            Rectangle { objectName: "draftBar"; height: parent.height; width: parent.width * root.draftGiB / root.total; color: "#8e24aa" }
        }
    }
    RowLayout {
        spacing: 14
        Repeater {
            model: [
                { name: qsTr("Weights"), color: "#00897b", key: "weightsGiB" },
                { name: qsTr("Cache"), color: "#5c6bc0", key: "cacheGiB" },
                { name: qsTr("Scratch"), color: "#ffa726", key: "scratchGiB" },
                { name: qsTr("Draft model"), color: "#8e24aa", key: "draftGiB" },
                { name: qsTr("Free"), color: "#e0e0e0", key: "freeGiB" }
            ]
            delegate: RowLayout {
                required property var modelData
                objectName: "legend_" + modelData.key
                visible: modelData.key !== "draftGiB" || root.draftGiB > 0
                spacing: 4
                Rectangle { width: 10; height: 10; radius: 2; color: modelData.color }
                Label { text: qsTr("%1 %2").arg(modelData.name).arg(root.available ? Units.size(root.fit[modelData.key] ?? 0) : "–") }
            }
        }
    }
    Label {
        id: verdict
        objectName: "verdict"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        font.bold: true
        color: !root.available ? Material.foreground : root.fit.fits ? "#2e7d32" : "#c62828"
        text: !root.available ? qsTr("No memory estimate for this model.")
              : root.fit.fits ? qsTr("Fits: %1 of %2 on %3.").arg(Units.size(root.fit.usedGiB)).arg(Units.size(root.fit.deviceGiB, 0))
                                .arg(root.onCpu ? qsTr("system memory") : (root.fit.target ? root.fit.target : qsTr("the GPU")))
              : qsTr("Does not fit: needs %1 of %2.").arg(Units.size(root.fit.usedGiB)).arg(Units.size(root.fit.deviceGiB, 0))
    }
    // A split over several GPUs: what each one holds.
    Repeater {
        model: root.available && root.fit.devices ? root.fit.devices : []
        delegate: Label {
            required property var modelData
            objectName: "splitDevice"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: modelData.fits ? Material.foreground : "#c62828"
            text: (modelData.firstLayer < 0 ? qsTr("GPU %1 (%2): no layers, %3 of %4")
                                                  .arg(modelData.index).arg(modelData.name)
                                            : qsTr("GPU %1 (%2): layers %3–%4, %5 of %6")
                                                  .arg(modelData.index).arg(modelData.name)
                                                  .arg(modelData.firstLayer).arg(modelData.lastLayer))
                  .arg(Units.size(modelData.usedGiB)).arg(Units.size(modelData.totalGiB, 0))
                  + (modelData.head ? qsTr(", the head") : "") + (modelData.draft ? qsTr(", the draft model") : "")
        }
    }
    Label {
        objectName: "largest"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        visible: root.available
        text: qsTr("Largest context that fits: %1 tokens").arg(root.available ? Units.number(root.fit.largestContext, 0) : 0)
    }
    // The bandwidth bound at both ends of the context: the Telemetry page's bound line runs
    // between them as the conversation fills the cache (one computation: the planner's bytes per
    // token over the device's bandwidth).
    Label {
        objectName: "bound"
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        visible: root.available && (root.fit.boundEmptyTokensPerSecond ?? 0) > 0
        text: qsTr("Bound decode speed: %1 tok/s at an empty context, %2 tok/s at %3 tokens")
              .arg(visible ? Units.number(root.fit.boundEmptyTokensPerSecond, 0) : 0)
              .arg(visible ? Units.number(root.fit.boundTokensPerSecond, 0) : 0)
              .arg(visible ? Units.number(root.fit.contextLength, 0) : 0)
    }
    Label {
        objectName: "speculative"
        visible: root.available && root.draftGiB > 0 && (root.fit.speculativeTokensPerSecond ?? 0) > 0
        text: qsTr("With the draft model: about %1 tok/s if %2 % of drafted tokens are accepted")
              .arg(visible ? Units.number(root.fit.speculativeTokensPerSecond, 0) : 0)
              .arg(visible ? (100 * root.fit.speculativeAcceptance).toFixed(0) : 0)
    }
}
