// ConversationSidebar: the stored conversations newest first with the open one highlighted,
// clicks that ask to open a conversation (0: a new one), the search that filters the list, and
// rename and delete from a row's menu, which reach the chat store.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 400
    height: 600

    Component { id: sidebarComponent; ConversationSidebar { width: 300; height: 500; conversations: testConversations } }
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

    TestCase {
        name: "ConversationSidebar"
        when: windowShown

        property var firstId: 0
        property var secondId: 0

        function init() {
            testConversations.search = ""
            for (let i = testConversations.count - 1; i >= 0; --i)
                testConversations.remove(testConversations.data(testConversations.index(i, 0), Qt.UserRole + 1))
            compare(testConversations.count, 0)
        }
        function make() {
            const s = createTemporaryObject(sidebarComponent, root, {})
            verify(s)
            waitForRendering(s)
            return s
        }
        function addTwo() {
            firstId = testHelper.addConversation("Rust lifetimes")
            secondId = testHelper.addConversation("Pasta recipe")
            verify(firstId > 0 && secondId > 0 && firstId !== secondId)
        }
        // The rows shown, once the list has laid out its delegates.
        function rowTexts(list) {
            waitForItemPolished(list)
            const out = []
            for (let i = 0; i < list.count; ++i) out.push(list.itemAtIndex(i).text)
            return out
        }

        function test_emptyList() {
            const s = make()
            const list = findChild(s, "conversationList")
            compare(list.count, 0)
            const note = findChild(s, "emptyNote")
            verify(note.visible)
            compare(note.text, "No chats yet.")
        }

        function test_listsNewestFirstAndHighlightsTheOpenOne() {
            addTwo()
            const s = make()
            s.currentId = firstId
            const list = findChild(s, "conversationList")
            compare(list.count, 2)
            verify(!findChild(s, "emptyNote").visible)
            compare(rowTexts(list), ["Pasta recipe", "Rust lifetimes"])
            verify(!list.itemAtIndex(0).highlighted)
            verify(list.itemAtIndex(1).highlighted)
            s.currentId = secondId
            verify(list.itemAtIndex(0).highlighted)
            verify(!list.itemAtIndex(1).highlighted)
        }

        function test_clicksAskToOpen() {
            addTwo()
            const s = make()
            const open = createTemporaryObject(spyComponent, root, { target: s, signalName: "openRequested" })
            const list = findChild(s, "conversationList")
            mouseClick(list.itemAtIndex(1))
            compare(open.count, 1)
            compare(open.signalArguments[0][0], firstId)
            mouseClick(root.find(s, i => i instanceof Button && i.text === "New chat"))
            compare(open.count, 2)
            compare(open.signalArguments[1][0], 0)
        }

        function test_searchFilters() {
            addTwo()
            const s = make()
            const list = findChild(s, "conversationList")
            const search = findChild(s, "searchField")
            search.forceActiveFocus()
            keyClick(Qt.Key_P)
            keyClick(Qt.Key_A)
            keyClick(Qt.Key_S)
            compare(testConversations.search, "pas")
            compare(rowTexts(list), ["Pasta recipe"])
            search.text = "nothing like this"
            compare(list.count, 0)
            compare(findChild(s, "emptyNote").text, "No chat matches.")
            search.text = ""
            compare(list.count, 2)
        }

        function openMenuOf(s, row) {
            const list = findChild(s, "conversationList")
            const item = list.itemAtIndex(row)
            mouseClick(item, item.width / 2, item.height / 2, Qt.RightButton)
            const menu = findChild(item, "conversationMenu")
            verify(menu)
            tryCompare(menu, "opened", true)
            return menu
        }

        function test_renameFromTheMenu() {
            addTwo()
            const s = make()
            const menu = openMenuOf(s, 1)
            compare(menu.itemAt(0).text, "Rename…")
            mouseClick(menu.itemAt(0))
            const dialog = findChild(s, "renameDialog")
            tryCompare(dialog, "opened", true)
            const field = findChild(s, "titleField")
            compare(field.text, "Rust lifetimes")
            field.text = "  Borrow   checker "
            dialog.accept()
            tryCompare(dialog, "visible", false)
            compare(testHelper.storedTitle(firstId), "Borrow checker")
            compare(rowTexts(findChild(s, "conversationList")), ["Pasta recipe", "Borrow checker"])
        }

        function test_deleteFromTheMenuAsksFirst() {
            addTwo()
            const s = make()
            const list = findChild(s, "conversationList")
            let menu = openMenuOf(s, 0)
            compare(menu.itemAt(1).text, "Delete…")
            mouseClick(menu.itemAt(1))
            const dialog = findChild(s, "deleteDialog")
            tryCompare(dialog, "opened", true)
            // Cancel (the focused choice, Enter) keeps the chat.
            keyClick(Qt.Key_Return)
            tryCompare(dialog, "visible", false)
            compare(list.count, 2)
            compare(testHelper.storedTitle(secondId), "Pasta recipe")
            menu = openMenuOf(s, 0)
            mouseClick(menu.itemAt(1))
            tryCompare(dialog, "opened", true)
            mouseClick(findChild(s, "confirmDelete"))
            tryCompare(dialog, "visible", false)
            compare(list.count, 1)
            compare(rowTexts(list), ["Rust lifetimes"])
            compare(testHelper.storedTitle(secondId), "")
            compare(testHelper.storedTitle(firstId), "Rust lifetimes")
        }
    }
}
