// A message's Markdown text in segments (MarkdownSegmentModel): while a reply streams, each batch
// parses and lays out its last segment only; and segments far from the visible part of the list
// give up their text item, keeping their height, so the scene graph holds about what can be seen
// however long a message grows (at 2000 tokens/s a reply passes 100 KB in ten seconds). Fenced
// code blocks are drawn apart: a background, a Copy button, long lines scrolled sideways.
import QtQuick
import QtQuick.Controls
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
                sourceComponent: Column {
                    id: blocks
                    spacing: root.spacing
                    readonly property var parts: segmentModel.blocksOf(slot.segment + (slot.last && root.streaming ? " ▍" : ""))
                    // A text of several segments or blocks is long: each takes the full width, and
                    // its natural width (a second layout pass) is never asked for.
                    readonly property bool full: segments.count > 1 || parts.length > 1
                    onHeightChanged: slot.textHeight = height
                    Component.onCompleted: slot.textHeight = height
                    Repeater {
                        model: blocks.parts
                        delegate: Loader {
                            required property var modelData
                            readonly property var part: modelData
                            readonly property bool full: blocks.full
                            sourceComponent: modelData.code ? codeBlock : markdownBlock
                        }
                    }
                }
            }
        }
    }

    Component {
        id: markdownBlock
        TextEdit {
            width: parent && !parent.full ? Math.min(implicitWidth, root.maxWidth) : root.maxWidth
            text: parent ? parent.part.text : ""
            textFormat: TextEdit.MarkdownText
            wrapMode: TextEdit.Wrap
            readOnly: true
            selectByMouse: true
            font.pointSize: root.fontSize
            color: Material.foreground
            Accessible.ignored: true
        }
    }

    // A fenced code block: its own background, monospace, long lines scroll sideways (never cut
    // off or wrapped), and a Copy button.
    Component {
        id: codeBlock
        Rectangle {
            id: block
            readonly property string code: parent ? parent.part.text : ""
            readonly property string language: parent ? parent.part.language : ""
            width: root.maxWidth
            height: codeHeader.height + codeView.height + 8
            radius: 4
            color: Material.theme === Material.Dark ? "#1e272c" : "#eef1f3"
            border.color: Material.dividerColor
            Row {
                id: codeHeader
                x: 8
                width: parent.width - 16
                spacing: 8
                Label {
                    anchors.verticalCenter: parent.verticalCenter
                    width: parent.width - copyCode.width - 8
                    text: block.language
                    opacity: 0.7
                    elide: Text.ElideRight
                    font.pointSize: Math.max(7, root.fontSize - 2)
                }
                ToolButton {
                    id: copyCode
                    objectName: "copyCodeButton"
                    text: copied.running ? qsTr("Copied") : qsTr("Copy")
                    font.pointSize: Math.max(7, root.fontSize - 2)
                    Accessible.name: qsTr("Copy code")
                    focusPolicy: Qt.StrongFocus
                    Keys.onReturnPressed: clicked()
                    Keys.onEnterPressed: clicked()
                    onClicked: { codeClipboard.text = block.code; codeClipboard.selectAll(); codeClipboard.copy(); copied.restart() }
                    Timer { id: copied; interval: 1500 }
                }
            }
            Flickable {
                id: codeView
                objectName: "codeView"
                anchors.top: codeHeader.bottom
                x: 8
                width: parent.width - 16
                height: codeText.height + (codeScroll.visible ? codeScroll.height : 0)
                contentWidth: codeText.width
                contentHeight: codeText.height
                flickableDirection: Flickable.HorizontalFlick
                boundsBehavior: Flickable.StopAtBounds
                clip: true
                ScrollBar.horizontal: ScrollBar { id: codeScroll; policy: codeView.contentWidth > codeView.width ? ScrollBar.AlwaysOn : ScrollBar.AlwaysOff }
                TextEdit {
                    id: codeText
                    objectName: "codeText"
                    text: block.code
                    textFormat: TextEdit.PlainText
                    wrapMode: TextEdit.NoWrap
                    readOnly: true
                    selectByMouse: true
                    font.family: "monospace"
                    font.pointSize: root.fontSize
                    color: Material.foreground
                    Accessible.ignored: true
                }
            }
        }
    }

    TextEdit { id: codeClipboard; visible: false }
    MarkdownSegmentModel { id: segmentModel }
}
