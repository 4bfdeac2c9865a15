// A Hub repository's page (the Hugging Face tab's right column): its variants (each branch or
// folder holding a model, with its bpw and size) and, before anything is downloaded, how each fits
// on this computer at the context length and cache type chosen here (the planner, from config.json
// and the safetensors headers read over the Hub). A Download button per variant; the download's
// progress (bytes, speed, time left) with Cancel. Scrolls when taller than the window.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ScrollView {
    id: root
    required property HubViewModel hub
    required property ModelManager models
    property bool onCpu: false
    readonly property HubDownload download: hub.download
    // The user asked to see a downloaded variant in the local list.
    signal showModel(string path)

    function bytesText(bytes) {
        return bytes >= 1e9 ? qsTr("%1 GB").arg(Units.number(bytes / 1e9, 1)) : qsTr("%1 MB").arg(Units.number(bytes / 1e6, 0))
    }
    function durationText(seconds) {
        if (seconds < 0)
            return qsTr("unknown")
        const s = Math.round(seconds)
        return s >= 3600 ? qsTr("%1 h %2 min").arg(Math.floor(s / 3600)).arg(Math.floor(s % 3600 / 60))
             : s >= 60 ? qsTr("%1 min %2 s").arg(Math.floor(s / 60)).arg(s % 60) : qsTr("%1 s").arg(s)
    }

    // A fixed preference, as the details' scroll view (its width would feed back otherwise).
    implicitWidth: 200
    contentWidth: availableWidth
    clip: true
    ScrollBar.vertical.policy: contentHeight > availableHeight ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded

    ColumnLayout {
        width: root.availableWidth - root.ScrollBar.vertical.width - 4
        spacing: 10

        Label {
            Layout.fillWidth: true
            font.bold: true
            font.pointSize: (ApplicationWindow.window ? ApplicationWindow.window.font.pointSize : 11) + 2
            wrapMode: Text.WrapAnywhere
            text: root.hub.repoId.length > 0 ? root.hub.repoId : qsTr("No model chosen")
        }
        Label {
            Layout.fillWidth: true
            visible: root.hub.repoId.length === 0
            wrapMode: Text.Wrap
            text: qsTr("Choose a model on the left to see its bitrates, their size and how each fits on this computer, before downloading.")
        }
        Label {
            Layout.fillWidth: true
            visible: root.hub.repo.id !== undefined
            opacity: 0.7
            wrapMode: Text.Wrap
            text: root.hub.repo.id === undefined ? ""
                  : [qsTr("%1 downloads").arg(Units.number(root.hub.repo.downloads, 0)),
                     qsTr("%1 likes").arg(Units.number(root.hub.repo.likes, 0)),
                     Units.dateKnown(root.hub.repo.updated)
                         ? qsTr("updated %1").arg(root.hub.repo.updated.toLocaleDateString(Qt.locale(), Locale.ShortFormat)) : ""]
                    .concat(root.hub.repo.gated ? [qsTr("gated: needs a token (Settings)")] : []).filter(t => t.length > 0).join(" · ")
        }

        // The download under way.
        ColumnLayout {
            objectName: "hubDownloadProgress"
            Layout.fillWidth: true
            visible: root.download.running
            spacing: 4
            Label {
                Layout.fillWidth: true
                wrapMode: Text.WrapAnywhere
                font.bold: true
                text: qsTr("Downloading %1").arg(root.download.name)
            }
            ProgressBar {
                Layout.fillWidth: true
                from: 0
                to: Math.max(1, root.download.bytesTotal)
                value: root.download.bytesDone
                indeterminate: root.download.bytesTotal <= 0
                Accessible.name: qsTr("Download progress")
            }
            Label {
                objectName: "hubDownloadText"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: qsTr("%1 of %2 · %3/s · %4 left · %5 of %6 files")
                      .arg(root.bytesText(root.download.bytesDone)).arg(root.bytesText(root.download.bytesTotal))
                      .arg(root.bytesText(root.download.bytesPerSecond)).arg(root.durationText(root.download.secondsLeft))
                      .arg(root.download.filesDone).arg(root.download.filesTotal)
            }
            Button {
                objectName: "hubCancelButton"
                text: qsTr("Cancel")
                Accessible.name: qsTr("Cancel the download")
                onClicked: root.download.cancel()
            }
        }
        Label {
            objectName: "hubDownloadError"
            Layout.fillWidth: true
            visible: !root.download.running && root.download.error.length > 0
            wrapMode: Text.Wrap
            color: "#c62828"
            text: qsTr("Download failed: %1").arg(root.download.error)
        }

        // What the fits below assume.
        ColumnLayout {
            Layout.fillWidth: true
            visible: root.hub.repoId.length > 0
            spacing: 6
            Label { text: qsTr("Fit on this computer"); font.bold: true; Layout.topMargin: 4 }
            LabeledSlider {
                objectName: "hubContextSlider"
                Layout.fillWidth: true
                label: qsTr("Context length")
                from: 512; to: Math.max(1024, root.hub.maxContextLength); stepSize: 512
                value: root.hub.contextLength
                valueText: qsTr("%1 tokens").arg(Units.number(value, 0))
                onMoved: v => root.hub.contextLength = v
            }
            LabeledSlider {
                Layout.fillWidth: true
                label: qsTr("Cache type")
                from: 0; to: root.models.cacheTypeNames.length - 1; stepSize: 1
                value: root.hub.cacheType
                valueText: root.models.cacheTypeNames[value] ?? ""
                onMoved: v => root.hub.cacheType = v
            }
        }
        RowLayout {
            visible: root.hub.repoLoading
            spacing: 8
            BusyIndicator { running: root.hub.repoLoading; height: 32; width: 32; Accessible.name: qsTr("Reading the repository…") }
            Label { text: qsTr("Reading the repository…") }
        }
        Label {
            objectName: "hubRepoError"
            Layout.fillWidth: true
            visible: root.hub.repoError.length > 0
            wrapMode: Text.Wrap
            color: "#c62828"
            text: root.hub.repoError
        }

        Repeater {
            model: root.hub.variants
            delegate: Frame {
                id: variant
                required property var modelData
                required property int index
                objectName: "hubVariant" + index
                Layout.fillWidth: true
                ColumnLayout {
                    width: parent.width
                    spacing: 6
                    RowLayout {
                        Layout.fillWidth: true
                        spacing: 8
                        Label {
                            Layout.fillWidth: true
                            Layout.minimumWidth: 0
                            font.bold: true
                            wrapMode: Text.WrapAnywhere
                            text: variant.modelData.label
                        }
                        Label {
                            text: variant.modelData.downloaded ? qsTr("downloaded") : ""
                            visible: variant.modelData.downloaded
                            color: "#00897b"
                            font.bold: true
                        }
                    }
                    Label {
                        Layout.fillWidth: true
                        opacity: 0.7
                        wrapMode: Text.Wrap
                        text: [variant.modelData.format,
                               variant.modelData.bpw > 0 ? qsTr("%1 bpw").arg(Units.number(variant.modelData.bpw, 2)) : "",
                               root.bytesText(variant.modelData.sizeBytes)].filter(s => s.length > 0).join(" · ")
                    }
                    FitBar {
                        Layout.fillWidth: true
                        visible: variant.modelData.error.length === 0
                        fit: variant.modelData.fit
                        onCpu: root.onCpu
                    }
                    Label {
                        Layout.fillWidth: true
                        visible: variant.modelData.error.length > 0
                        wrapMode: Text.Wrap
                        color: "#c62828"
                        text: qsTr("No fit: %1").arg(variant.modelData.error)
                    }
                    Flow {
                        Layout.fillWidth: true
                        spacing: 8
                        AccentButton {
                            objectName: "hubDownloadButton" + variant.index
                            visible: !variant.modelData.downloaded
                            enabled: !root.download.running
                            text: qsTr("Download")
                            Accessible.name: qsTr("Download %1").arg(variant.modelData.label)
                            onClicked: root.hub.downloadVariant(variant.index)
                        }
                        Button {
                            visible: variant.modelData.downloaded
                            text: qsTr("Show in my models")
                            Accessible.name: qsTr("Show %1 in the model list").arg(variant.modelData.label)
                            onClicked: root.showModel(variant.modelData.path)
                        }
                    }
                }
            }
        }
    }
}
