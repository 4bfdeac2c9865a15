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

    function rate(value, decimals) { return value > 0 ? qsTr("%1 tok/s").arg(Units.number(value, decimals)) : "–" }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 12

        // The figures wrap onto more lines where the window is narrow. A figure not measured yet
        // reads "–", not 0.
        Flow {
            Layout.fillWidth: true
            spacing: 32
            Repeater {
                model: page.telemetry.remote ? [
                    { name: qsTr("Decode (seen by this app)"), value: page.rate(page.telemetry.decodeTokensPerSecond, 1) },
                    { name: qsTr("Time to first token"), value: page.telemetry.timeToFirstTokenMs > 0
                                                                ? qsTr("%1 ms").arg(Units.number(page.telemetry.timeToFirstTokenMs, 0)) : "–" }
                ] : [
                    { name: qsTr("Decode"), value: page.rate(page.telemetry.decodeTokensPerSecond, 1) },
                    { name: qsTr("Prefill"), value: page.rate(page.telemetry.prefillTokensPerSecond, 0) },
                    { name: qsTr("Bandwidth bound"), value: page.rate(page.telemetry.boundTokensPerSecond, 1) },
                    { name: qsTr("Of the bound"), value: page.telemetry.efficiency > 0
                                                         ? qsTr("%1 %").arg(Units.number(page.telemetry.efficiency * 100, 0)) : "–" }
                ].concat(page.telemetry.draftAcceptanceRate >= 0 ? [
                    { name: qsTr("Draft acceptance"), value: qsTr("%1 %").arg(Units.number(page.telemetry.draftAcceptanceRate * 100, 0)) },
                    { name: qsTr("Tokens per pass"), value: Units.number(page.telemetry.tokensPerPass, 2) }
                ] : []).concat(page.telemetry.powerWatts >= 0
                         ? [{ name: qsTr("GPU power"), value: qsTr("%1 W").arg(Units.number(page.telemetry.powerWatts, 0)) }] : [])
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
                showBound: !page.telemetry.remote
            }
        }

        Label {
            Layout.fillWidth: true
            visible: page.telemetry.likelyReason !== ""
            wrapMode: Text.Wrap
            text: qsTr("Well below the bound. Likely reason: %1").arg(page.telemetry.likelyReason)
        }

        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
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
