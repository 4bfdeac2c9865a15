// MessageBubble: the Markdown text rendered (no markup left), the streaming cursor, the reply's
// stats, and the actions: Copy puts the text on the clipboard, Edit opens the editor and "Send
// edited" branches the conversation in the ChatViewModel, Regenerate only under the last reply.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 800
    height: 600

    Component { id: bubbleComponent; MessageBubble { width: 760 } }
    Component { id: spyComponent; SignalSpy {} }

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
    function findAll(item, pred, out) {
        if (pred(item)) out.push(item)
        for (let i = 0; i < item.children.length; ++i) findAll(item.children[i], pred, out)
        if (item.contentItem && item.contentItem !== item) findAll(item.contentItem, pred, out)
        return out
    }

    TestCase {
        name: "MessageBubble"
        when: windowShown

        function make(props) {
            const p = Object.assign({ chat: testChat, index: 0, role: "assistant", text: "", streaming: false,
                                      stopped: false, stats: ({}), siblingIndex: 0, siblingCount: 1,
                                      rowCount: testChat.rowCount() }, props)
            const b = createTemporaryObject(bubbleComponent, root, p)
            verify(b)
            waitForRendering(b)
            return b
        }
        // The text the user sees: the text items of each Markdown segment and code block, as plain text.
        function shownText(bubble) {
            const body = root.find(bubble, i => i instanceof MessageText)
            verify(body)
            const items = root.findAll(body, i => i instanceof TextEdit && i.visible, [])
            return items.map(t => t.getText(0, t.length)).join("\n")
        }
        function button(bubble, text) {
            return root.find(bubble, i => i instanceof Button && i.text === text)
        }
        // Clicks a button once the layouts around it have placed it (it may have just appeared).
        function click(button) {
            verify(button && button.visible)
            for (let p = button.parent; p; p = p.parent)
                waitForItemPolished(p)
            mouseClick(button)
        }
        // Sends `text` in testChat and stops the (slow, simulated) reply once it has begun.
        function conversationWith(text) {
            testChat.openConversation(0)
            verify(testChat.send(text))
            tryCompare(testChat, "busy", true)
            tryVerify(() => testChat.messageText(1).length > 0, 5000)   // stopped after a token: a reply stays
            testChat.stop()
            tryCompare(testChat, "busy", false, 5000)
            compare(testChat.rowCount(), 2)
        }

        function test_rendersMarkdown() {
            const b = make({ text: "Hello **bold** world\n\n```\nint x = 1;\n```" })
            const shown = shownText(b)
            verify(shown.indexOf("Hello bold world") >= 0, shown)
            verify(shown.indexOf("int x = 1;") >= 0, shown)
            verify(shown.indexOf("**") < 0, "markup left in " + shown)
            verify(shown.indexOf("```") < 0, "markup left in " + shown)
            // A finished reply: no cursor, the actions and its stats are shown.
            verify(shown.indexOf("▍") < 0)
            verify(button(b, "Copy").visible)
        }

        // A fenced code block: its own background, a Copy button that copies the code alone, and
        // long lines that scroll sideways instead of being cut off.
        function test_codeBlockHasBackgroundCopyAndScroll() {
            testHelper.clearClipboard()
            const longLine = "x = " + "1 + ".repeat(80) + "1"
            const b = make({ text: "Run this:\n\n```python\n" + longLine + "\nprint(x)\n```\n\nDone." })
            const code = findChild(b, "codeText")
            verify(code)
            compare(code.text, longLine + "\nprint(x)")
            const view = findChild(b, "codeView")
            verify(view.contentWidth > view.width, "long line fits: " + view.contentWidth + " " + view.width)
            verify(view.width <= b.maxTextWidth + 1)
            verify(!Qt.colorEqual(view.parent.color, "transparent"))   // a background of its own
            view.contentX = view.contentWidth - view.width   // the end of the line can be reached
            compare(view.contentX, view.contentWidth - view.width)
            const copy = findChild(b, "copyCodeButton")
            click(copy)
            compare(testHelper.clipboardText(), longLine + "\nprint(x)")
            verify(shownText(b).indexOf("Done.") >= 0)
            verify(shownText(b).indexOf("```") < 0)
        }

        function test_stopReasonsAreShown() {
            const limit = make({ text: "Cut", stats: { generatedTokens: 1024, timeToFirstTokenMs: 1, prefillTokensPerSecond: 1,
                                                       decodeTokensPerSecond: 1, stopReason: "length" } })
            verify(root.find(limit, i => i instanceof ReplyStats).text.indexOf("token limit") >= 0)
            const full = make({ text: "Cut", stats: { generatedTokens: 10, timeToFirstTokenMs: 1, prefillTokensPerSecond: 1,
                                                      decodeTokensPerSecond: 1, stopReason: "context" } })
            verify(root.find(full, i => i instanceof ReplyStats).text.indexOf("context is full") >= 0)
        }

        function test_branchSwitcherStepsBetweenReplies() {
            conversationWith("Pick a number")
            const firstReply = testChat.messageText(1)
            verify(testChat.regenerate())
            tryCompare(testChat, "busy", true)
            // A longer text than the first: the two replies differ.
            tryVerify(() => testChat.messageText(1).length > firstReply.length + 3, 5000)
            testChat.stop()
            tryCompare(testChat, "busy", false, 5000)
            const b = make({ index: 1, text: testChat.messageText(1), siblingIndex: 1, siblingCount: 2 })
            const label = findChild(b, "branchLabel")
            verify(label.visible)
            compare(label.text, "2/2")
            verify(!findChild(b, "nextBranch").enabled)
            const previous = findChild(b, "previousBranch")
            verify(previous.enabled)
            previous.forceActiveFocus()
            verify(testChat.messageText(1) !== firstReply)
            keyClick(Qt.Key_Space)               // the keyboard steps too
            compare(testChat.messageText(1), firstReply)
            const single = make({ index: 1, text: "Only one" })
            verify(!findChild(single, "branchSwitcher").visible)
        }

        function test_editorKeys() {
            conversationWith("Original question")
            const b = make({ role: "user", index: 0, text: testChat.messageText(0) })
            click(button(b, "Edit"))
            const editor = findChild(b, "editor")
            tryCompare(editor, "activeFocus", true)
            keyClick(Qt.Key_Escape)               // Escape cancels
            verify(!b.editing)
            click(button(b, "Edit"))
            tryCompare(editor, "activeFocus", true)
            editor.cursorPosition = editor.length
            keyClick(Qt.Key_Tab, Qt.ControlModifier)   // Ctrl+Tab inserts a tab
            compare(editor.text, "Original question\t")
            keyClick(Qt.Key_Return)               // Enter: a new line, nothing sent
            compare(editor.text, "Original question\t\n")
            verify(b.editing)
            keyClick(Qt.Key_Tab)                  // Tab leaves the box
            verify(!editor.activeFocus)
            compare(editor.text, "Original question\t\n")
            editor.forceActiveFocus()
            editor.text = "Edited question"
            keyClick(Qt.Key_Return, Qt.ControlModifier)   // Ctrl+Enter sends
            verify(!b.editing)
            compare(testChat.messageText(0), "Edited question")
            tryCompare(testChat, "busy", true)
            testChat.stop()
            tryCompare(testChat, "busy", false, 5000)
        }

        function test_streamingShowsCursorAndNoActions() {
            const b = make({ text: "Partial answer", streaming: true })
            verify(shownText(b).endsWith("▍"), shownText(b))
            verify(!button(b, "Copy").visible)
            verify(!root.find(b, i => i instanceof ReplyStats).visible)
            b.streaming = false
            verify(!shownText(b).endsWith("▍"))
            verify(button(b, "Copy").visible)
        }

        function test_replyStats() {
            const stats = { generatedTokens: 12, timeToFirstTokenMs: 35.4, prefillTokensPerSecond: 900.2, decodeTokensPerSecond: 45.04 }
            const reply = make({ text: "Answer", stats: stats })
            const shown = root.find(reply, i => i instanceof ReplyStats)
            verify(shown.visible)
            compare(shown.text, "12 token(s) · first token 35 ms · prefill 900 tok/s · decode 45.0 tok/s")
            const user = make({ role: "user", text: "Question", stats: stats })
            verify(!root.find(user, i => i instanceof ReplyStats).visible)
        }

        function test_copyPutsTheTextOnTheClipboard() {
            testHelper.clearClipboard()
            const b = make({ text: "Copy **me**, please" })
            click(button(b, "Copy"))
            compare(testHelper.clipboardText(), "Copy **me**, please")
        }

        function test_onlyUserMessagesAreEditable() {
            const reply = make({ text: "Answer" })
            verify(!button(reply, "Edit").visible)
            const user = make({ role: "user", text: "Question" })
            verify(button(user, "Edit").visible)
            verify(!button(user, "Send edited").visible)
        }

        function test_editCancel() {
            const b = make({ role: "user", text: "Question" })
            click(button(b, "Edit"))
            verify(b.editing)
            const editor = root.find(b, i => i instanceof TextArea)
            verify(editor.visible)
            compare(editor.text, "Question")
            verify(button(b, "Send edited").visible)
            verify(!button(b, "Edit").visible)
            click(button(b, "Cancel"))
            verify(!b.editing)
            verify(!editor.visible)
            compare(shownText(b), "Question")
        }

        function test_sendEditedBranchesTheConversation() {
            conversationWith("First question")
            const b = make({ role: "user", index: 0, text: testChat.messageText(0) })
            click(button(b, "Edit"))
            const editor = root.find(b, i => i instanceof TextArea)
            editor.text = "Second question"
            click(button(b, "Send edited"))
            verify(!b.editing)
            compare(testChat.messageText(0), "Second question")
            tryCompare(testChat, "busy", true)   // a new reply to the edited message
            testChat.stop()
            tryCompare(testChat, "busy", false, 5000)
        }

        function test_regenerateOnlyUnderTheLastReply() {
            conversationWith("Tell me something")
            verify(testChat.canRegenerate)
            const first = make({ role: "user", index: 0, text: testChat.messageText(0) })
            verify(!button(first, "Regenerate").visible)
            const earlier = make({ index: 0, text: "An earlier reply" })   // a reply, but not the last row
            verify(!button(earlier, "Regenerate").visible)
            const last = make({ index: 1, text: testChat.messageText(1) })
            const regenerate = button(last, "Regenerate")
            verify(regenerate.visible)
            click(regenerate)
            tryCompare(testChat, "busy", true)
            compare(testChat.rowCount(), 2)       // the earlier reply becomes a sibling, not a row
            testChat.stop()
            tryCompare(testChat, "busy", false, 5000)
        }
    }
}
