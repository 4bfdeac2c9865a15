// DraftSettings: the draft model picker offers "none (n-gram lookup)" and the compatible models it
// is given, reports the choice as an index into them, and the draft-token slider and the line
// under it say whether drafts come from n-gram lookup or from the draft model.
import QtQuick
import QtTest
import ExlStudio

Item {
    id: root
    width: 800
    height: 300

    Component { id: settingsComponent; DraftSettings { width: 600 } }
    Component { id: spyComponent; SignalSpy {} }

    TestCase {
        name: "DraftSettings"
        when: windowShown

        function valueLabel(s) {
            // LabeledSlider: its value text is the second label of its first row.
            return findChild(s, "draftTokensSlider").children[0].children[1].text
        }

        function test_noneMeansNgram() {
            const s = createTemporaryObject(settingsComponent, root, { draftModelNames: ["ref-xs-4.0bpw"], draftTokens: 0 })
            const picker = findChild(s, "draftPicker")
            compare(picker.count, 2)
            compare(picker.textAt(0), "None (n-gram lookup)")
            compare(picker.textAt(1), "ref-xs-4.0bpw")
            compare(picker.currentIndex, 0)
            verify(s.ngram)
            compare(valueLabel(s), "off")
            compare(findChild(s, "draftNote").text, "Speculative decoding is off.")
            s.draftTokens = 3
            compare(valueLabel(s), "3 by n-gram lookup")
            compare(findChild(s, "draftNote").text,
                    "No draft model: tokens are guessed by n-gram lookup in the conversation (no extra memory).")
        }

        function test_noCompatibleModel() {
            const s = createTemporaryObject(settingsComponent, root, { draftModelNames: [], draftTokens: 2 })
            compare(findChild(s, "draftPicker").count, 1)
            verify(findChild(s, "draftNote").text.startsWith("No compatible draft model found"))
        }

        function test_draftModelChosen() {
            const s = createTemporaryObject(settingsComponent, root,
                                            { draftModelNames: ["ref-xs-4.0bpw", "ref-s-3.0bpw"], draftModelIndex: 0, draftTokens: 4 })
            const picker = findChild(s, "draftPicker")
            compare(picker.currentIndex, 1)
            verify(!s.ngram)
            compare(valueLabel(s), "4 by the draft model")
            compare(findChild(s, "draftNote").text, "ref-xs-4.0bpw drafts tokens; the model checks them in one pass.")
            s.draftTokens = 0
            verify(findChild(s, "draftNote").text.indexOf("still loaded") >= 0)

            // Picking an entry reports its index among the models (-1: none).
            const chosen = createTemporaryObject(spyComponent, root, { target: s, signalName: "draftModelChosen" })
            picker.activated(2)
            compare(chosen.count, 1)
            compare(chosen.signalArguments[0][0], 1)
            picker.activated(0)
            compare(chosen.signalArguments[1][0], -1)
        }

        function test_pickerDisabledForRemoteModels() {
            const s = createTemporaryObject(settingsComponent, root, { draftModelNames: ["ref-xs-4.0bpw"], pickerEnabled: false })
            verify(!findChild(s, "draftPicker").enabled)
            verify(findChild(s, "draftTokensSlider").enabled)
        }
    }
}
