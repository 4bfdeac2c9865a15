// A message's Markdown text in segments (MarkdownSegmentModel): while a reply streams, each batch
// parses and lays out its last segment only; and segments far from the visible part of the list
// give up their text item, keeping their height, so the scene graph holds about what can be seen
// however long a message grows (at 2000 tokens/s a reply passes 100 KB in ten seconds).
import QtQuick
import QtQuick.Controls.Material
import ExlStudio

Column {
    id: root
    required property string text
    property bool streaming: false
    property real fontSize: 11
    property real maxWidth: 400
    // The visible part of the list, in this item's coordinates.
    property real visibleTop: -Infinity
    property real visibleBottom: Infinity

    // The gap Qt's Markdown importer leaves between blocks (2/3 of the point size, in pixels),
    // which would be lost where one segment ends and the next begins.
    spacing: Math.floor(Math.round(fontSize) * 2 / 3)

    Repeater {
        id: segments
        model: MarkdownSegmentModel { text: root.text }
        delegate: Item {
            id: slot
            required property string segment
            required property bool last
            property real textHeight: 0  // of its text item, kept while the item is released
            readonly property real margin: root.visibleBottom - root.visibleTop
            readonly property bool near: y + height >= root.visibleTop - margin && y <= root.visibleBottom + margin

            width: view.item ? view.item.width : root.maxWidth
            height: textHeight
            onNearChanged: settle.restart()
            onLastChanged: settle.restart()

            // The text item is made at once, to learn its height, then kept while within a screen
            // of the visible part: decided when the change at hand is over, not inside the
            // bindings that moved the slot (its height is one of them).
            Timer {
                id: settle
                interval: 0
                running: true
                onTriggered: view.active = slot.last || slot.near
            }
            Loader {
                id: view
                sourceComponent: TextEdit {
                    // A text of several segments is long: each takes the full width, and its
                    // natural width (a second layout pass) is never asked for.
                    width: segments.count > 1 ? root.maxWidth : Math.min(implicitWidth, root.maxWidth)
                    text: slot.segment + (slot.last && root.streaming ? " ▍" : "")
                    textFormat: TextEdit.MarkdownText
                    wrapMode: TextEdit.Wrap
                    readOnly: true
                    selectByMouse: true
                    font.pointSize: root.fontSize
                    color: Material.foreground
                    Accessible.ignored: true
                    onHeightChanged: slot.textHeight = height
                    Component.onCompleted: slot.textHeight = height
                }
            }
        }
    }
}
