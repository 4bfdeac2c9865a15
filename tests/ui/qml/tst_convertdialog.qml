// ConvertDialog: opens with Convert disabled and the reason shown; the controls write the job's
// settings (head bits, device, fast, bits); a bad input path names the problem; Close closes.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 900
    height: 800

    Component { id: dialogComponent; ConvertDialog {} }

    function byName(item, name) {
        if (item.objectName === name) return item
        for (let i = 0; i < item.children.length; ++i) {
            const f = byName(item.children[i], name)
            if (f) return f
        }
        if (item.contentItem && item.contentItem !== item) {
            const f = byName(item.contentItem, name)
            if (f) return f
        }
        return null
    }
    function button(d, name) {
        for (let i = 0; i < d.footer.count; ++i)
            if (d.footer.itemAt(i).objectName === name) return d.footer.itemAt(i)
        return null
    }

    TestCase {
        name: "ConvertDialog"
        when: windowShown

        function openDialog() {
            const d = createTemporaryObject(dialogComponent, root, {})
            verify(d)
            d.open()
            tryCompare(d, "opened", true)
            return d
        }

        function test_startsDisabledWithTheReason() {
            const d = openDialog()
            compare(d.title, "Convert a model to EXL2")
            verify(!button(d, "convertButton").enabled)
            verify(!button(d, "cancelButton").enabled)
            verify(button(d, "closeButton").enabled)
            const reason = byName(d.contentItem, "settingsError")
            verify(reason.visible)
            verify(reason.text.indexOf("Choose the model") === 0, reason.text)
            verify(!byName(d.contentItem, "progressBar").visible)
        }

        function test_controlsWriteTheSettings() {
            const d = openDialog()
            const head = byName(d.contentItem, "headBitsBox")
            compare(head.currentText, "6")
            head.currentIndex = 5
            head.activated(5)
            compare(d.job.headBits, 8)
            const device = byName(d.contentItem, "deviceBox")
            compare(device.currentIndex, 0)
            device.activated(2)
            compare(d.job.device, "cpu")
            const fast = byName(d.contentItem, "fastBox")
            verify(!fast.checked)
            mouseClick(fast)
            verify(d.job.fast)
            d.job.bits = 4.25
            compare(byName(d.contentItem, "bitsSlider").valueText, "4.25")
        }

        function test_badInputNamesTheProblem() {
            const d = openDialog()
            const input = byName(d.contentItem, "inputField")
            input.text = "/nonexistent/model"
            input.editingFinished()
            compare(d.job.input, "/nonexistent/model")
            const reason = byName(d.contentItem, "settingsError")
            verify(reason.text.indexOf("does not exist") > 0, reason.text)
            verify(!button(d, "convertButton").enabled)
        }

        function test_closes() {
            const d = openDialog()
            mouseClick(button(d, "closeButton"))
            tryCompare(d, "visible", false)
        }
    }
}
