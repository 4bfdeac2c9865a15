// SettingsPage: the draft-token slider shows the models page's setting (ModelManager.draftTokens)
// and moving it changes that setting, which the chat's requests then draft with and the settings
// keep for the next start; a change made elsewhere (the Models page) moves the slider.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 900
    height: 2000

    Component { id: pageComponent; SettingsPage { width: 900; height: 2000; app: testApp } }

    TestCase {
        name: "SettingsPage"
        when: windowShown

        function init() { testApp.models.draftTokens = 0 }
        function make() {
            const page = createTemporaryObject(pageComponent, root, {})
            verify(page)
            waitForRendering(page)
            return page
        }
        function sliderOf(page) {
            const s = findChild(page, "draftTokensSlider")
            verify(s)
            return s
        }
        // LabeledSlider: its name and value texts are the labels of its first row, the slider
        // its second child.
        function nameText(s) { return s.children[0].children[0].text }
        function valueText(s) { return s.children[0].children[1].text }
        function handle(s) { return s.children[1] }

        function test_showsTheSetting() {
            const page = make()
            const s = sliderOf(page)
            compare(nameText(s), "Draft tokens")
            compare(s.value, 0)
            compare(valueText(s), "off")
            testApp.models.draftTokens = 5     // as from the Models page
            compare(testApp.settings.draftTokens, 5)
            compare(s.value, 5)
            compare(handle(s).value, 5)
            compare(valueText(s), "5 by n-gram lookup")   // the simulated models offer no draft model
        }

        function test_movingItChangesTheSetting() {
            const page = make()
            const s = sliderOf(page)
            const slider = handle(s)
            waitForItemPolished(s)
            compare(testHelper.appChatDraftTokens(), 0)
            mouseClick(slider, slider.width - 2, slider.height / 2)   // the right end: 8
            compare(testApp.models.draftTokens, 8)
            compare(testHelper.appChatDraftTokens(), 8)   // what the next request drafts
            compare(testApp.settings.draftTokens, 8)      // what the next start restores
            compare(valueText(s), "8 by n-gram lookup")
            mouseClick(slider, 2, slider.height / 2)                  // the left end: off
            compare(testApp.models.draftTokens, 0)
            compare(testHelper.appChatDraftTokens(), 0)
            compare(testApp.settings.draftTokens, 0)
            compare(valueText(s), "off")
            // Keys too: one step up.
            slider.forceActiveFocus()
            keyClick(Qt.Key_Right)
            compare(testApp.models.draftTokens, 1)
            compare(testApp.settings.draftTokens, 1)
        }
    }
}
