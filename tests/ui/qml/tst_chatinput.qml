// ChatInput: Enter sends and clears, Shift+Enter adds a line, Send is disabled on blank text, and
// the button stops a streaming reply.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 800
    height: 200

    Component {
        id: inputComponent
        ChatInput { width: 800; chat: testChat }
    }

    function find(item, pred) {
        if (pred(item)) return item
        for (let i = 0; i < item.children.length; ++i) {
            const f = find(item.children[i], pred)
            if (f) return f
        }
        if (item.contentItem && item.contentItem !== item) {
            const f = find(item.contentItem, pred)
            if (f) return f
        }
        return null
    }

    TestCase {
        name: "ChatInput"
        when: windowShown

        function fieldOf(input) { return root.find(input, i => i instanceof TextArea) }
        function buttonOf(input) { return root.find(input, i => i instanceof AccentButton) }

        function test_shiftEnterAddsALineEnterSendsAndClears() {
            const input = createTemporaryObject(inputComponent, root, {})
            waitForRendering(input)
            const field = fieldOf(input)
            const button = buttonOf(input)
            verify(field && button)
            compare(button.text, "Send")
            verify(!button.enabled)               // nothing to send
            field.forceActiveFocus()
            keyClick(Qt.Key_Space)
            verify(!button.enabled)               // blank text
            field.text = "Hello"
            field.cursorPosition = field.length
            verify(button.enabled)
            keyClick(Qt.Key_Return, Qt.ShiftModifier)
            compare(field.text, "Hello\n")        // a new line, nothing sent
            verify(!testChat.busy)
            field.text = "Hello"
            keyClick(Qt.Key_Return)
            compare(field.text, "")               // sent and cleared
            tryCompare(testChat, "busy", true)
            compare(button.text, "Stop")
            verify(button.enabled)
            mouseClick(button)                    // stops the reply
            tryCompare(testChat, "busy", false, 5000)
            compare(button.text, "Send")
        }
    }
}
