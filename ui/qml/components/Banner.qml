// A full-width notice strip: "info", "warning" or "error".
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material

Rectangle {
    id: banner
    property string tone: "info"
    property alias text: label.text

    implicitHeight: visible ? label.implicitHeight + 16 : 0
    color: tone === "error" ? "#c62828" : tone === "warning" ? "#f9a825" : Material.color(Material.BlueGrey, Material.Shade100)
    Accessible.role: Accessible.AlertMessage
    Accessible.name: text

    Label {
        id: label
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 16
        verticalAlignment: Text.AlignVCenter
        wrapMode: Text.Wrap
        color: banner.tone === "error" ? "white" : "#212121"
    }
}
