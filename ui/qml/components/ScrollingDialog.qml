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
    // Enter or Return accepts the dialog (its default button), wherever the focus is inside.
    property bool acceptOnEnter: false
    readonly property Item overlayItem: Overlay.overlay

    modal: true
    background: DialogBackground {}
    spacing: 10  // between the content's rows, too
    anchors.centerIn: Overlay.overlay
    width: Math.min(preferredWidth, overlayItem ? overlayItem.width - 32 : preferredWidth)
    height: Math.min(implicitHeight, overlayItem ? overlayItem.height - 32 : implicitHeight)

    Shortcut {
        sequences: ["Return", "Enter"]
        enabled: dialog.acceptOnEnter && dialog.opened
        onActivated: dialog.accept()
    }

    // The content item itself, so that the dialog's children (the default property) go into the
    // column and the dialog's implicit height is the column's.
    contentItem: ScrollView {
        id: scroll
        contentWidth: availableWidth
        clip: true
        // Shown whenever there is more below, not only while scrolling; the column leaves it room.
        ScrollBar.vertical.policy: contentHeight > availableHeight ? ScrollBar.AlwaysOn : ScrollBar.AsNeeded
        ColumnLayout {
            id: column
            width: scroll.availableWidth - (scroll.ScrollBar.vertical.policy === ScrollBar.AlwaysOn ? scroll.ScrollBar.vertical.width + 4 : 0)
            spacing: dialog.spacing
        }
    }
}
