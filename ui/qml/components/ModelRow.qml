// One model in the list: name, architecture, parameters, bpw, head bits, size, native context.
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

    highlighted: selected
    onClicked: activated()
    Accessible.name: name

    contentItem: ColumnLayout {
        spacing: 2
        RowLayout {
            Label { text: row.name; font.bold: true; Layout.fillWidth: true; elide: Text.ElideRight }
            Label { visible: row.remote; text: qsTr("remote · %1").arg(row.endpoint); color: "#3949ab" }
            Label { visible: row.loaded; text: qsTr("loaded"); color: "#00897b" }
        }
        Label {
            visible: row.remote && row.note.length > 0
            text: row.note
            color: "#ef6c00"
        }
        Label {
            visible: !row.remote
            opacity: 0.7
            text: qsTr("%1 · %2B parameters · %3 bpw (head %4) · %5 GB · %6k context")
                  .arg(row.architecture).arg((row.parameters / 1e9).toFixed(row.parameters < 1e9 ? 3 : 1)).arg(row.bpw.toFixed(2))
                  .arg(Number(row.headBits).toFixed(row.headBits % 1 === 0 ? 0 : 1))
                  .arg((row.sizeBytes / 1e9).toFixed(row.sizeBytes < 1e9 ? 3 : 1)).arg(Math.round(row.nativeContext / 1024))
        }
    }
}
