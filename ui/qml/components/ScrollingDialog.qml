// A modal dialog whose content scrolls when it is taller than the window: it takes its content's
// height up to the window's, less a margin, and never runs past the window's edges. Children are
// laid out in a column (Layout.fillWidth to take the dialog's width).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Dialog {
    id: dialog
    default property alias content: column.data
    property real preferredWidth: 640
    property real spacing: 10
    readonly property Item overlayItem: Overlay.overlay

    modal: true
    anchors.centerIn: Overlay.overlay
    width: Math.min(preferredWidth, overlayItem ? overlayItem.width - 32 : preferredWidth)
    height: Math.min(implicitHeight, overlayItem ? overlayItem.height - 32 : implicitHeight)

    ScrollView {
        id: scroll
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true
        ColumnLayout {
            id: column
            width: scroll.availableWidth
            spacing: dialog.spacing
        }
    }
}
