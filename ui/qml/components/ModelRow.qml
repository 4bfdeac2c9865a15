// One model in the list: name with its badges (loaded, remote), then architecture, parameters,
// bpw, head bits, size and native context on lines that wrap. Click selects, double-click or
// Enter loads.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: row
    required property int index
    required property string name
    required property string architecture
    required property real parameters
    required property real bpw
    required property real headBits
    required property real sizeBytes
    required property int nativeContext
    required property bool loaded
    required property bool remote
    required property string endpoint
    required property string note
    property bool selected: false
    signal activated()
    signal loadRequested()

    highlighted: selected
    onClicked: activated()
    onDoubleClicked: loadRequested()
    Keys.onReturnPressed: loadRequested()
    Keys.onEnterPressed: loadRequested()
    Accessible.name: name
    ToolTip.visible: hovered && nameLabel.truncated
    ToolTip.text: name
    ToolTip.delay: 600

    // A human size: MB below a gigabyte (a 135M model is 0.1 GB, not "0.0").
    function sizeText(bytes) {
        return bytes >= 1e9 ? qsTr("%1 GB").arg(Number(bytes / 1e9).toLocaleString(Qt.locale(), "f", 1))
                            : qsTr("%1 MB").arg(Number(bytes / 1e6).toLocaleString(Qt.locale(), "f", 0))
    }
    function parameterText(n) {
        return n >= 1e9 ? qsTr("%1B parameters").arg(Number(n / 1e9).toLocaleString(Qt.locale(), "f", 1))
                        : qsTr("%1M parameters").arg(Number(n / 1e6).toLocaleString(Qt.locale(), "f", 0))
    }

    contentItem: ColumnLayout {
        spacing: 2
        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            Label {
                id: nameLabel
                text: row.name
                font.bold: true
                Layout.fillWidth: true
                Layout.minimumWidth: 0
                elide: Text.ElideMiddle
            }
            Label {
                objectName: "loadedBadge"
                visible: row.loaded
                text: qsTr("loaded")
                color: "#00897b"
                font.bold: true
            }
        }
        Label {
            visible: row.remote
            Layout.fillWidth: true
            text: qsTr("remote · %1").arg(row.endpoint)
            color: "#5c6bc0"
            elide: Text.ElideMiddle
        }
        Label {
            visible: row.remote && row.note.length > 0
            Layout.fillWidth: true
            text: row.note
            color: "#ef6c00"
            wrapMode: Text.Wrap
        }
        Label {
            visible: !row.remote
            Layout.fillWidth: true
            opacity: 0.7
            wrapMode: Text.Wrap
            text: [row.architecture,
                   row.parameters > 0 ? row.parameterText(row.parameters) : "",
                   row.bpw > 0 ? qsTr("%1 bpw (head %2)").arg(Number(row.bpw).toLocaleString(Qt.locale(), "f", 2))
                                   .arg(Number(row.headBits).toLocaleString(Qt.locale(), "f", row.headBits % 1 === 0 ? 0 : 1)) : "",
                   row.sizeBytes > 0 ? row.sizeText(row.sizeBytes) : "",
                   row.nativeContext > 0 ? qsTr("%1k context").arg(Math.round(row.nativeContext / 1024)) : ""]
                  .filter(s => s.length > 0).join(" · ")
        }
    }
}
