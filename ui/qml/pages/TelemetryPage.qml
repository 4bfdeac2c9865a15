// Live figures: decode speed against the bandwidth bound, the token rate, speculative acceptance, the likely reason when
// decoding falls well short of the bound, and a VRAM meter per GPU.
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
                model: page.telemetry.remote ? [
                    { name: qsTr("Decode (seen by this app)"), value: page.telemetry.decodeTokensPerSecond.toFixed(1) + " tok/s" },
                    { name: qsTr("Time to first token"), value: page.telemetry.timeToFirstTokenMs.toFixed(0) + " ms" }
                ] : [
                    { name: qsTr("Decode"), value: page.telemetry.decodeTokensPerSecond.toFixed(1) + " tok/s" },
                    { name: qsTr("Prefill"), value: page.telemetry.prefillTokensPerSecond.toFixed(0) + " tok/s" },
                    { name: qsTr("Bandwidth bound"), value: page.telemetry.boundTokensPerSecond.toFixed(1) + " tok/s" },
                    { name: qsTr("Of the bound"), value: (page.telemetry.efficiency * 100).toFixed(0) + " %" }
                ].concat(page.telemetry.draftAcceptanceRate >= 0 ? [
                    { name: qsTr("Draft acceptance"), value: (page.telemetry.draftAcceptanceRate * 100).toFixed(0) + " %" },
                    { name: qsTr("Tokens per pass"), value: page.telemetry.tokensPerPass.toFixed(2) }
                ] : []).concat(page.telemetry.powerWatts >= 0
                         ? [{ name: qsTr("GPU power"), value: page.telemetry.powerWatts.toFixed(0) + " W" }] : [])
                delegate: ColumnLayout {
                    required property var modelData
                    spacing: 0
                    Label { text: modelData.name; opacity: 0.7 }
                    Label { text: modelData.value; font.pointSize: 18; font.bold: true }
                }
            }
        }

        Label {
            Layout.fillWidth: true
            visible: page.telemetry.remote
            wrapMode: Text.Wrap
            opacity: 0.8
            text: qsTr("Remote model: the figures are measured by this app over the network. The server's memory and bandwidth are unknown, so there is no VRAM meter and no bandwidth-bound line.")
        }

        // The chart exists while the page is shown: Qt Charts draws its whole scene into an image
        // on the GUI thread at every change, shown or not (four times a second while a reply
        // streams). It reads the history from the model when it is made.
        Loader {
            Layout.fillWidth: true
            Layout.fillHeight: true
            active: page.visible
            sourceComponent: ThroughputChart {
                telemetry: page.telemetry
                dark: page.app.settings.theme === "dark"
            }
        }

        Label {
            Layout.fillWidth: true
            visible: page.telemetry.likelyReason !== ""
            wrapMode: Text.Wrap
            text: qsTr("Well below the bound. Likely reason: %1").arg(page.telemetry.likelyReason)
        }

        Label {
            visible: !page.telemetry.remote && (page.app.onCpu || page.telemetry.gpus.length === 0)
            text: page.app.onCpu ? qsTr("Running on the CPU: no VRAM in use.") : qsTr("VRAM: no reading yet")
        }
        Repeater {
            model: page.telemetry.remote || page.app.onCpu ? [] : page.telemetry.gpus
            delegate: VramMeter {
                required property var modelData
                Layout.fillWidth: true
                gpu: modelData
            }
        }
    }
}
