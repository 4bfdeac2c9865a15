// One tab of the Models page's sources (this computer, remote endpoints, the Hugging Face Hub): a
// tab button in a row that wraps, the current one underlined in the accent colour.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material

TabButton {
    id: tab
    required property Item tabs  // has `currentIndex`
    required property int index
    width: implicitWidth
    checkable: false
    checked: tabs.currentIndex === index
    onClicked: tabs.currentIndex = index
    Rectangle {
        anchors.bottom: parent.bottom
        width: parent.width
        height: 2
        color: tab.Material.accent
        visible: tab.checked
    }
}
