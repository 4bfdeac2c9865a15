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
    
        // Without a model nothing is sent, by Enter or the button, and the box says why.
        function test_notReadyDoesNotSend() {
            const input = createTemporaryObject(inputComponent, root, { ready: false })
            waitForRendering(input)
            const field = fieldOf(input)
            const button = buttonOf(input)
            verify(field.placeholderText.indexOf("Load a model") >= 0, field.placeholderText)
            field.forceActiveFocus()
            field.text = "Hello"
            field.cursorPosition = field.length
            verify(!button.enabled)
            keyClick(Qt.Key_Return)
            compare(field.text, "Hello")          // kept, not sent
            verify(!testChat.busy)
            input.ready = true
            verify(button.enabled)
            verify(field.placeholderText.indexOf("Enter to send") >= 0)
        }

        // Tab and Shift+Tab leave the box; Ctrl+Tab and Ctrl+I insert a tab.
        function test_tabMovesFocusCtrlTabInserts() {
            const input = createTemporaryObject(inputComponent, root, {})
            waitForRendering(input)
            const field = fieldOf(input)
            const button = buttonOf(input)
            field.forceActiveFocus()
            field.text = "a"
            field.cursorPosition = 1
            keyClick(Qt.Key_Tab, Qt.ControlModifier)
            keyClick(Qt.Key_I, Qt.ControlModifier)
            compare(field.text, "a\t\t")
            keyClick(Qt.Key_Tab)
            compare(field.text, "a\t\t")
            verify(!field.activeFocus)
            verify(button.activeFocus)             // the next control: Send
            keyClick(Qt.Key_Backtab, Qt.ShiftModifier)
            verify(field.activeFocus)
            compare(field.text, "a\t\t")
        }
    }
}
